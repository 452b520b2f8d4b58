"""Capture integrity: a body cut short is never stored as whole, a stalled read is retryable, the
whole-source time bound is a limit, files are opened so that a swap cannot hang or escape."""

from __future__ import annotations

import gzip
import json
import os
import time
from pathlib import Path

import pytest

from episteme_core.testing import invoke, validate

from .conftest import RequestHandler, TestServer, snapshot, tree, write_manifest

BODY = b"<p>" + b"evidence " * 15_000 + b"</p>"  # 135 KB that gzip makes small but not tiny


def _gzip_cut(h: RequestHandler) -> None:
    packed = gzip.compress(bytes(range(256)) * 500)  # 128 KB, compresses poorly: many TCP segments
    h.reply(200, packed[: len(packed) // 2], {"Content-Type": "text/html", "Content-Encoding": "gzip"},
            length=False)


def test_a_gzip_body_cut_short_is_never_stored(tmp_path: Path, home: Path, server: TestServer) -> None:
    url = server.route("/cut", _gzip_cut)
    good = server.static("/good", gzip.compress(BODY), {"Content-Type": "text/html",
                                                        "Content-Encoding": "gzip"})
    result = snapshot(home, write_manifest(tmp_path, [{"url": url}, {"url": good}]), "--retries", "1")
    assert result.exit_code == 0, result.stderr  # one source failed, the other was captured
    data = result.envelope["data"]
    validate(data, "snapshot-result")
    cut, whole = data["sources"]
    assert cut["status"] == "failed" and cut["code"] == "SOURCE_UNAVAILABLE"
    assert cut["details"]["kind"] == "truncated" and "cut short" in cut["message"]
    assert server.count("/cut") == 2  # retried once, as a transport failure is
    assert whole["status"] == "captured" and whole["bytes"] == len(BODY)
    assert [w["code"] for w in result.envelope["warnings"]] == ["SOURCE_FAILED"]


def test_only_a_cut_body_fails_the_run_and_stores_nothing(
    tmp_path: Path, home: Path, server: TestServer
) -> None:
    url = server.route("/cut", _gzip_cut)
    result = snapshot(home, write_manifest(tmp_path, [{"url": url}]), "--retries", "0")
    assert result.exit_code == 4 and result.envelope["error"]["retryable"] is True
    assert tree(home / "blobs") == {} and not (home / "snapshots" / "index.json").exists()


def _stall(seconds: float):
    def handler(h: RequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Length", "10")
        h.end_headers()
        h.wfile.flush()
        time.sleep(seconds)  # headers sent, then no byte of the body

    return handler


def test_a_stalled_read_is_a_retryable_source_unavailable(
    tmp_path: Path, home: Path, server: TestServer
) -> None:
    url = server.route("/stall", _stall(120))
    started = time.monotonic()
    result = snapshot(home, write_manifest(tmp_path, [{"url": url}]),
                      "--read-timeout", "300", "--retries", "1", "--timeout", "200000")
    # Two 0.3 s read timeouts take about 0.7 s; waiting out the stall would take 240 s. The bound
    # between is generous (40 times what it takes): a loaded machine never reaches it.
    assert time.monotonic() - started < 30
    assert result.exit_code == 4, result.stderr
    error = result.envelope["error"]
    assert error["code"] == "SOURCE_UNAVAILABLE" and error["retryable"] is True
    [source] = error["details"]["sources"]
    assert source["details"]["kind"] == "read-timeout" and source["details"]["readTimeoutMs"] == 300
    assert server.count("/stall") == 2


def test_a_stall_that_the_deadline_cuts_on_a_retry_is_still_source_unavailable(
    tmp_path: Path, home: Path, server: TestServer
) -> None:
    url = server.route("/stall", _stall(5))
    result = snapshot(home, write_manifest(tmp_path, [{"url": url}]),
                      "--read-timeout", "400", "--retries", "3", "--timeout", "900")
    assert result.exit_code == 4, result.stderr
    assert result.envelope["error"]["details"]["sources"][0]["details"]["kind"] == "read-timeout"


def test_the_whole_source_time_bound_is_a_limit(tmp_path: Path, home: Path, server: TestServer) -> None:
    url = server.route("/stall", _stall(5))
    result = snapshot(home, write_manifest(tmp_path, [{"url": url}]),
                      "--read-timeout", "30000", "--timeout", "500")
    assert result.exit_code == 5, result.stderr
    error = result.envelope["error"]
    assert error["code"] == "LIMIT_EXCEEDED" and error["retryable"] is False
    assert error["details"]["sources"][0]["details"]["kind"] == "time"


# manual-ingest: absolute paths, --root, and files swapped after their check --------------------


def _map(folder: Path, entries: list[dict[str, str]]) -> Path:
    path = folder / "map.json"
    path.write_text(json.dumps(entries))
    return path


def test_an_absolute_local_path_is_accepted_without_root(tmp_path: Path, home: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    doc = elsewhere / "a.txt"
    doc.write_text("absolute")
    maps = tmp_path / "maps"
    maps.mkdir()
    map_path = _map(maps, [{"sourceUrl": "https://example.org/a", "localPath": str(doc)}])
    result = invoke("--json", "--home", str(home), "manual-ingest", "--map", str(map_path))
    assert result.exit_code == 0, result.stderr
    [source] = result.envelope["data"]["sources"]
    assert source["status"] == "captured" and source["localPath"] == str(doc)


def test_with_root_an_absolute_local_path_must_lie_inside_it(tmp_path: Path, home: Path) -> None:
    inside, outside = tmp_path / "root", tmp_path / "outside"
    inside.mkdir()
    outside.mkdir()
    (inside / "in.txt").write_text("in")
    (outside / "out.txt").write_text("out")
    ok = _map(tmp_path, [{"sourceUrl": "https://example.org/in", "localPath": str(inside / "in.txt")}])
    result = invoke("--json", "--home", str(home), "manual-ingest", "--map", str(ok), "--root", str(inside))
    assert result.exit_code == 0, result.stderr
    bad = _map(tmp_path, [{"sourceUrl": "https://example.org/out", "localPath": str(outside / "out.txt")}])
    before = tree(home)
    refused = invoke("--json", "--home", str(home), "manual-ingest", "--map", str(bad), "--root", str(inside))
    assert refused.exit_code == 3
    error = refused.envelope["error"]
    assert "outside --root" in error["message"] and error["details"]["field"] == "localPath"
    assert tree(home) == before


@pytest.mark.parametrize("kind", ["symlink", "fifo", "directory"])
def test_an_absolute_path_is_still_a_regular_file(tmp_path: Path, home: Path, kind: str) -> None:
    target = tmp_path / "thing"
    if kind == "symlink":
        (tmp_path / "real.txt").write_text("x")
        target.symlink_to(tmp_path / "real.txt")
    elif kind == "fifo":
        os.mkfifo(target)
    else:
        target.mkdir()
    map_path = _map(tmp_path, [{"sourceUrl": "https://example.org/t", "localPath": str(target)}])
    result = invoke("--json", "--home", str(home), "manual-ingest", "--map", str(map_path))
    assert result.exit_code == 3 and result.envelope["error"]["details"]["field"] == "localPath"


@pytest.mark.timeout(30)
@pytest.mark.parametrize("swap", ["fifo", "symlink"])
def test_a_file_swapped_after_its_check_is_refused_without_hanging(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch, swap: str
) -> None:
    """The race of issue 12: the check sees a regular file, then a FIFO (or a symlink to a secret)
    takes its place before the file is read. Opening it must neither block nor follow the link."""
    from episteme_core.capture import manual

    doc = tmp_path / "doc.txt"
    doc.write_text("regular when checked")
    (tmp_path / "secret").write_text("not to be read")
    checked = manual.check_file

    def check_then_swap(*args, **kwargs):
        found = checked(*args, **kwargs)
        doc.unlink()
        if swap == "fifo":
            os.mkfifo(doc)  # nobody will ever write to it
        else:
            doc.symlink_to(tmp_path / "secret")
        return found

    monkeypatch.setattr(manual, "check_file", check_then_swap)
    map_path = _map(tmp_path, [{"sourceUrl": "https://example.org/doc", "localPath": "doc.txt"}])
    result = invoke("--json", "--home", str(home), "manual-ingest", "--map", str(map_path))
    assert result.exit_code == 3, result.stderr
    message = result.envelope["error"]["message"]
    assert "not a regular file" in message if swap == "fifo" else "symbolic link" in message
    assert tree(home / "blobs") == {} and not (home / "writer.lock").exists()
