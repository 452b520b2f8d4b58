"""The reference reader: a real HTTP server speaking the reader protocol, for tests and demos.

It plays the part a llama-server would: ``GET /health``, ``POST /v1/episteme/run`` and
``POST /v1/chat/completions`` answering ``{"ids": [...]}`` as the message content. It reads the
labelled paragraphs from the prompt and names those that share a keyword with the question. It can
be told (``POST /control`` or options) to fail, stall, answer junk, invent labels, wrap the JSON in
prose, send a huge body, or report itself unhealthy; ``GET /stats`` says what it saw.

    python -m episteme_core.ask.reference_server --port 8089 [--mode ok] [--latency 0.2]

Standard library only, so it runs anywhere the kernel does.
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODES = ("ok", "fail", "stall", "junk", "badjson", "huge", "hugestream", "invent", "plain", "empty")
HUGE_BYTES = 10 * 1024 * 1024
MAX_BODY = 16 * 1024 * 1024
STOPWORDS = frozenset(
    "a an and are as at be but by did do does for from had has have how i in is it its of on or "
    "that the this to was were what when where which who why will with you your".split()
)
_WORD = re.compile(r"\w+", re.UNICODE)
_LABEL = re.compile(r"(?m)^(p\d+): ")


def keywords(text: str) -> set[str]:
    found = (m.group(0).casefold() for m in _WORD.finditer(text))
    return {w for w in found if len(w) > 2 and w not in STOPWORDS}


def parse_prompt(messages: list[Any]) -> tuple[str, list[tuple[str, str]]]:
    """The question and the ``(label, text)`` paragraphs of the protocol's user message."""
    user = ""
    for message in messages:
        if isinstance(message, dict) and message.get("role") == "user":
            user = str(message.get("content", ""))
    question = ""
    match = re.search(r"(?m)^Question: (.*)$", user)
    if match:
        question = match.group(1)
    body = user.split("\nParagraphs:", 1)[-1]
    body = body.rsplit("\nReply with", 1)[0]
    marks = list(_LABEL.finditer(body))
    paragraphs = []
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(body)
        paragraphs.append((mark.group(1), body[mark.end():end].strip()))
    return question, paragraphs


def choose(question: str, paragraphs: list[tuple[str, str]], max_ids: int) -> list[str]:
    """The keyword rule: labels of paragraphs sharing the most question keywords (at least one)."""
    wanted = keywords(question)
    scored = []
    for order, (label, text) in enumerate(paragraphs):
        overlap = len(wanted & keywords(text))
        if overlap:
            scored.append((-overlap, order, label))
    return [label for _, _, label in sorted(scored)[:max_ids]]


class State:
    """What the server is told to do and what it has seen; shared by handler threads."""

    def __init__(self, mode: str = "ok", latency: float = 0.0, delay: float = 30.0, max_ids: int = 5):
        self.lock = threading.Lock()
        self.closing = threading.Event()
        self.settings: dict[str, Any] = {}
        self.reset(mode=mode, latency=latency, delay=delay, max_ids=max_ids)

    def reset(self, **settings: Any) -> None:
        with self.lock:
            self.settings = {"mode": "ok", "count": None, "latency": 0.0, "delay": 30.0, "max_ids": 5,
                             "health": 200, "run_status": 200}
            self.settings.update(settings)
            self.stats: dict[str, Any] = {"health": 0, "chat": 0, "runs": [], "inflight": 0,
                                          "max_inflight": 0, "modes_used": []}

    def configure(self, settings: dict[str, Any]) -> None:
        if "mode" in settings and settings["mode"] not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}")
        with self.lock:
            self.settings.update(settings)

    def take_mode(self) -> str:
        """The mode for this chat request; a mode with a count reverts to ok once used up."""
        with self.lock:
            mode = str(self.settings["mode"])
            count = self.settings.get("count")
            if count is not None:
                if count <= 0:
                    mode = "ok"
                else:
                    self.settings["count"] = count - 1
            self.stats["modes_used"].append(mode)
            return mode


class Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body leave at once: no 40 ms delayed-ACK stalls

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _json(self, status: int, value: Any) -> None:
        self._send(status, json.dumps(value).encode("utf-8"))

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            raise ValueError("request body too large")
        raw = self.rfile.read(length) if length else b""
        return json.loads(raw) if raw else {}

    def do_GET(self) -> None:
        state = self.server.state
        if self.path == "/health":
            with state.lock:
                state.stats["health"] += 1
                status = int(state.settings["health"])
            self._json(status, {"status": "ok" if status == 200 else "unavailable"})
        elif self.path == "/stats":
            with state.lock:
                self._json(200, {**state.stats, "settings": dict(state.settings)})
        else:
            self._json(404, {"error": "not found"})

    def do_POST(self) -> None:
        state = self.server.state
        try:
            body = self._body()
        except ValueError as exc:
            self._json(400, {"error": str(exc)})
            return
        if self.path == "/control":
            try:
                state.configure(body if isinstance(body, dict) else {})
            except ValueError as exc:
                self._json(400, {"error": str(exc)})
                return
            self._json(200, {"ok": True})
        elif self.path == "/reset":
            state.reset(**(body if isinstance(body, dict) else {}))
            self._json(200, {"ok": True})
        elif self.path == "/v1/episteme/run":
            with state.lock:
                state.stats["runs"].append(body)
                status = int(state.settings["run_status"])
            self._json(status, {"ok": status == 200})
        elif self.path == "/v1/chat/completions":
            with state.lock:
                state.stats["chat"] += 1
                state.stats["inflight"] += 1
                state.stats["max_inflight"] = max(state.stats["max_inflight"], state.stats["inflight"])
            try:
                self._chat(body if isinstance(body, dict) else {})
            finally:
                with state.lock:
                    state.stats["inflight"] -= 1
        else:
            self._json(404, {"error": "not found"})

    def _chat(self, body: dict[str, Any]) -> None:
        state = self.server.state
        mode = state.take_mode()
        with state.lock:
            latency = float(state.settings["latency"])
            delay = float(state.settings["delay"])
            max_ids = int(state.settings["max_ids"])
        if latency:
            state.closing.wait(latency)
        if mode == "fail":
            self._json(500, {"error": "told to fail"})
            return
        if mode == "stall":
            state.closing.wait(delay)
        if mode == "badjson":
            self._send(200, b"<html>not json</html>", "text/html")
            return
        if mode in ("huge", "hugestream"):
            self._huge(chunked=mode == "hugestream")
            return
        question, paragraphs = parse_prompt(body.get("messages") or [])
        ids = choose(question, paragraphs, max_ids)
        content = json.dumps({"ids": ids})
        if mode == "junk":
            content = "I think the third paragraph is the most relevant one."
        elif mode == "invent":
            content = json.dumps({"ids": [*ids, "p999", "q1", 7]})
        elif mode == "plain":
            content = f"Sure. Here is my choice:\n```json\n{content}\n```\nHope this helps."
        elif mode == "empty":
            content = json.dumps({"ids": []})
        self._json(200, completion(str(body.get("model", "reference")), content))

    def _huge(self, *, chunked: bool) -> None:
        """A 10 MB body: with Content-Length, or streamed in chunks so only counting can stop it."""
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(HUGE_BYTES))
        self.end_headers()
        chunk = b"x" * 65536
        try:
            for _ in range(HUGE_BYTES // len(chunk)):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk) if chunked else chunk)
            if chunked:
                self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True


def completion(model: str, content: str) -> dict[str, Any]:
    """An OpenAI chat completion carrying ``content``."""
    return {
        "id": "chatcmpl-reference",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                     "finish_reason": "stop"}],
    }


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    state: State


class ReferenceServer:
    """The server on a background thread: ``with ReferenceServer() as server: server.url``."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, **settings: Any) -> None:
        self.state = State(**settings)
        self.httpd = _Server((host, port), Handler)
        self.httpd.state = self.state
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                       daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> ReferenceServer:
        self.thread.start()
        return self

    def configure(self, **settings: Any) -> None:
        self.state.configure(settings)

    def stats(self) -> dict[str, Any]:
        with self.state.lock:
            copy: dict[str, Any] = json.loads(json.dumps(self.state.stats))
            return copy

    def stop(self) -> None:
        self.state.closing.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)

    def __enter__(self) -> ReferenceServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m episteme_core.ask.reference_server",
                                     description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8089, help="port (default 8089; 0 picks a free one)")
    parser.add_argument("--mode", choices=MODES, default="ok", help="how to answer (default ok)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to every chat reply")
    parser.add_argument("--delay", type=float, default=30.0, help="seconds a stalled reply waits")
    parser.add_argument("--max-ids", type=int, default=5, help="most labels named per read (default 5)")
    args = parser.parse_args(argv)
    server = ReferenceServer(args.host, args.port, mode=args.mode, latency=args.latency, delay=args.delay,
                             max_ids=args.max_ids)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    server.start()
    sys.stdout.write(f"episteme reference reader on {server.url}\n")
    sys.stdout.flush()
    try:
        while not stop.wait(0.2):
            pass
    except KeyboardInterrupt:
        pass
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
