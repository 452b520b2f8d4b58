"""`episteme snapshot` against a real HTTP server on 127.0.0.1: every behaviour of the fetcher."""

from __future__ import annotations

import gzip
import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from episteme_core.records.convert import unstructure
from episteme_core.stages.snapshots import read_catalog
from episteme_core.store.home import Home
from episteme_core.store.log import Log
from episteme_core.testing import invoke, validate

from .conftest import (
    RequestHandler,
    TestServer,
    slow_body,
    snapshot,
    tree,
    write_manifest,
)

HTML = {"Content-Type": "text/html; charset=utf-8"}


def _ok(server: TestServer, home: Path, tmp_path: Path) -> str:
    """Capture one healthy source first, so failure tests can prove the commit is untouched."""
    url = server.static("/healthy", b"<p>healthy</p>", HTML)
    result = snapshot(home, write_manifest(tmp_path, [{"url": url}], "healthy.json"))
    assert result.exit_code == 0, result.stderr
    return url


def test_200_is_captured_with_metadata(server: TestServer, home: Path, tmp_path: Path) -> None:
    url = server.static("/doc", b"<p>hello</p>", {**HTML, "ETag": '"v1"', "Last-Modified":
                                                  "Mon, 01 Jan 2024 00:00:00 GMT"})
    result = snapshot(home, write_manifest(tmp_path, [{"url": url + "#intro", "family": "generic",
                                                        "authority": "normative", "extractor": "html"}]))
    assert result.exit_code == 0, result.stderr
    data = result.envelope["data"]
    validate(result.envelope, "cli-envelope")
    validate(data, "snapshot-result")
    [source] = data["sources"]
    assert source["status"] == "captured" and source["source"] == url and source["httpStatus"] == 200
    assert data["committed"] is True
    catalog = read_catalog(Home(home))
    record = catalog.latest(url)
    validate(unstructure(record), "snapshot")
    assert catalog.content(record) == b"<p>hello</p>"
    assert (record.content_type, record.charset, record.etag) == ("text/html", "utf-8", '"v1"')
    assert record.last_modified == "Mon, 01 Jan 2024 00:00:00 GMT"
    assert catalog.options(url) == {"family": "generic", "authority": "normative", "extractor": "html",
                                    "fragment": "intro"}
    [line] = list(Log(Home(home).log_path).entries())
    assert (line.source, line.record_id, line.status, line.snapshot_id) == ("http", url, "captured",
                                                                             record.id)


def test_identical_bytes_again_are_unchanged_and_write_nothing(
    server: TestServer, home: Path, tmp_path: Path
) -> None:
    url = server.static("/same", b"same bytes", {"Content-Type": "text/plain"})
    manifest = write_manifest(tmp_path, [{"url": url}])
    assert snapshot(home, manifest).exit_code == 0
    before = tree(home)
    result = snapshot(home, manifest)
    assert result.exit_code == 0
    assert result.envelope["data"]["sources"][0]["status"] == "unchanged"
    assert result.envelope["data"]["committed"] is False
    assert tree(home) == before


@pytest.mark.parametrize("validator", ["etag", "last-modified"])
def test_304_keeps_the_recorded_snapshot(
    server: TestServer, home: Path, tmp_path: Path, validator: str
) -> None:
    stamp = "Tue, 02 Jan 2024 00:00:00 GMT"
    headers = {"ETag": '"abc"'} if validator == "etag" else {"Last-Modified": stamp}

    def handler(h: RequestHandler) -> None:
        if h.headers.get("If-None-Match") == '"abc"' or h.headers.get("If-Modified-Since") == stamp:
            h.reply(304, b"", headers)
        else:
            h.reply(200, b"body v1", {"Content-Type": "text/plain", **headers})

    url = server.route("/cond", handler)
    manifest = write_manifest(tmp_path, [{"url": url}])
    first = snapshot(home, manifest)
    before = tree(home)
    second = snapshot(home, manifest)
    assert second.exit_code == 0, second.stderr
    [source] = second.envelope["data"]["sources"]
    assert source["status"] == "unchanged" and source["httpStatus"] == 304
    assert source["snapshotId"] == first.envelope["data"]["sources"][0]["snapshotId"]
    sent = server.hits[-1][1]
    if validator == "etag":
        assert sent.get("If-None-Match") == '"abc"' and "If-Modified-Since" not in sent
    else:
        assert sent.get("If-Modified-Since") == stamp
    assert tree(home) == before


def test_changed_content_makes_a_new_snapshot_and_keeps_history(
    server: TestServer, home: Path, tmp_path: Path
) -> None:
    bodies = iter([b"version one", b"version two"])
    url = server.route("/v", lambda h: h.reply(200, next(bodies), {"Content-Type": "text/plain"}))
    manifest = write_manifest(tmp_path, [{"url": url}])
    first = snapshot(home, manifest).envelope["data"]["sources"][0]["snapshotId"]
    second = snapshot(home, manifest).envelope["data"]["sources"][0]
    assert second["status"] == "captured" and second["previousSnapshotId"] == first
    catalog = read_catalog(Home(home))
    assert [r.id for r in catalog.history(url)] == [first, second["snapshotId"]]
    assert catalog.content(catalog.record(first)) == b"version one"
    assert len(list(Log(Home(home).log_path).entries())) == 2


def test_redirect_chain_records_the_final_url(server: TestServer, home: Path, tmp_path: Path) -> None:
    final = server.static("/final", b"arrived", {"Content-Type": "text/plain"})
    for n in range(10, 0, -1):  # exactly 10 redirects: the bound itself is allowed
        target = "/final" if n == 10 else f"/hop{n + 1}"
        server.static(f"/hop{n}", b"", {"Location": target}, status=302 if n % 2 else 301)
    result = snapshot(home, write_manifest(tmp_path, [{"url": server.url("/hop1")}]))
    assert result.exit_code == 0, result.stderr
    [source] = result.envelope["data"]["sources"]
    assert source["finalUrl"] == final and source["status"] == "captured"
    record = read_catalog(Home(home)).latest(server.url("/hop1"))
    assert record.final_url == final and len(record.attributes["redirects"]) == 10


def _redirect_chain(length: int) -> Callable[[TestServer], str]:
    def setup(server: TestServer) -> str:
        for n in range(1, length + 1):
            server.static(f"/c{n}", b"", {"Location": f"/c{n + 1}"}, status=307)
        server.static(f"/c{length + 1}", b"end", {"Content-Type": "text/plain"})
        return server.url("/c1")

    return setup


def _loop(server: TestServer) -> str:
    server.static("/loop-a", b"", {"Location": "/loop-b"}, status=302)
    server.static("/loop-b", b"", {"Location": "/loop-a"}, status=302)
    return server.url("/loop-a")


def _to(location: str) -> Callable[[TestServer], str]:
    return lambda server: server.static("/jump", b"", {"Location": location}, status=302)


def _always(status: int, headers: dict[str, str] | None = None) -> Callable[[TestServer], str]:
    return lambda server: server.static("/bad", b"nope", headers, status=status)


def _reset(server: TestServer) -> str:
    return server.route("/reset", lambda h: h.reset())


def _headers_then_reset(server: TestServer) -> str:
    def handler(h: RequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Length", "1000")
        h.end_headers()
        h.wfile.write(b"partial")
        h.wfile.flush()
        h.reset()

    return server.route("/cut", handler)


def _trickle(server: TestServer) -> str:
    return server.route("/trickle", slow_body(2400, 0.05))  # 120 s of body against a 0.6 s bound


def _big(with_length: bool) -> Callable[[TestServer], str]:
    return lambda server: server.route(
        "/big", lambda h: h.reply(200, b"x" * 2049, {"Content-Type": "text/plain"}, length=with_length))


def _bomb(server: TestServer) -> str:
    payload = gzip.compress(b"\0" * (20 * 1024 * 1024), compresslevel=9)
    assert len(payload) < 2048 * 16
    return server.static("/bomb", payload, {"Content-Type": "text/plain", "Content-Encoding": "gzip"})


FAILURES = {
    "redirect loop": (_loop, [], "LIMIT_EXCEEDED", 5),
    "11 redirects": (_redirect_chain(11), [], "LIMIT_EXCEEDED", 5),
    "redirect to file:": (_to("file:///etc/passwd"), [], "INVALID_INPUT", 3),
    "redirect to private": (_to("http://10.1.2.3/secret"), [], "INVALID_INPUT", 3),
    "redirect to link-local": (_to("http://169.254.169.254/latest/meta-data"), [], "INVALID_INPUT", 3),
    "redirect to 0.0.0.0": (_to("http://0.0.0.0:1/"), [], "INVALID_INPUT", 3),
    "404": (_always(404), [], "SOURCE_UNAVAILABLE", 4),
    "503 always": (_always(503), ["--retries", "1"], "SOURCE_UNAVAILABLE", 4),
    "connection reset": (_reset, ["--retries", "1"], "SOURCE_UNAVAILABLE", 4),
    "body cut short": (_headers_then_reset, ["--retries", "0"], "SOURCE_UNAVAILABLE", 4),
    "trickle past the time bound": (_trickle, ["--timeout", "600"], "LIMIT_EXCEEDED", 5),
    "over bound with Content-Length": (_big(True), ["--max-bytes", "2048"], "LIMIT_EXCEEDED", 5),
    "over bound without Content-Length": (_big(False), ["--max-bytes", "2048"], "LIMIT_EXCEEDED", 5),
    "gzip bomb": (_bomb, ["--max-bytes", str(2048 * 16)], "LIMIT_EXCEEDED", 5),
    "unknown content-encoding": (_always(200, {"Content-Encoding": "br"}), [], "PROCESSING_FAILED", 6),
}


@pytest.mark.parametrize("case", sorted(FAILURES))
def test_failures_have_a_code_and_change_nothing(
    server: TestServer, home: Path, tmp_path: Path, case: str
) -> None:
    setup, extra, code, exit_code = FAILURES[case]
    _ok(server, home, tmp_path)
    before = tree(home)
    url = setup(server)
    started = time.monotonic()
    result = snapshot(home, write_manifest(tmp_path, [{"url": url}]), *extra)
    elapsed = time.monotonic() - started
    assert result.exit_code == exit_code, result.stderr
    error = result.envelope["error"]
    assert error["code"] == code
    [source] = error["details"]["sources"]
    assert source["status"] == "failed" and source["code"] == code
    assert tree(home) == before
    if case == "trickle past the time bound":
        # cut by the 0.6 s bound (about 0.7 s in all), not after the 120 s body: the bound between
        # is generous, 40 times what it takes, so a loaded machine never reaches it
        assert source["details"]["kind"] == "time" and elapsed < 30
    if case.startswith("over bound"):
        assert source["details"]["kind"] == "wire"
    if case == "gzip bomb":
        assert source["details"]["kind"] == "decoded"


def test_byte_bound_is_inclusive(server: TestServer, home: Path, tmp_path: Path) -> None:
    url = server.static("/exact", b"y" * 2048, {"Content-Type": "text/plain"})
    ok = snapshot(home, write_manifest(tmp_path, [{"url": url}]), "--max-bytes", "2048")
    assert ok.exit_code == 0, ok.stderr


def test_gzip_body_is_stored_decoded(server: TestServer, home: Path, tmp_path: Path) -> None:
    body = b"<p>compressed</p>" * 100
    url = server.static("/gz", gzip.compress(body), {**HTML, "Content-Encoding": "gzip"})
    result = snapshot(home, write_manifest(tmp_path, [{"url": url}]), "--max-bytes", str(len(body)))
    assert result.exit_code == 0, result.stderr
    catalog = read_catalog(Home(home))
    assert catalog.content(catalog.latest(url)) == body


def test_429_honours_retry_after(server: TestServer, home: Path, tmp_path: Path) -> None:
    calls = []

    def handler(h: RequestHandler) -> None:
        calls.append(time.monotonic())
        if len(calls) == 1:
            h.reply(429, b"slow down", {"Retry-After": "1"})
        else:
            h.reply(200, b"ok now", {"Content-Type": "text/plain"})

    url = server.route("/limited", handler)
    result = invoke("snapshot", "--json", "--progress", "always", "--home", str(home), "--manifest",
                    str(write_manifest(tmp_path, [{"url": url}])), "--allow-localhost",
                    "--retry-backoff-ms", "10")
    assert result.exit_code == 0, result.stderr
    assert result.envelope["data"]["sources"][0]["attempts"] == 2
    assert calls[1] - calls[0] >= 0.95  # waited the Retry-After second, not the 10 ms backoff
    events = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
    statuses = [e["status"] for e in events if e["type"] == "progress"]
    assert statuses == ["started", "retrying", "completed"]
    assert "HTTP 429" in [e for e in events if e["status"] == "retrying"][0]["message"]


def test_retry_after_is_capped(server: TestServer, home: Path, tmp_path: Path) -> None:
    calls = []

    def handler(h: RequestHandler) -> None:
        calls.append(time.monotonic())
        if len(calls) == 1:
            h.reply(503, b"", {"Retry-After": "3600"})
        else:
            h.reply(200, b"fine", {"Content-Type": "text/plain"})

    url = server.route("/capped", handler)
    started = time.monotonic()
    result = snapshot(home, write_manifest(tmp_path, [{"url": url}]), "--retry-after-cap-ms", "50")
    assert result.exit_code == 0, result.stderr
    assert len(calls) == 2
    # Capped at 50 ms, not the hour asked for; 60 s bounds it against that hour (it takes 0.2 s).
    assert time.monotonic() - started < 60


def test_503_then_200_is_captured(server: TestServer, home: Path, tmp_path: Path) -> None:
    statuses = iter([503, 200])
    url = server.route("/flaky", lambda h: h.reply(next(statuses), b"eventually", {"Content-Type":
                                                                                    "text/plain"}))
    result = snapshot(home, write_manifest(tmp_path, [{"url": url}]))
    assert result.exit_code == 0, result.stderr
    [source] = result.envelope["data"]["sources"]
    assert source["status"] == "captured" and source["attempts"] == 2


@pytest.mark.parametrize("retries", [0, 1, 3])
def test_retries_bound_the_attempts(
    server: TestServer, home: Path, tmp_path: Path, retries: int
) -> None:
    url = server.static("/down", b"", status=502)
    result = snapshot(home, write_manifest(tmp_path, [{"url": url}]), "--retries", str(retries))
    assert result.exit_code == 4
    assert server.count("/down") == retries + 1


def test_404_is_not_retried(server: TestServer, home: Path, tmp_path: Path) -> None:
    url = server.static("/gone", b"", status=404)
    assert snapshot(home, write_manifest(tmp_path, [{"url": url}])).exit_code == 4
    assert server.count("/gone") == 1


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_loopback_is_refused_without_allow_localhost(
    server: TestServer, home: Path, tmp_path: Path, host: str
) -> None:
    url = server.static("/local", b"secret", {"Content-Type": "text/plain"})
    url = url.replace("127.0.0.1", host)
    result = snapshot(home, write_manifest(tmp_path, [{"url": url}]), local=False)
    assert result.exit_code == 3
    assert "loopback" in result.envelope["error"]["message"]
    assert server.count("/local") == 0  # refused before connecting
    assert not (home / "snapshots").exists()


def test_private_networks_flag_does_not_allow_loopback(
    server: TestServer, home: Path, tmp_path: Path
) -> None:
    url = server.static("/local", b"secret")
    result = snapshot(home, write_manifest(tmp_path, [{"url": url}]), "--allow-private-networks",
                      local=False)
    assert result.exit_code == 3 and server.count("/local") == 0


def test_charset_warnings(server: TestServer, home: Path, tmp_path: Path) -> None:
    wrong = server.static("/wrong", "café".encode("latin-1"), {"Content-Type": "text/plain; charset=utf-8"})
    unknown = server.static("/unknown", b"abc", {"Content-Type": "text/html; charset=x-no-such-thing"})
    right = server.static("/right", "café".encode("latin-1"), {"Content-Type":
                                                               "text/plain; charset=ISO-8859-1"})
    result = snapshot(home, write_manifest(tmp_path, [{"url": wrong}, {"url": unknown}, {"url": right}]))
    assert result.exit_code == 0, result.stderr
    codes = {w["source"]: w["code"] for w in result.envelope["warnings"]}
    assert codes == {wrong: "CHARSET_MISMATCH", unknown: "CHARSET_UNKNOWN"}
    catalog = read_catalog(Home(home))
    assert catalog.latest(right).charset == "iso-8859-1"
    assert catalog.latest(unknown).charset == "x-no-such-thing"
    assert catalog.content(catalog.latest(wrong)) == "café".encode("latin-1")  # bytes kept exactly


def test_some_failures_commit_the_rest_and_exit_0(server: TestServer, home: Path, tmp_path: Path) -> None:
    good = server.static("/good", b"good", {"Content-Type": "text/plain"})
    bad = server.static("/bad", b"", status=404)
    result = snapshot(home, write_manifest(tmp_path, [{"url": bad}, {"url": good}]))
    assert result.exit_code == 0, result.stderr
    data = result.envelope["data"]
    assert data["counts"] == {"captured": 1, "unchanged": 0, "failed": 1}
    assert [s["status"] for s in data["sources"]] == ["failed", "captured"]
    assert data["sources"][0]["code"] == "SOURCE_UNAVAILABLE"
    assert [w["code"] for w in result.envelope["warnings"]] == ["SOURCE_FAILED"]
    assert read_catalog(Home(home)).sources() == [good]
    logged = [(e.record_id, e.status, e.code) for e in Log(Home(home).log_path).entries()]
    assert logged == [(bad, "failed", "SOURCE_UNAVAILABLE"), (good, "captured", None)]


def test_fail_fast_commits_nothing(server: TestServer, home: Path, tmp_path: Path) -> None:
    _ok(server, home, tmp_path)
    before = tree(home)
    good = server.static("/good", b"good new bytes", {"Content-Type": "text/plain"})
    bad = server.static("/bad", b"", status=404)
    late = server.static("/late", b"late", {"Content-Type": "text/plain"})
    result = snapshot(home, write_manifest(tmp_path, [{"url": good}, {"url": bad}, {"url": late}]),
                      "--fail-fast")
    assert result.exit_code == 4
    assert tree(home) == before  # the blob and record of /good were removed again
    assert server.count("/late") == 0


def test_human_output(server: TestServer, home: Path, tmp_path: Path) -> None:
    url = server.static("/h", b"x", {"Content-Type": "text/plain"})
    manifest = write_manifest(tmp_path, [{"url": url}])
    result = invoke("snapshot", "--home", str(home), "--manifest", str(manifest), "--allow-localhost")
    assert result.exit_code == 0
    assert result.stdout.startswith("Snapshot of 1 source(s): 1 new, 0 unchanged, 0 failed.")


def test_manifest_from_stdin(server: TestServer, home: Path) -> None:
    url = server.static("/stdin", b"from stdin", {"Content-Type": "text/plain"})
    result = invoke("snapshot", "--json", "--home", str(home), "--manifest", "-", "--allow-localhost",
                    stdin=json.dumps([{"url": url}]).encode())
    assert result.exit_code == 0, result.stderr
    too_big = invoke("snapshot", "--json", "--home", str(home), "--manifest", "-", "--allow-localhost",
                     "--max-input-bytes", "10", stdin=json.dumps([{"url": url}]).encode())
    assert too_big.exit_code == 5 and too_big.envelope["error"]["code"] == "LIMIT_EXCEEDED"


def test_total_time_covers_retries(server: TestServer, home: Path, tmp_path: Path) -> None:
    url = server.static("/always503", b"", status=503)
    started = time.monotonic()
    result = snapshot(home, write_manifest(tmp_path, [{"url": url}]), "--retries", "8",
                      "--retry-backoff-ms", "5000", "--timeout", "1000")
    assert result.exit_code == 4
    # The first backoff (5 s) would pass the 1 s deadline, so it is not slept: the source fails at
    # once (about 0.15 s). Sleeping it would take 5 s; 4.5 s is 30 times what it takes.
    assert server.count("/always503") == 1
    assert time.monotonic() - started < 4.5


def test_multi_member_gzip_body(server: TestServer, home: Path, tmp_path: Path) -> None:
    first, second = b"a" * 300_000, b"tail"
    url = server.static("/members", gzip.compress(first) + gzip.compress(second),
                        {"Content-Type": "text/plain", "Content-Encoding": "gzip"})
    result = snapshot(home, write_manifest(tmp_path, [{"url": url}]))
    assert result.exit_code == 0, result.stderr
    catalog = read_catalog(Home(home))
    assert catalog.content(catalog.latest(url)) == first + second
