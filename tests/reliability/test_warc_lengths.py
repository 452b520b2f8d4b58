"""A WARC record whose Content-Length is past what a read can take (2^63 - 1 on 64 bits) is
INVALID_INPUT naming the record and its offset, never INTERNAL_ERROR; just under the bound it is a
truncated record; either way nothing stored changes."""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

import pytest

from episteme_core.testing import invoke, validate

HTTP = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"


def _record(url: str, body: bytes, length: int | str | None = None) -> bytes:
    block = HTTP + body
    record_id = b"<urn:uuid:" + url[-1:].encode() * 8 + b">"
    return (b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: " + url.encode() + b"\r\n"
            b"WARC-Date: 2024-01-02T03:04:05Z\r\nWARC-Record-ID: " + record_id + b"\r\n"
            b"Content-Type: application/http; msgtype=response\r\n"
            b"Content-Length: " + str(len(block) if length is None else length).encode() + b"\r\n\r\n"
            + block + b"\r\n\r\n")


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _ingest(home: Path, path: Path) -> dict:
    result = invoke("--json", "--home", str(home), "ingest", "warc", str(path))
    validate(result.envelope, "cli-envelope")
    return result.envelope  # type: ignore[no-any-return]


@pytest.fixture
def stored(tmp_path: Path, home: Path) -> Path:
    """A home holding one imported page."""
    first = tmp_path / "first.warc"
    first.write_bytes(_record("http://example.org/a", b"<p>kept</p>"))
    assert _ingest(home, first)["ok"]
    return home


@pytest.mark.parametrize("length", [sys.maxsize + 1, 99999999999999999999999, 10**400],
                         ids=["2^63", "10^23-1", "10^400"])
@pytest.mark.parametrize("zipped", [False, True])
def test_a_length_past_the_bound_names_the_record_and_its_offset(tmp_path: Path, stored: Path,
                                                                 length: int, zipped: bool) -> None:
    good = _record("http://example.org/b", b"<p>new</p>")
    bad = _record("http://example.org/c", b"<p>hostile</p>", length)
    path = tmp_path / "hostile.warc"
    path.write_bytes(gzip.compress(good) + gzip.compress(bad) if zipped else good + bad)
    offset = len(gzip.compress(good)) if zipped else len(good)
    before = _tree(stored)
    envelope = _ingest(stored, path)
    error = envelope["error"]
    assert error["code"] == "INVALID_INPUT", error
    assert error["details"] == {"path": str(path), "record": 1, "offset": offset}
    assert f"record 1 (at byte {offset})" in error["message"] and "Content-Length" in error["message"]
    assert _tree(stored) == before


def test_just_under_the_bound_is_a_truncated_record(tmp_path: Path, stored: Path) -> None:
    path = tmp_path / "long.warc"
    path.write_bytes(_record("http://example.org/b", b"<p>new</p>")
                     + _record("http://example.org/c", b"<p>short</p>", sys.maxsize))
    before = _tree(stored)
    error = _ingest(stored, path)["error"]
    assert error["code"] == "INVALID_INPUT" and "record 1 is truncated" in error["message"]
    assert _tree(stored) == before
