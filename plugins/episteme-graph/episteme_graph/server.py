"""``graph view``: the HTML viewer of one graph over HTTP, read-only.

Serves ``/`` (the viewer) and ``/knowledge.json`` (the graph's bytes) for GET and HEAD, nothing else:
no other file, no command, no CORS. Loopback by default; another address needs a token, which every
request must carry (Bearer, or the password of Basic authentication). Host and Origin must name this
server (DNS rebinding). The graph is re-read when its file changes.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import attrs

from episteme_graph.token import read_token, same_token

REALM = "episteme graph view"


@attrs.frozen
class ViewSettings:
    graph: Path
    host: str = "127.0.0.1"
    port: int = 8765
    token_file: Path | None = None
    max_bytes: int = 64 * 1024 * 1024


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Site:
    """The two documents, rendered from the graph file and renewed when it changes."""

    def __init__(self, graph: Path, max_bytes: int) -> None:
        self.graph = graph
        self.max_bytes = max_bytes
        self.lock = threading.Lock()
        self.stamp: tuple[int, int, int] | None = None
        self.pages: dict[str, tuple[bytes, str]] = {}
        self.refresh()

    def refresh(self) -> None:
        from episteme_graph.export.html import render
        from episteme_graph.load import load_object

        info = os.stat(self.graph)
        stamp = (info.st_mtime_ns, info.st_size, info.st_ino)
        with self.lock:
            if stamp == self.stamp:
                return
            loaded = load_object(self.graph, max_bytes=self.max_bytes)
            self.pages = {
                "/": (render(loaded.value, {}), "text/html; charset=utf-8"),
                "/knowledge.json": (loaded.data, "application/json"),
            }
            self.stamp = stamp

    def page(self, path: str) -> tuple[bytes, str] | None:
        try:
            self.refresh()
        except Exception:  # a file mid-edit: keep serving the last good version
            pass
        return self.pages.get(path)


def make_handler(
    site: Site, token: str | None, allowed_hosts: frozenset[str], origins: frozenset[str]
) -> type[BaseHTTPRequestHandler]:
    from episteme_graph.export.html import content_security_policy

    csp = content_security_policy(header=True)

    class Handler(BaseHTTPRequestHandler):
        server_version = "episteme-graph-view"
        sys_version = ""
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            return  # no request log: URLs and headers may carry what the user did not mean to record

        def _send(
            self,
            status: int,
            body: bytes,
            media: str = "text/plain; charset=utf-8",
            extra: dict[str, str] | None = None,
            head: bool = False,
        ) -> None:
            self.send_response(status)
            headers = {
                "Content-Type": media,
                "Content-Length": str(len(body)),
                "Cache-Control": "no-store",
                "X-Content-Type-Options": "nosniff",
                "Referrer-Policy": "no-referrer",
                "Content-Security-Policy": csp,
                "Connection": "close",
                **(extra or {}),
            }
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            if not head:
                self.wfile.write(body)
            self.close_connection = True

        def _authorised(self) -> bool:
            if token is None:
                return True
            header = self.headers.get("Authorization", "")
            scheme, _, value = header.partition(" ")
            if scheme.lower() == "bearer":
                return same_token(value.strip(), token)
            if scheme.lower() == "basic":
                try:
                    decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
                except (binascii.Error, UnicodeDecodeError):
                    return False
                return same_token(decoded.partition(":")[2], token)
            return False

        def _guard(self) -> bool:
            hosts = self.headers.get_all("Host") or []
            if len(hosts) != 1 or hosts[0].lower() not in allowed_hosts:
                self._send(421 if hosts else 400, b"wrong Host\n")
                return False
            origin = self.headers.get("Origin")
            if origin is not None and origin.lower() not in origins:
                self._send(403, b"foreign Origin\n")
                return False
            if not self._authorised():
                self._send(401, b"token required\n", extra={"WWW-Authenticate": f'Basic realm="{REALM}"'})
                return False
            if self.headers.get("Content-Length", "0") not in ("", "0") or self.headers.get(
                "Transfer-Encoding"
            ):
                self._send(413, b"request bodies are refused\n")
                return False
            return True

        def _serve(self, head: bool) -> None:
            if not self._guard():
                return
            path = self.path
            if "?" in path or "#" in path or not path.startswith("/"):
                self._send(400, b"plain paths only\n", head=head)
                return
            found = site.page(path)
            if found is None:
                self._send(404, b"not found\n", head=head)
                return
            self._send(200, found[0], found[1], head=head)

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            self._serve(head=False)

        def do_HEAD(self) -> None:  # noqa: N802
            self._serve(head=True)

        def _refuse(self) -> None:
            self._send(
                405, b"read-only: GET and HEAD only; no CORS preflight\n", extra={"Allow": "GET, HEAD"}
            )

        do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_TRACE = do_CONNECT = _refuse  # noqa: N815

    return Handler


def make_server(settings: ViewSettings) -> ThreadingHTTPServer:
    """A bound, not yet serving, server; refuses a non-loopback address without a token file."""
    from episteme_core.api import EpistemeError

    token = read_token(settings.token_file) if settings.token_file else None
    if not is_loopback(settings.host) and token is None:
        raise EpistemeError(
            "INVALID_USAGE",
            f"--host {settings.host} is not loopback: give --token-file",
            hint="anyone who can reach the address could read the graph otherwise",
        )
    if not settings.graph.is_file():
        raise EpistemeError(
            "INVALID_INPUT", f"{settings.graph}: no such file", details={"path": str(settings.graph)}
        )
    site = Site(settings.graph, settings.max_bytes)
    try:
        server = ThreadingHTTPServer((settings.host, settings.port), BaseHTTPRequestHandler)
    except OSError as exc:
        raise EpistemeError(
            "INVALID_USAGE", f"cannot listen on {settings.host}:{settings.port}: {exc.strerror}"
        ) from exc
    port = server.server_address[1]
    names = {settings.host, *(["127.0.0.1", "localhost"] if is_loopback(settings.host) else [])}
    host_forms = {f"[{n}]" if ":" in n else n for n in names}
    allowed = frozenset(f"{h}:{port}".lower() for h in host_forms)
    origins = frozenset(f"http://{h}:{port}".lower() for h in host_forms)
    server.RequestHandlerClass = make_handler(site, token, allowed, origins)
    server.daemon_threads = True
    return server


def serve_forever(settings: ViewSettings) -> dict[str, Any]:
    """Serve until SIGINT or SIGTERM (which the CLI turns into a clean exit)."""
    import sys

    server = make_server(settings)
    host, port = str(server.server_address[0]), server.server_address[1]
    shown = f"[{host}]" if ":" in host else host
    sys.stderr.write(f"episteme graph view: serving http://{shown}:{port}/ (read-only; Ctrl-C stops)\n")
    sys.stderr.flush()
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
    return {"url": f"http://{shown}:{port}/"}
