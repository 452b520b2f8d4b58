"""WARC in (`episteme ingest warc`) and out (`episteme export warc`), checked with warcio itself."""

from __future__ import annotations

import base64
import gzip
import io
import json
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from episteme_core.stages.snapshots import SnapshotWriter, make_identity, read_catalog
from episteme_core.store.home import Home
from episteme_core.testing import invoke, validate

from .conftest import TestServer, snapshot, tree, write_manifest


def _response(writer: WARCWriter, url: str, body: bytes, status: str = "200 OK",
              headers: list[tuple[str, str]] | None = None, date: str = "2023-05-06T07:08:09Z") -> None:
    http = StatusAndHeaders(status, headers or [("Content-Type", "text/html; charset=utf-8")],
                            protocol="HTTP/1.1")
    writer.write_record(writer.create_warc_record(url, "response", payload=io.BytesIO(body),
                                                  length=len(body), http_headers=http,
                                                  warc_headers_dict={"WARC-Date": date}))


def _crawl(path: Path) -> None:
    with open(path, "wb") as handle:
        writer = WARCWriter(handle, gzip=True)
        writer.write_record(writer.create_warcinfo_record("crawl.warc.gz", {"software": "test"}))
        request = StatusAndHeaders("GET / HTTP/1.1", [("Host", "example.org")], is_http_request=True)
        writer.write_record(writer.create_warc_record("https://example.org/", "request",
                                                      http_headers=request))
        _response(writer, "https://example.org/", b"<p>home</p>")
        _response(writer, "https://example.org/old", b"", "301 Moved Permanently",
                  [("Location", "https://example.org/new")])
        zipped = gzip.compress(b"plain text body")
        _response(writer, "https://example.org/z.txt", zipped, headers=[
            ("Content-Type", "text/plain"), ("Content-Encoding", "gzip"),
            ("Content-Length", str(len(zipped)))], date="2023-05-06T07:08:10.123456Z")
        writer.write_record(writer.create_warc_record("https://example.org/", "metadata",
                                                      payload=io.BytesIO(b"a: b\r\n"), length=6))


def test_import_responses_and_count_the_rest(home: Path, tmp_path: Path) -> None:
    warc = tmp_path / "crawl.warc.gz"
    _crawl(warc)
    result = invoke("ingest", "warc", str(warc), "--json", "--home", str(home))
    assert result.exit_code == 0, result.stderr
    data = result.envelope["data"]
    validate(data, "snapshot-result")
    assert data["records"] == 6
    assert data["skipped"] == {"metadata records": 1, "request records": 1,
                               "responses with HTTP status 3xx": 1, "warcinfo records": 1}
    assert data["counts"] == {"captured": 2, "unchanged": 0, "failed": 0}
    catalog = read_catalog(Home(home))
    assert catalog.sources() == ["https://example.org/", "https://example.org/z.txt"]
    home_page = catalog.latest("https://example.org/")
    assert (home_page.capture_kind, home_page.observed_at, home_page.charset) == (
        "warc", "2023-05-06T07:08:09Z", "utf-8")
    text = catalog.latest("https://example.org/z.txt")
    assert catalog.content(text) == b"plain text body"  # Content-Encoding decoded
    assert text.observed_at == "2023-05-06T07:08:10Z"

    before = tree(home)
    again = invoke("ingest", "warc", str(warc), "--json", "--home", str(home))
    assert again.envelope["data"]["counts"]["unchanged"] == 2
    assert tree(home) == before


def test_payload_over_max_bytes_fails_that_record(home: Path, tmp_path: Path) -> None:
    warc = tmp_path / "big.warc.gz"
    with open(warc, "wb") as handle:
        writer = WARCWriter(handle, gzip=True)
        _response(writer, "https://example.org/big", b"b" * 101)
        _response(writer, "https://example.org/small", b"s" * 100)
    result = invoke("ingest", "warc", str(warc), "--json", "--home", str(home), "--max-bytes", "100")
    assert result.exit_code == 0
    statuses = {s["source"]: (s["status"], s.get("code")) for s in result.envelope["data"]["sources"]}
    assert statuses == {"https://example.org/big": ("failed", "LIMIT_EXCEEDED"),
                        "https://example.org/small": ("captured", None)}


def test_corrupt_warc_is_refused_and_changes_nothing(home: Path, tmp_path: Path) -> None:
    good = tmp_path / "good.warc.gz"
    _crawl(good)
    assert invoke("ingest", "warc", str(good), "--home", str(home)).exit_code == 0
    before = tree(home)
    bad = tmp_path / "bad.warc.gz"
    bad.write_bytes(good.read_bytes()[:200] + b"garbage" * 50)
    result = invoke("ingest", "warc", str(bad), "--json", "--home", str(home))
    assert result.exit_code == 3 and result.envelope["error"]["code"] == "INVALID_INPUT"
    assert tree(home) == before
    missing = invoke("ingest", "warc", str(tmp_path / "nope.warc"), "--json", "--home", str(home))
    assert missing.exit_code == 3
    data = good.read_bytes()
    for cut in (100, len(data) // 2, len(data) - 10):  # truncated anywhere: refused, never half-read
        bad.write_bytes(data[:cut])
        result = invoke("ingest", "warc", str(bad), "--json", "--home", str(home))
        assert result.exit_code == 3, cut
        assert "truncated" in result.envelope["error"]["message"]
    assert tree(home) == before


def test_export_is_valid_warc_and_reimports_to_the_same_ids(
    server: TestServer, home: Path, tmp_path: Path
) -> None:
    bodies = iter([b"<p>first</p>", b"<p>second</p>"])
    url = server.route("/page", lambda h: h.reply(200, next(bodies), {"Content-Type":
                                                                       "text/html; charset=utf-8",
                                                                       "ETag": '"e"'}))
    manifest = write_manifest(tmp_path, [{"url": url + "#part", "family": "generic"}])
    assert snapshot(home, manifest).exit_code == 0
    assert snapshot(home, manifest).exit_code == 0  # a second snapshot in the history
    (tmp_path / "local.pdf").write_bytes(b"%PDF-1.4 not really")
    (tmp_path / "map.json").write_text(json.dumps([{"sourceUrl": "https://example.org/doc.pdf",
                                                    "localPath": "local.pdf"}]))
    assert invoke("manual-ingest", "--home", str(home), "--map", str(tmp_path / "map.json")).exit_code == 0
    with SnapshotWriter(Home(home), "test") as writer:  # a personal record, as the books source writes
        data = b"A paragraph.\n\nAnother."
        writer.observe(make_identity("books", "book:shelf/novel", data, content_type="text/plain",
                                     charset="utf-8"), data)
        writer.commit()

    out = tmp_path / "out.warc.gz"
    result = invoke("export", "warc", "--out", str(out), "--json", "--home", str(home))
    assert result.exit_code == 0, result.stderr
    assert result.envelope["data"]["responses"] == 3 and result.envelope["data"]["resources"] == 1

    with open(out, "rb") as handle:
        records = list(_read_all(handle))
    assert {r["version"] for r in records} == {"WARC/1.1"}
    responses = [r for r in records if r["type"] == "response"]
    assert all(r["payloadDigest"] for r in responses)
    assert {r["uri"] for r in responses} == {url, "https://example.org/doc.pdf"}

    again = tmp_path / "again.warc.gz"
    assert invoke("export", "warc", "--out", str(again), "--home", str(home)).exit_code == 0
    assert again.read_bytes() == out.read_bytes()  # byte-deterministic

    original = read_catalog(Home(home))
    fresh = tmp_path / "fresh"
    imported = invoke("ingest", "warc", str(out), "--json", "--home", str(fresh))
    assert imported.exit_code == 0, imported.stderr
    copy = read_catalog(Home(fresh))
    assert copy.sources() == original.sources()
    assert sorted(copy.snapshot_ids()) == sorted(original.snapshot_ids())
    for source in original.sources():
        assert copy.latest(source).id == original.latest(source).id
        assert copy.options(source) == original.options(source)
        assert copy.content(copy.latest(source)) == original.content(original.latest(source))


def _read_all(handle: io.BufferedReader) -> list[dict[str, str | None]]:
    found = []
    for record in ArchiveIterator(handle, check_digests="raise"):
        record.content_stream().read()
        found.append({
            "type": record.rec_type, "version": record.rec_headers.protocol,
            "uri": record.rec_headers.get_header("WARC-Target-URI"),
            "payloadDigest": record.rec_headers.get_header("WARC-Payload-Digest"),
        })
    return found


def test_export_to_stdout_needs_json(home: Path, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a")
    (tmp_path / "map.json").write_text(json.dumps([{"sourceUrl": "https://example.org/a",
                                                    "localPath": "a.txt"}]))
    assert invoke("manual-ingest", "--home", str(home), "--map", str(tmp_path / "map.json")).exit_code == 0
    refused = invoke("export", "warc", "--out", "-", "--home", str(home))
    assert refused.exit_code == 2
    result = invoke("export", "warc", "--out", "-", "--json", "--home", str(home))
    assert result.exit_code == 0
    artifact = result.envelope["data"]["artifact"]
    raw = base64.b64decode(artifact["data"])
    assert artifact["mediaType"] == "application/warc"
    assert [r["type"] for r in _read_all(io.BufferedReader(io.BytesIO(raw)))] == ["warcinfo", "response"]


def test_large_compressible_snapshot_round_trips(home: Path, tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_bytes(b"0123456789" * 100_000)
    (tmp_path / "map.json").write_text(json.dumps([{"sourceUrl": "https://example.org/big",
                                                    "localPath": "big.txt"}]))
    assert invoke("manual-ingest", "--home", str(home), "--map", str(tmp_path / "map.json")).exit_code == 0
    out = tmp_path / "big.warc.gz"
    assert invoke("export", "warc", "--out", str(out), "--home", str(home)).exit_code == 0
    fresh = tmp_path / "fresh"
    result = invoke("ingest", "warc", str(out), "--json", "--home", str(fresh))
    assert result.exit_code == 0, result.stderr
    assert read_catalog(Home(fresh)).snapshot_ids() == read_catalog(Home(home)).snapshot_ids()
