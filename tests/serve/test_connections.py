"""The server cannot be silenced: hundreds of sockets that never send a byte, and slowloris ones that
trickle their headers or body, are closed at their deadline or evicted when a bound is reached, while a
real SDK client's calls and ``/health`` all succeed. Everything connects over loopback (the other
client addresses are 127.0.0.x, which Linux routes to the loopback device)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from episteme_core.serve.connections import BUSY_REPLY, ConnectionLimits, guarded_protocol
from episteme_core.testing import invoke

from .attack import closed as _closed
from .conftest import Served, mcp_call, start_server

IDLE, SLOW = 300, 100  # well past the default bounds (72 per address, 144 in all)
BOUND = 90.0  # seconds: against a hang only
ATTACK = Path(__file__).with_name("attack.py")


def _connect(port: int, source: str = "127.0.0.1") -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(10)
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    return sock


def _wait_closed(socks: list[socket.socket], bound: float = BOUND) -> list[bool]:
    deadline = time.monotonic() + bound
    while not all(_closed(s) for s in socks) and time.monotonic() < deadline:
        time.sleep(0.1)
    return [_closed(s) for s in socks]


def _head(port: int, extra: str = "") -> bytes:
    return (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\n"
            f"accept: application/json, text/event-stream\r\n{extra}").encode("ascii")


ATTACKERS = ["127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"]  # the client's own too


@contextlib.contextmanager
def attack(port: int) -> Iterator[dict[str, int]]:
    """The flood of ``attack.py`` (its own process) while the block runs; then its counts."""
    proc = subprocess.Popen([sys.executable, str(ATTACK), str(port), str(IDLE), str(SLOW), *ATTACKERS],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    counts: dict[str, int] = {}
    try:
        assert proc.stdout.readline().strip() == "ready"
        yield counts
    finally:
        out, _ = proc.communicate("", timeout=BOUND)
        counts.update(json.loads(out.strip().splitlines()[-1]))


def test_idle_and_slowloris_sockets_never_silence_the_server(server: Served) -> None:
    health, calls = [], []
    with attack(server.port) as counts:
        started = time.monotonic()
        # Past the header deadline, so the calls meet the evictions and the deadlines' closes both.
        while len(calls) < 10 or time.monotonic() - started < 7:
            health.append(httpx.get(server.base + "/health", timeout=30).status_code)
            result = mcp_call(server.url, "sources", {})
            calls.append((result.is_error, result.structured_content["records"]))
    assert counts["closedByServer"] > 0  # the server closed attackers' sockets, and they came back
    assert set(health) == {200}
    assert set(calls) == {(False, 5)}
    assert server.proc.poll() is None


@pytest.mark.skipif(not hasattr(socket, "TCP_DEFER_ACCEPT"),
                    reason="the kernel holds a connection until its first bytes only on Linux")
def test_a_client_slow_to_send_after_connecting_is_never_taken_for_a_silent_socket(server: Served) -> None:
    # A client on a busy machine may connect and send its request tens of milliseconds later. Before
    # the kernel held such connections back, about one in ten of these was closed to make room.
    failed: list[object] = []
    request = f"GET /health HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode()
    with attack(server.port):
        for _ in range(60):
            with _connect(server.port) as sock:
                time.sleep(0.05)
                try:
                    sock.sendall(request)
                    reply = sock.recv(1 << 16)
                except OSError as exc:
                    reply = repr(exc).encode()
                if not reply.startswith(b"HTTP/1.1 200"):
                    failed.append(reply[:80])
    assert failed == []


REQUEST_TIMEOUT, BODY_TIMEOUT = 1, 3  # the deadlines' lower bound, and a body's a little past it


def test_silent_and_trickling_connections_are_closed_at_their_deadlines(example_home: Path) -> None:
    served = start_server(example_home, "--request-timeout", str(REQUEST_TIMEOUT),
                          "--body-timeout", str(BODY_TIMEOUT))
    try:
        _closed_at_the_deadlines(served.port)
        assert httpx.get(served.base + "/health", timeout=30).status_code == 200
    finally:
        served.stop()


def _closed_at_the_deadlines(port: int) -> None:
    started = time.monotonic()
    silent = _connect(port)
    header_trickle = _connect(port)
    body_silent = _connect(port)
    body_silent.sendall(_head(port, "content-length: 100\r\n\r\n") + b'{"jsonrpc"')
    body_trickle = _connect(port)
    body_trickle.sendall(_head(port, "content-length: 10000\r\n\r\n"))
    kept_alive = _connect(port)
    kept_alive.sendall(f"GET /health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    assert kept_alive.recv(1 << 16).startswith(b"HTTP/1.1 200")
    trickling = {header_trickle: b"x-a: b\r\n", body_trickle: b" "}
    socks = [silent, header_trickle, body_silent, body_trickle, kept_alive]
    closed_after: dict[socket.socket, float] = {}
    try:
        while len(closed_after) < len(socks) and time.monotonic() - started < BOUND:
            for sock in socks:
                if sock not in closed_after and _closed(sock):
                    closed_after[sock] = time.monotonic() - started
            for sock, piece in trickling.items():  # a byte every 0.2 s: never silent for long
                with contextlib.suppress(OSError):
                    sock.send(piece)
            time.sleep(0.2)
        assert len(closed_after) == len(socks)
        # the body came a byte at a time, never silent past --request-timeout: --body-timeout
        # closed it, no sooner, and long before the default 30 s would have
        assert BODY_TIMEOUT - 0.1 <= closed_after[body_trickle] < 25
        assert closed_after[silent] >= REQUEST_TIMEOUT - 0.1  # --request-timeout, no sooner
    finally:
        for sock in socks:
            sock.close()


@pytest.mark.parametrize("args", [["--request-timeout", "0"], ["--request-timeout", "301"],
                                  ["--body-timeout", "0"], ["--body-timeout", "3601"]])
def test_deadlines_past_their_bounds_are_invalid_usage(example_home: Path, args: list[str]) -> None:
    result = invoke("--home", str(example_home), "--json", "serve", "--port", "0", *args)
    assert result.exit_code == 2 and result.envelope["error"]["code"] == "INVALID_USAGE"
    assert args[0] in result.envelope["error"]["message"]


def test_deadlines_at_their_upper_bounds_serve(example_home: Path) -> None:
    served = start_server(example_home, "--request-timeout", "300", "--body-timeout", "3600")
    try:
        assert httpx.get(served.base + "/health", timeout=30).status_code == 200
        assert mcp_call(served.url, "sources", {}).is_error is False
    finally:
        assert served.stop() == 143


# -- the bounds, on a small in-process server ------------------------------------------------------


class Small:
    """uvicorn with the guarded protocol in a thread: 3 connections per address, 5 in all, deadlines
    long enough never to be reached; ``/hold`` answers only once ``release`` is set."""

    def __init__(self) -> None:
        import uvicorn

        self.release = threading.Event()
        self.held = 0  # requests to /hold the app has received
        limits = ConnectionLimits(per_address=3, total=5, header_seconds=600, body_seconds=600,
                                  body_gap_seconds=600)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]
        config = uvicorn.Config(self.app, log_config=None, log_level="warning", access_log=False,
                                lifespan="off", http=guarded_protocol(limits), ws="none", interface="asgi3",
                                limit_concurrency=None, timeout_graceful_shutdown=1)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=lambda: asyncio.run(self.server.serve([self.sock])),
                                       daemon=True)

    async def app(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["path"] == "/hold":
            self.held += 1
            while not self.release.is_set():
                await asyncio.sleep(0.02)
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"ok"})

    def get(self, path: str, source: str) -> socket.socket:
        sock = _connect(self.port, source)
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        return sock

    def answers(self, source: str) -> bytes:
        with self.get("/", source) as sock:
            return sock.recv(1 << 16)


@pytest.fixture
def small() -> Iterator[Small]:
    served = Small()
    served.thread.start()
    deadline = time.monotonic() + BOUND
    while not served.server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    yield served
    served.release.set()
    served.server.should_exit = True
    served.thread.join(BOUND)
    served.sock.close()


def _still_open(socks: list[socket.socket]) -> list[bool]:
    """Which of ``socks`` are open once a later request has been answered (closes have landed)."""
    return [not _closed(s) for s in socks]


def test_one_address_past_its_bound_loses_its_longest_idle_connections(small: Small) -> None:
    mine = [_connect(small.port, "127.0.0.2") for _ in range(5)]
    other = _connect(small.port, "127.0.0.3")
    assert small.answers("127.0.0.4").startswith(b"HTTP/1.1 200")
    assert _wait_closed(mine[:2]) == [True, True]
    assert _still_open(mine[2:] + [other]) == [True, True, True, True]


def test_past_the_total_the_longest_idle_connection_goes(small: Small) -> None:
    first = [_connect(small.port, f"127.0.0.{n}") for n in (2, 3, 4, 5)]
    newer = _connect(small.port, "127.0.0.6")
    assert small.answers("127.0.0.7").startswith(b"HTTP/1.1 200")  # the sixth: 127.0.0.2's goes
    assert _wait_closed(first[:1]) == [True]
    assert _still_open(first[1:] + [newer]) == [True, True, True, True]


def test_connections_busy_with_a_request_are_never_evicted(small: Small) -> None:
    busy = [small.get("/hold", f"127.0.0.{n}") for n in (2, 3, 4, 5, 6)]
    deadline = time.monotonic() + BOUND
    while small.held < 5 and time.monotonic() < deadline:  # the five requests reach the app
        time.sleep(0.02)
    with _connect(small.port, "127.0.0.7") as refused:
        reply = b""
        while chunk := refused.recv(1 << 16):
            reply += chunk
    assert reply == BUSY_REPLY and b"RESOURCE_BUSY" in reply
    assert _still_open(busy) == [True] * 5
    small.release.set()
    for sock in busy:
        assert sock.recv(1 << 16).startswith(b"HTTP/1.1 200")
        sock.close()
    assert small.answers("127.0.0.7").startswith(b"HTTP/1.1 200")
