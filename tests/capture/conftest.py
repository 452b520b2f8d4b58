"""A real threaded HTTP server on 127.0.0.1 whose routes each test defines."""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from episteme_core.testing import CliResult, invoke

Handler = Callable[["RequestHandler"], None]


class RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: TestServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        self.server.hits.append((path, dict(self.headers.items())))
        handler = self.server.routes.get(path)
        if handler is None:
            self.reply(404, b"not found")
            return
        handler(self)

    def reply(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None,
              length: bool = True) -> None:
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        if length:
            self.send_header("Content-Length", str(len(body)))
        else:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if body:
            self.wfile.write(body)

    def reset(self) -> None:
        """Abort the connection with a TCP RST (SO_LINGER 0)."""
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True
        self.connection.close()


class TestServer(ThreadingHTTPServer):
    __test__ = False
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), RequestHandler)
        self.routes: dict[str, Handler] = {}
        self.hits: list[tuple[str, dict[str, str]]] = []

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def url(self, path: str) -> str:
        return self.base + path

    def route(self, path: str, handler: Handler) -> str:
        self.routes[path] = handler
        return self.url(path)

    def static(self, path: str, body: bytes, headers: dict[str, str] | None = None,
               status: int = 200) -> str:
        return self.route(path, lambda h: h.reply(status, body, headers))

    def count(self, path: str) -> int:
        return sum(1 for p, _ in self.hits if p == path)


@pytest.fixture
def server() -> Iterator[TestServer]:
    srv = TestServer()
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()


FAST = ["--retry-backoff-ms", "10", "--timeout", "5000"]


def write_manifest(tmp_path: Path, entries: list[dict[str, Any]], name: str = "manifest.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(entries))
    return path


def snapshot(home: Path, manifest: Path, *extra: str, local: bool = True) -> CliResult:
    args = ["snapshot", "--json", "--home", str(home), "--manifest", str(manifest), *FAST, *extra]
    if local:
        args.append("--allow-localhost")
    return invoke(*args)


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` and its bytes (to prove that nothing stored changed)."""
    if not root.exists():
        return {}
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def slow_body(chunks: int, delay: float, chunk: bytes = b"x") -> Handler:
    def handler(h: RequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/plain")
        h.send_header("Content-Length", str(chunks * len(chunk)))
        h.end_headers()
        try:
            for _ in range(chunks):
                h.wfile.write(chunk)
                h.wfile.flush()
                time.sleep(delay)
        except OSError:
            pass

    return handler
