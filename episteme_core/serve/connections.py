"""The HTTP connections themselves: uvicorn's h11 protocol with a deadline for each request's headers
and body, and bounds on open connections per client address and in total.

uvicorn's h11 protocol has no header timeout, and its connection bound answers 503 to everyone once
enough sockets are open, idle or not; here a connection waiting for a request's headers is the first
to be closed when a bound is reached, so sockets that never send a byte cannot hold anyone out.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import struct
import termios
from typing import Any

import attrs
import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from episteme_core.kernel.defaults import DEFAULT_BODY_TIMEOUT, DEFAULT_REQUEST_TIMEOUT

HEADER_SECONDS = float(DEFAULT_REQUEST_TIMEOUT)  # from connect (or the last response) to complete headers
BODY_GAP_SECONDS = float(DEFAULT_REQUEST_TIMEOUT)  # the longest silence while a request's body is due
BODY_SECONDS = float(DEFAULT_BODY_TIMEOUT)  # from a request's complete headers to its complete body
KINDS = ("silent", "partial request", "kept alive")  # idle connections, in the order they are closed


@attrs.frozen
class ConnectionLimits:
    """How many connections may be open from one client address and in all, and the deadlines."""

    per_address: int
    total: int
    header_seconds: float = HEADER_SECONDS
    body_gap_seconds: float = BODY_GAP_SECONDS
    body_seconds: float = BODY_SECONDS


def connection_limits(max_inflight: int, *, request_seconds: float = HEADER_SECONDS,
                      body_seconds: float = BODY_SECONDS) -> ConnectionLimits:
    """The bounds for a server with ``max_inflight`` request slots: one address may use every slot
    twice over, all addresses together four times (idle keep-alive connections count too); a
    request's headers are due within ``request_seconds``, as is each piece of its body, and its whole
    body within ``body_seconds`` of the headers (``serve --request-timeout``, ``--body-timeout``)."""
    return ConnectionLimits(per_address=2 * max_inflight + 8, total=4 * max_inflight + 16,
                            header_seconds=request_seconds, body_gap_seconds=request_seconds,
                            body_seconds=body_seconds)


class Registry:
    """The open connections in the order they last became idle, in all and by client address."""

    def __init__(self, limits: ConnectionLimits) -> None:
        self.limits = limits
        self.open: dict[GuardedH11Protocol, None] = {}
        self.by_address: dict[str, dict[GuardedH11Protocol, None]] = {}

    def admit(self, conn: GuardedH11Protocol) -> bool:
        """Make room for ``conn`` by closing the connection idle longest (of its address first);
        False when every connection in the way is busy with a request."""
        mine = self.by_address.get(conn.address, {})
        if len(mine) >= self.limits.per_address and not self._evict(mine):
            return False
        if len(self.open) >= self.limits.total and not self._evict(self.open):
            return False
        self.open[conn] = None
        self.by_address.setdefault(conn.address, {})[conn] = None
        return True

    def idle_again(self, conn: GuardedH11Protocol) -> None:
        """``conn`` waits for a request again: it goes last in the eviction order."""
        if conn in self.open:
            del self.open[conn]
            self.open[conn] = None
            mine = self.by_address[conn.address]
            del mine[conn]
            mine[conn] = None

    def remove(self, conn: GuardedH11Protocol) -> None:
        if conn not in self.open:  # refused, or evicted already
            return
        del self.open[conn]
        mine = self.by_address[conn.address]
        del mine[conn]
        if not mine:
            del self.by_address[conn.address]

    def _evict(self, among: dict[GuardedH11Protocol, None]) -> bool:
        """Close one idle connection: one that has sent nothing, else one with a partial request (a
        slowloris), else a kept-alive one; the one idle longest of its kind. False when all are busy."""
        victim: GuardedH11Protocol | None = None
        best = len(KINDS)
        for conn in among:
            kind = conn.idle_kind()
            if kind is not None and kind < best:
                victim, best = conn, kind
                if kind == 0:
                    break
        if victim is None:
            return False
        self.remove(victim)
        victim.transport.close()
        return True


def _busy_reply() -> bytes:
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {
        "code": -32000, "message": "busy: too many open connections",
        "data": {"code": "RESOURCE_BUSY", "hint": "retry after a second"}}},
        sort_keys=True, separators=(",", ":")).encode("utf-8")
    head = ("HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\n"
            f"connection: close\r\ncontent-length: {len(body)}\r\n\r\n")
    return head.encode("ascii") + body


BUSY_REPLY = _busy_reply()


class GuardedH11Protocol(H11Protocol):
    """One HTTP connection, closed when a request's headers or body do not arrive in time, or when
    it is idle and a new connection needs its place."""

    registry: Registry  # set on the subclass ``guarded_protocol`` makes

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.address = self.client[0] if self.client else ""
        self._phase: str | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._body_until = 0.0
        self.served = False  # a response has been sent on this connection
        self._received = False  # a byte has come
        if not self.registry.admit(self):
            transport.write(BUSY_REPLY)
            transport.close()
            return
        self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        self.registry.remove(self)
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        self._received = True
        super().data_received(data)
        self._watch(received=True)

    def on_response_complete(self) -> None:
        self.served = True
        super().on_response_complete()
        self._watch()

    @property
    def idle(self) -> bool:
        """Waiting for a request's headers (none of them yet, or some): nothing in flight."""
        return self.conn.their_state is h11.IDLE

    def idle_kind(self) -> int | None:
        """This connection's place in ``KINDS`` when it is idle; None when a request is in flight."""
        if not self.idle:
            return None
        if self.served:
            return 2
        return 1 if self._received or _pending(self.transport) else 0

    def _watch(self, *, received: bool = False) -> None:
        """Arm the deadline of the phase the connection is in: headers, body, or none (in flight)."""
        if self.transport.is_closing():
            self._cancel()
            return
        state = self.conn.their_state
        phase = "headers" if state is h11.IDLE else "body" if state is h11.SEND_BODY else None
        limits = self.registry.limits
        now = self.loop.time()
        if phase == self._phase and not (phase == "body" and received):
            return
        if phase != self._phase:
            self._cancel()
            self._phase = phase
            if phase == "headers":
                self.registry.idle_again(self)
                self._timer = self.loop.call_later(limits.header_seconds, self._expire)
                return
            self._body_until = now + limits.body_seconds
        if phase == "body":
            self._cancel()
            due = min(self._body_until, now + limits.body_gap_seconds)
            self._timer = self.loop.call_later(max(0.0, due - now), self._expire)

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expire(self) -> None:
        self._timer = None
        if not self.transport.is_closing():
            self.transport.close()


def _pending(transport: asyncio.BaseTransport) -> bool:
    """True when bytes wait in the kernel for this connection (a request not read yet, not silence)."""
    sock = transport.get_extra_info("socket")
    try:
        waiting = fcntl.ioctl(sock.fileno(), termios.FIONREAD, b"\0\0\0\0")
    except (OSError, AttributeError):
        return True
    return bool(struct.unpack("i", waiting)[0])


def guarded_protocol(limits: ConnectionLimits) -> type[GuardedH11Protocol]:
    """A protocol class for ``uvicorn.Config(http=...)`` whose connections share one registry."""
    attributes: dict[str, Any] = {"registry": Registry(limits)}
    return type("GuardedH11Protocol", (GuardedH11Protocol,), attributes)
