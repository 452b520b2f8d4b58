"""A real HTTP server on 127.0.0.1 that speaks the Honcho v3 listing API with paging."""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import pytest

SECRET = "hk-test-7f3a9c-DO-NOT-LEAK-51e2"


def message(n: int, session: str, peer: str, text: str) -> dict[str, Any]:
    return {
        "id": f"msg{session}{n:04d}", "content": text, "peer_id": peer, "session_id": session,
        "workspace_id": "w", "metadata": {}, "created_at": f"2024-01-15T10:{n // 60:02d}:{n % 60:02d}Z",
        "token_count": 3,
    }


class FakeHoncho:
    """Data, a mode that misbehaves on purpose, and every request it saw (path, query, auth)."""

    def __init__(self) -> None:
        self.data: dict[str, dict[str, list[dict[str, Any]]]] = {
            "acme": {
                "support-1": [
                    message(i, "support-1", "alice" if i % 2 else "bot", f"Message {i} about invoices")
                    for i in range(1, 6)
                ],
                "support-2": [message(1, "support-2", "bob", "Where is my parcel?")],
            },
            "lab": {"notes": [message(1, "notes", "carol", "The centrifuge needs a new rotor.")]},
        }
        self.mode: str | None = None
        self.requests: list[tuple[str, dict[str, list[str]], str | None]] = []
        self.lock = threading.Lock()

    def page(self, items: list[dict[str, Any]], query: dict[str, list[str]]) -> dict[str, Any]:
        page = int(query.get("page", ["1"])[0])
        size = int(query.get("size", ["50"])[0])
        chunk = items[(page - 1) * size : page * size]
        return {"items": chunk, "total": len(items), "page": page, "size": size,
                "pages": max(1, math.ceil(len(items) / size))}

    def answer(self, path: str, query: dict[str, list[str]]) -> tuple[int, bytes]:
        parts = [unquote(p) for p in path.strip("/").split("/")]
        if self.mode == "error500":
            return 500, b'{"detail":"boom"}'
        if self.mode == "malformed":
            return 200, b'{"items": [ {"id": '
        if parts == ["v3", "workspaces", "list"]:
            return 200, json.dumps(self.page([{"id": w, "metadata": {}, "created_at": "2024-01-01T00:00:00Z"}
                                              for w in sorted(self.data)], query)).encode()
        if len(parts) == 5 and parts[:2] == ["v3", "workspaces"] and parts[3:] == ["sessions", "list"]:
            sessions = self.data.get(parts[2])
            if sessions is None:
                return 404, b'{"detail":"Workspace not found"}'
            items = [
                {"id": s, "is_active": True, "workspace_id": parts[2], "metadata": {"title": f"Chat {s}"},
                 "configuration": {}, "created_at": "2024-01-15T09:00:00Z"}
                for s in sorted(sessions)
            ]
            return 200, json.dumps(self.page(items, query)).encode()
        if len(parts) == 7 and parts[3] == "sessions" and parts[5:] == ["messages", "list"]:
            if self.mode == "endless":
                page = int(query["page"][0])
                body = {"items": [message(page, parts[4], "x", f"page {page}")], "page": page, "size": 1,
                        "total": page + 1, "pages": page + 1}
                return 200, json.dumps(body).encode()
            if self.mode == "stuck":
                body = {"items": [message(1, parts[4], "x", "again")], "page": 1, "size": 1, "total": 9,
                        "pages": 9}
                return 200, json.dumps(body).encode()
            messages = self.data.get(parts[2], {}).get(parts[4])
            if messages is None:
                return 404, b'{"detail":"Session not found"}'
            return 200, json.dumps(self.page(messages, query)).encode()
        return 404, b'{"detail":"Not Found"}'


@pytest.fixture
def honcho(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[FakeHoncho, str]]:
    fake = FakeHoncho()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            parts = urlsplit(self.path)
            query = parse_qs(parts.query)
            auth = self.headers.get("Authorization")
            with fake.lock:
                fake.requests.append((parts.path, query, auth))
            if fake.mode == "slow":
                time.sleep(2.5)
            if auth != f"Bearer {SECRET}":
                status, payload = 401, b'{"detail":"Invalid JWT"}'
            elif json.loads(body or b"null") != {"filters": {}}:
                status, payload = 422, b'{"detail":"bad body"}'
            else:
                status, payload = fake.answer(parts.path, query)
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    monkeypatch.setenv("HONCHO_BASE_URL", url)
    monkeypatch.setenv("HONCHO_API_KEY", SECRET)
    monkeypatch.delenv("HONCHO_WORKSPACE_ID", raising=False)
    try:
        yield fake, url
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("EPISTEME_HOME", str(tmp_path / "default-home"))
    monkeypatch.setenv("EPISTEME_LOAD_PLUGINS", "honcho")  # only this plugin, whatever else is installed


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"
