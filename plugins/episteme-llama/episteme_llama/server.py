"""``episteme reader serve``: one llama reader behind the HTTP reader protocol, for many clients.

Endpoints (what episteme's http reader, llama-server clients and vLLM clients expect):

- ``GET /health``: 200 with the model, mode, device and slots.
- ``GET /v1/models``: the one model, OpenAI style.
- ``POST /v1/episteme/run``: ``{"question", "shards"}`` before a question's reads; acknowledged.
- ``POST /v1/chat/completions``: episteme's reader prompt in; an OpenAI chat completion out whose
  message content is ``{"ids": [...]}``.

Guards: a loopback address by default (then the Host header must name loopback too, against DNS
rebinding); any other address needs a bearer token from a private file; a request with an
``Origin`` header (a browser) is refused; bodies need a ``Content-Length`` of at most ``max_body``
bytes; at most ``max_connections`` requests are handled at once (503 beyond); a slow client is cut
after ``CLIENT_TIMEOUT`` seconds of silence. Slots are the reader's parallel contexts.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import attrs

from episteme_core.api import ReadError
from episteme_llama.chat_request import NotAReaderPrompt, read_request
from episteme_llama.defaults import DEFAULT_MAX_BODY, DEFAULT_PORT
from episteme_llama.token_file import authorized, is_loopback

CLIENT_TIMEOUT = 30.0


@attrs.frozen
class ServeSettings:
    """Where and how to listen."""

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    token: str | None = None
    max_body: int = DEFAULT_MAX_BODY
    max_connections: int = 16


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    block_on_close = False

    def __init__(self, address: tuple[str, int], app: ReaderServer) -> None:
        import socket

        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        self.app = app
        super().__init__(address, _Handler)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    timeout = CLIENT_TIMEOUT
    disable_nagle_algorithm = True
    server_version = "episteme-llama"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:
        return

    # -- replies ---------------------------------------------------------------------------------
    def _reply(self, status: int, value: Any, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(value, ensure_ascii=False).encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for name, text in (headers or {}).items():
                self.send_header(name, text)
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _error(self, status: int, message: str, kind: str = "invalid_request_error",
               headers: dict[str, str] | None = None) -> None:
        self._reply(status, {"error": {"message": message, "type": kind, "code": status}}, headers)

    # -- guards ----------------------------------------------------------------------------------
    def _admitted(self) -> bool:
        app = self.server.app
        if self.headers.get("Origin") is not None:
            self._error(403, "requests from web pages (with an Origin header) are refused", "forbidden")
            return False
        if app.settings.token is None:
            host = (self.headers.get("Host") or "").strip()
            name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
            if not is_loopback(name):
                self._error(403, "the Host header must name a loopback address", "forbidden")
                return False
        elif not authorized(self.headers.get("Authorization"), app.settings.token):
            self._error(401, "a valid bearer token is required", "unauthorized",
                        {"WWW-Authenticate": 'Bearer realm="episteme-reader"'})
            return False
        return True

    def _body(self) -> Any:
        """The JSON body, or None after an error reply (411, 413, 400)."""
        if self.headers.get("Transfer-Encoding"):
            self.close_connection = True
            self._error(411, "a Content-Length is required (chunked bodies are not accepted)")
            return None
        declared = self.headers.get("Content-Length")
        if declared is None or not declared.strip().isdigit():
            self.close_connection = True
            self._error(411, "a Content-Length is required")
            return None
        length = int(declared)
        limit = self.server.app.settings.max_body
        if length > limit:
            self.close_connection = True
            self._error(413, f"the body of {length} bytes is larger than {limit}")
            return None
        raw = self.rfile.read(length)
        if len(raw) < length:
            self.close_connection = True
            return None
        try:
            return json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            self._error(400, "the body is not JSON")
            return None

    def _guarded(self, handle: Any) -> None:
        app = self.server.app
        if not app.gate.acquire(blocking=False):
            self.close_connection = True
            self._error(503, "too many requests at once", "overloaded", {"Retry-After": "1"})
            return
        try:
            if self._admitted():
                handle()
        finally:
            app.gate.release()

    # -- routes ----------------------------------------------------------------------------------
    def do_GET(self) -> None:  # noqa: N802
        self._guarded(self._get)

    def do_POST(self) -> None:  # noqa: N802
        self._guarded(self._post)

    def _get(self) -> None:
        app = self.server.app
        path = self.path.split("?", 1)[0]
        if path == "/health":
            self._reply(200, {"status": "ok", **app.public_facts()})
        elif path == "/v1/models":
            self._reply(200, {"object": "list", "data": [
                {"id": app.model_id, "object": "model", "owned_by": "episteme-llama"}]})
        else:
            self._error(404, f"no such endpoint: GET {path}", "not_found")

    def _post(self) -> None:
        path = self.path.split("?", 1)[0]
        if path not in ("/v1/episteme/run", "/v1/chat/completions"):
            self._error(404, f"no such endpoint: POST {path}", "not_found")
            return
        body = self._body()
        if body is None:
            return
        if path == "/v1/episteme/run":
            shards = body.get("shards") if isinstance(body, dict) else None
            question = body.get("question") if isinstance(body, dict) else None
            if not isinstance(question, str) or not isinstance(shards, list):
                self._error(400, 'expected {"question": "...", "shards": [...]}')
                return
            self.server.app.count("runs")
            self._reply(200, {"ok": True, "shards": len(shards)})
            return
        self._chat(body)

    def _chat(self, body: Any) -> None:
        app = self.server.app
        try:
            request = read_request(body)
        except NotAReaderPrompt as exc:
            self._error(400, f"not an episteme reader request: {exc}")
            return
        started = time.monotonic()
        try:
            reply = app.reader.read(request) if request.candidates else None
        except ReadError as exc:
            app.count("failed")
            timed_out = "timed out" in str(exc) or "no free slot" in str(exc)
            self._error(504 if timed_out else 500, f"the read failed: {exc}", "reader_error")
            return
        app.count("reads")
        labels = list(reply.labels) if reply else []
        content = json.dumps({"ids": labels})
        self._reply(200, {
            "id": f"chatcmpl-episteme-{app.next_id()}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": app.model_id,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
            "episteme": {"mode": app.reader.mode, "ms": int((time.monotonic() - started) * 1000),
                         "scores": dict(reply.scores or {}) if reply else {}},
        })


class ReaderServer:
    """The HTTP server around one opened llama reader: ``with ReaderServer(reader, settings) as s``."""

    def __init__(self, reader: Any, settings: ServeSettings) -> None:
        if settings.token is None and not is_loopback(settings.host):
            raise ValueError("a non-loopback address needs a token")
        self.reader = reader
        self.settings = settings
        self.gate = threading.BoundedSemaphore(settings.max_connections)
        self._ids = itertools.count(1)
        self._stats_lock = threading.Lock()
        self.stats = {"reads": 0, "failed": 0, "runs": 0}
        facts = reader.model.facts
        self.model_id = facts.name or facts.architecture
        self.httpd = _Server((settings.host, settings.port), self)
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.1},
                                       name="episteme-reader-serve", daemon=True)

    @property
    def url(self) -> str:
        host, port = str(self.httpd.server_address[0]), int(self.httpd.server_address[1])
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}"

    def public_facts(self) -> dict[str, Any]:
        """What /health tells a client: no path, no token."""
        described = self.reader.describe()
        keys = ("mode", "device", "gpuLayers", "slots", "nCtx", "architecture", "modelName", "top", "weight")
        return {key: described[key] for key in keys} | {"model": self.model_id}

    def count(self, key: str) -> None:
        with self._stats_lock:
            self.stats[key] += 1

    def next_id(self) -> int:
        with self._stats_lock:
            return next(self._ids)

    def start(self) -> ReaderServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)

    def __enter__(self) -> ReaderServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
