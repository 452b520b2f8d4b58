"""graph view: the viewer over real loopback HTTP, read-only, with Host/Origin checks and tokens."""

from __future__ import annotations

import base64
import http.client
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import fixture_graph, write_graph

from episteme_core.api import EpistemeError
from episteme_core.testing import invoke
from episteme_graph.server import ViewSettings, make_server
from episteme_graph.token import read_token

TOKEN = "t" * 40


@pytest.fixture
def graph(tmp_path: Path) -> Path:
    return write_graph(tmp_path / "g.knowledge.json", fixture_graph("contextual"))


def _serve(settings: ViewSettings) -> Iterator[int]:
    server = make_server(settings)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def port(graph: Path) -> Iterator[int]:
    yield from _serve(ViewSettings(graph=graph, port=0))


def _request(
    port: int, method: str, path: str, headers: dict[str, str] | None = None, body: bytes | None = None
) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    all_headers = {"Host": f"127.0.0.1:{port}", **(headers or {})}
    connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    for name, value in all_headers.items():
        connection.putheader(name, value)
    if body is not None:
        connection.putheader("Content-Length", str(len(body)))
    connection.endheaders(body)
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, data


def test_the_viewer_and_the_graph_are_served_with_safe_headers(port: int, graph: Path) -> None:
    status, headers, body = _request(port, "GET", "/")
    assert status == 200 and body.startswith(b"<!DOCTYPE html>")
    assert headers["content-security-policy"].startswith("default-src 'none'")
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff" and headers["cache-control"] == "no-store"
    assert not [h for h in headers if h.startswith("access-control-")]
    status, _, body = _request(port, "GET", "/knowledge.json")
    assert status == 200 and body == graph.read_bytes()
    status, headers, body = _request(port, "HEAD", "/")
    assert status == 200 and body == b"" and int(headers["content-length"]) > 1000


@pytest.mark.parametrize(
    "path", ["/etc/passwd", "/../g.knowledge.json", "/g.knowledge.json", "/%2e%2e/x", "/index.html"]
)
def test_nothing_but_the_two_documents(port: int, path: str) -> None:
    assert _request(port, "GET", path)[0] == 404


def test_queries_are_refused(port: int) -> None:
    assert _request(port, "GET", "/?cmd=ls")[0] == 400


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"])
def test_it_is_read_only_without_cors(port: int, method: str) -> None:
    status, headers, _ = _request(port, method, "/", {"Origin": f"http://127.0.0.1:{port}"})
    assert status == 405 and headers["allow"] == "GET, HEAD"
    assert not [h for h in headers if h.startswith("access-control-")]


def test_host_and_origin_must_name_this_server(port: int) -> None:
    assert _request(port, "GET", "/", {"Host": f"evil.example:{port}"})[0] == 421
    assert _request(port, "GET", "/", {"Host": f"localhost:{port}"})[0] == 200
    assert _request(port, "GET", "/", {"Origin": "http://evil.example"})[0] == 403
    assert _request(port, "GET", "/", {"Origin": "null"})[0] == 403
    assert _request(port, "GET", "/", {"Origin": f"http://127.0.0.1:{port}"})[0] == 200


def test_request_bodies_are_refused(port: int) -> None:
    assert _request(port, "GET", "/", body=b"x" * 10)[0] == 413


def test_the_graph_is_reread_when_it_changes(port: int, graph: Path) -> None:
    changed = fixture_graph("contextual")
    changed["metadata"]["title"] = "Renamed graph"
    write_graph(graph, changed)
    os.utime(graph, ns=(1, 1))
    assert b"Renamed graph" in _request(port, "GET", "/")[2]


def _token_file(tmp_path: Path, content: bytes = TOKEN.encode() + b"\n", mode: int = 0o600) -> Path:
    path = tmp_path / "token"
    path.write_bytes(content)
    path.chmod(mode)
    return path


def test_a_token_is_required_on_every_request(tmp_path: Path, graph: Path) -> None:
    for port in _serve(ViewSettings(graph=graph, port=0, token_file=_token_file(tmp_path))):
        status, headers, _ = _request(port, "GET", "/")
        assert status == 401 and headers["www-authenticate"].startswith("Basic realm=")
        assert _request(port, "GET", "/", {"Authorization": f"Bearer {TOKEN}"})[0] == 200
        basic = base64.b64encode(f"anyone:{TOKEN}".encode()).decode()
        assert _request(port, "GET", "/", {"Authorization": f"Basic {basic}"})[0] == 200
        assert _request(port, "GET", "/", {"Authorization": f"Bearer {TOKEN[:-1]}x"})[0] == 401
        assert _request(port, "GET", "/", {"Authorization": "Basic !!!"})[0] == 401


@pytest.mark.parametrize("case", ["mode-0644", "symlink", "too-large", "too-short", "not-ascii", "folder"])
def test_a_token_file_that_is_not_private_is_refused(tmp_path: Path, case: str) -> None:
    if case == "mode-0644":
        path = _token_file(tmp_path, mode=0o644)
    elif case == "symlink":
        path = tmp_path / "link"
        path.symlink_to(_token_file(tmp_path))
    elif case == "too-large":
        path = _token_file(tmp_path, b"a" * 1025)
    elif case == "too-short":
        path = _token_file(tmp_path, b"short\n")
    elif case == "not-ascii":
        path = _token_file(tmp_path, "\u00e9".encode() * 20)
    else:
        path = tmp_path / "folder"
        path.mkdir()
    with pytest.raises(EpistemeError) as caught:
        read_token(path)
    assert caught.value.code == "INVALID_USAGE"


def test_token_file_bounds_at_and_past_the_limit(tmp_path: Path) -> None:
    assert read_token(_token_file(tmp_path, b"a" * 512)) == "a" * 512
    assert read_token(_token_file(tmp_path, b"a" * 32 + b"\n")) == "a" * 32
    with pytest.raises(EpistemeError):
        read_token(_token_file(tmp_path, b"a" * 513))
    with pytest.raises(EpistemeError):
        read_token(_token_file(tmp_path, b"a" * 31))


def test_a_non_loopback_address_needs_a_token_file(graph: Path) -> None:
    result = invoke("graph", "view", str(graph), "--host", "0.0.0.0", "--json")  # refused before binding
    assert result.exit_code == 2 and "--token-file" in result.envelope["error"]["message"]


def test_the_command_serves_until_sigterm(graph: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "episteme_core", "graph", "view", str(graph), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline().decode()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert match, line
        assert _request(int(match.group(1)), "GET", "/")[0] == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        code: Any = proc.wait(timeout=20)
    assert code == 143
