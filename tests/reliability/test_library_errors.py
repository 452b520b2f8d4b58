"""No library error escapes as INTERNAL_ERROR: huge integers, odd hosts, long URLs, files that are
not what a command reads are INVALID_INPUT with an envelope, and nothing stored changes."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from episteme_core.capture.urls import MAX_URL_CHARS
from episteme_core.records.canonical import MAX_INT_DIGITS
from episteme_core.testing import invoke, validate


def _fails_cleanly(result, code: str = "INVALID_INPUT") -> dict:
    assert result.exit_code == {"INVALID_INPUT": 3, "LIMIT_EXCEEDED": 5}[code], result.stderr
    envelope = result.envelope
    validate(envelope, "cli-envelope")
    assert envelope["error"]["code"] == code
    return envelope["error"]


def _number(digits: int) -> str:
    return "9" * digits


@pytest.mark.parametrize("digits", [MAX_INT_DIGITS, MAX_INT_DIGITS + 1, 1_000_000])
def test_a_huge_integer_in_a_manifest(tmp_path: Path, home: Path, digits: int) -> None:
    manifest = tmp_path / "m.json"
    manifest.write_text(f'[{{"url": "https://example.org/", "family": {_number(digits)}}}]')
    error = _fails_cleanly(invoke("--json", "--home", str(home), "snapshot", "--manifest", str(manifest)))
    if digits <= MAX_INT_DIGITS:  # parsed: refused because a family is a string
        assert "family" in error["message"]
    else:
        assert f"an integer of {digits} digits" in error["message"]
    assert not home.exists() or not any(home.rglob("index.json"))


def test_a_huge_integer_in_a_map(tmp_path: Path, home: Path) -> None:
    map_path = tmp_path / "map.json"
    map_path.write_text(f'[{{"sourceUrl": "https://example.org/", "localPath": {_number(5000)}}}]')
    error = _fails_cleanly(invoke("--json", "--home", str(home), "manual-ingest", "--map", str(map_path)))
    assert "5000 digits" in error["message"]


def test_a_huge_integer_in_config_json_and_verify(home: Path) -> None:
    home.mkdir()
    (home / "config.json").write_text(f'{{"claude_projects": {_number(5000)}}}')
    error = _fails_cleanly(invoke("--json", "--home", str(home), "ingest", "claude"))
    assert "config.json" in error["message"] and "5000 digits" in error["message"]
    verify = _fails_cleanly(invoke("--json", "--home", str(home), "verify"))
    assert [p["code"] for p in verify["details"]["problems"]] == ["CONFIG_INVALID"]


def test_a_number_too_large_for_a_double_is_refused(tmp_path: Path, home: Path) -> None:
    manifest = tmp_path / "m.json"
    manifest.write_text('[{"url": "https://example.org/", "family": 1e999}]')
    error = _fails_cleanly(invoke("--json", "--home", str(home), "snapshot", "--manifest", str(manifest)))
    assert "too large for a double" in error["message"]


@pytest.mark.parametrize("host", ["0177.0.0.1", "127.1", "2130706433", "0x7f.0.0.1", "1.2.3.999",
                                  "1.2.3.4.5", "a..b", "xn--", "xn--a.com", "\u200b.example"])
def test_odd_hosts_are_refused_before_anything_is_sent(tmp_path: Path, home: Path, host: str) -> None:
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps([{"url": f"http://{host}/"}]))
    error = _fails_cleanly(invoke("--json", "--home", str(home), "snapshot", "--manifest", str(manifest),
                                  "--allow-localhost"))
    assert error["details"]["entry"] == 0 and error["details"]["field"] == "url"


@pytest.mark.parametrize("length", [MAX_URL_CHARS, MAX_URL_CHARS + 1, 1_000_000])
def test_a_long_url_is_refused_past_the_bound(tmp_path: Path, home: Path, length: int) -> None:
    base = "http://127.0.0.1:9/"
    url = base + "a" * (length - len(base))
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps([{"url": url}]))
    result = invoke("--json", "--home", str(home), "snapshot", "--manifest", str(manifest),
                    "--allow-localhost", "--retries", "0", "--timeout", "2000")
    if length <= MAX_URL_CHARS:  # accepted: fails only because nothing listens on port 9
        assert result.exit_code == 4, result.stderr
        assert result.envelope["error"]["code"] == "SOURCE_UNAVAILABLE"
    else:
        error = _fails_cleanly(result)
        assert f"more than {MAX_URL_CHARS}" in error["message"]


@pytest.mark.parametrize("content", [b"", b"hello\n", b"\n\nhello\n", b"WARC/1.0\r\n\r\n",
                                     gzip.compress(b"hello\n"), b"\x1f\x8b\x08garbage"])
def test_ingest_warc_refuses_a_file_that_is_not_warc(tmp_path: Path, home: Path, content: bytes) -> None:
    path = tmp_path / "not.warc"
    path.write_bytes(content)
    error = _fails_cleanly(invoke("--json", "--home", str(home), "ingest", "warc", str(path)))
    assert str(path) in error["message"]
    assert not (home / "snapshots" / "index.json").exists()
    assert not (home / "blobs").exists() or not any(p.is_file() for p in (home / "blobs").rglob("*"))
