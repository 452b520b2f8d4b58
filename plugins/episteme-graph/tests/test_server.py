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


TOKEN_CASES = {
    "mode-0644": (TOKEN.encode(), 0o644),
    "mode-0640": (TOKEN.encode(), 0o640),
    "too-large": (b"a" * 1025, 0o600),
    "too-short": (b"a" * 15 + b"\n", 0o600),
    "not-ascii": ("\u00e9".encode() * 20, 0o600),
    "not-rfc6750": (b"a" * 20 + b" " + b"b" * 20, 0o600),
    "padding-inside": (b"a" * 20 + b"=b", 0o600),
    "empty": (b"\n", 0o600),
}


def _case_path(tmp_path: Path, case: str) -> Path:
    if case == "symlink":
        path = tmp_path / "link"
        path.symlink_to(_token_file(tmp_path))
    elif case == "folder":
        path = tmp_path / "folder"
        path.mkdir()
    elif case == "missing":
        path = tmp_path / "missing"
    else:
        path = _token_file(tmp_path, *TOKEN_CASES[case])
    return path


REFUSED = [*TOKEN_CASES, "symlink", "folder", "missing"]


@pytest.mark.parametrize("case", REFUSED)
def test_a_token_file_is_refused_exactly_as_episteme_serve_refuses_it(
    tmp_path: Path, graph: Path, case: str
) -> None:
    """The same file gives ``graph view`` and ``episteme serve`` the same error code, exit status
    and message (both refuse before binding)."""
    path = _case_path(tmp_path, case)
    with pytest.raises(EpistemeError) as caught:
        read_token(path)
    view = invoke("graph", "view", str(graph), "--port", "0", "--token-file", str(path), "--json")
    serve = invoke(
        "--home", str(tmp_path / "home"), "serve", "--port", "0", "--token-file", str(path), "--json"
    )
    assert view.exit_code == serve.exit_code == (5 if case == "too-large" else 3), (view.stderr, serve.stderr)
    mine, theirs = view.envelope["error"], serve.envelope["error"]
    assert mine["code"] == theirs["code"] == caught.value.code
    assert mine["message"] == theirs["message"] and mine["hint"] == theirs["hint"]


def test_token_file_bounds_at_and_past_the_limit(tmp_path: Path) -> None:
    """At least 16 characters, whitespace around the token dropped, no upper bound but the file's
    1 KiB (as for ``episteme serve``)."""
    assert read_token(_token_file(tmp_path, b"a" * 16)) == "a" * 16
    assert read_token(_token_file(tmp_path, b"  " + b"a" * 16 + b"\r\n")) == "a" * 16
    assert read_token(_token_file(tmp_path, b"a" * 1024)) == "a" * 1024
    with pytest.raises(EpistemeError) as caught:
        read_token(_token_file(tmp_path, b"a" * 15))
    assert caught.value.code == "INVALID_INPUT"
    assert read_token(_token_file(tmp_path, b"Ab0-._~+/" * 3 + b"==\n", 0o400)) == "Ab0-._~+/" * 3 + "=="


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
