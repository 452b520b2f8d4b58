"""What stands before the MCP layer: the bound address, the token file, and an ASGI guard that checks
Host, Origin, the token, the method, the body's size and the requests in flight, in that order.

The guard sends no CORS headers, ever; its refusals are JSON-RPC error bodies (``id: null``) whose
``error.data`` holds the episteme code and a hint.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
import re
import stat
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

import attrs

from episteme_core.errors import EpistemeError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
Headers = dict[bytes, list[bytes]]
Refusal = tuple[int, bytes, list[tuple[bytes, bytes]]]  # status, body, extra headers

MAX_TOKEN_FILE_BYTES = 1024
MIN_TOKEN_CHARS = 16
TOKEN = re.compile(r"^[A-Za-z0-9\-._~+/]+=*$")  # RFC 6750 b64token
MCP_PATH = "/mcp"
HEALTH_PATH = "/health"
WILDCARDS = (ipaddress.ip_address("0.0.0.0"), ipaddress.ip_address("::"))


# -- the address ----------------------------------------------------------------------------------


@attrs.frozen
class Address:
    """Where the server binds: an IP address (``localhost`` is 127.0.0.1)."""

    ip: ipaddress.IPv4Address | ipaddress.IPv6Address

    @property
    def loopback(self) -> bool:
        return self.ip.is_loopback

    @property
    def wildcard(self) -> bool:
        return self.ip in WILDCARDS

    @property
    def host(self) -> str:
        """The address as it appears in a URL's host (IPv6 in brackets)."""
        return f"[{self.ip}]" if self.ip.version == 6 else str(self.ip)


def parse_host(text: str) -> Address:
    """``--host``: an IP address or ``localhost``; anything else is ``INVALID_USAGE``."""
    value = text.strip()
    if value.lower() == "localhost":
        value = "127.0.0.1"
    try:
        return Address(ipaddress.ip_address(value.strip("[]")))
    except ValueError:
        raise EpistemeError(
            "INVALID_USAGE", f"--host {text[:100]!r} is not an IP address",
            details={"host": text[:100]},
            hint="give an IP address such as 127.0.0.1 (the default), ::1 or, with --token-file, 0.0.0.0",
        ) from None


def split_host(value: str) -> tuple[str, int | None] | None:
    """A Host header value as (name, port or None); None when it is malformed."""
    if value.startswith("["):  # an IPv6 literal
        end = value.find("]")
        name, rest = value[: end + 1], value[end + 1 :]
        if end < 0:
            return None
    else:
        name, sep, port = value.rpartition(":")
        if not sep:
            return value, None
        if ":" in name:  # IPv6 without brackets is not a Host
            return None
        rest = ":" + port
    if not rest:
        return name, None
    if rest.startswith(":") and rest[1:].isdigit() and len(rest) <= 6:
        return name, int(rest[1:])
    return None


def host_allowed(host: str, address: Address, port: int) -> bool:
    """True when a Host header value (or an Origin's host) names this server: the bound address and
    port (``localhost`` too on loopback; any IP literal or ``localhost`` on a wildcard bind). This is
    the DNS rebinding check: a name an attacker controls never matches."""
    parts = split_host(host.strip().lower())
    if parts is None or not parts[0]:
        return False
    name, given = parts
    if (given if given is not None else 80) != port:
        return False
    if name == "localhost":
        return address.loopback or address.wildcard
    bare = name[1:-1] if name.startswith("[") else name
    try:
        ip = ipaddress.ip_address(bare)
    except ValueError:
        return False
    if (ip.version == 6) != name.startswith("["):
        return False
    return address.wildcard or ip == address.ip


# -- the token file -------------------------------------------------------------------------------


def read_token_file(path: Path) -> str:
    """The token in ``path``, which must be a private regular file of this user (see docs/serve.md)."""

    def refuse(problem: str, code: str = "INVALID_INPUT") -> EpistemeError:
        return EpistemeError(
            code, f"--token-file {path}: {problem}", details={"path": str(path)},
            hint="keep the token in a file of your own, mode 0600 or 0400, e.g. umask 077; "
                 "python3 -c 'import secrets; print(secrets.token_urlsafe(32))' > FILE",
        )

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0) | os.O_NONBLOCK)
    except FileNotFoundError:
        raise refuse("does not exist") from None
    except OSError as exc:
        if os.path.islink(path):
            raise refuse("is a symbolic link; give the file itself") from None
        raise refuse(f"cannot be opened: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise refuse("is not a regular file")
        if info.st_uid != os.getuid():
            raise refuse(f"is owned by uid {info.st_uid}, not by this user ({os.getuid()})")
        mode = stat.S_IMODE(info.st_mode)
        if mode not in (0o600, 0o400):
            raise refuse(f"has mode {mode:04o}; it must be 0600 or 0400 (chmod 600 FILE)")
        if info.st_size > MAX_TOKEN_FILE_BYTES:
            raise refuse(f"is {info.st_size} bytes; at most {MAX_TOKEN_FILE_BYTES}", "LIMIT_EXCEEDED")
        raw = os.read(fd, MAX_TOKEN_FILE_BYTES + 1)
    finally:
        os.close(fd)
    if len(raw) > MAX_TOKEN_FILE_BYTES:
        raise refuse(f"is over {MAX_TOKEN_FILE_BYTES} bytes", "LIMIT_EXCEEDED")
    try:
        token = raw.decode("ascii").strip()
    except UnicodeDecodeError:
        raise refuse("holds bytes that are not ASCII") from None
    if not TOKEN.match(token):
        raise refuse("must hold one token of A-Z a-z 0-9 - . _ ~ + / (and trailing =), nothing else")
    if len(token) < MIN_TOKEN_CHARS:
        raise refuse(f"holds a token of {len(token)} characters; use at least {MIN_TOKEN_CHARS}")
    return token


# -- the guard -------------------------------------------------------------------------------------


@attrs.define
class GuardSettings:
    address: Address
    port: int
    token: str | None
    max_body_bytes: int
    max_inflight: int


def refusal(status: int, message: str, code: str, hint: str | None = None, *,
            rpc_code: int = -32600, headers: list[tuple[bytes, bytes]] | None = None) -> Refusal:
    """An HTTP refusal whose body is a JSON-RPC error (``id: null``) carrying the episteme code."""
    data: dict[str, Any] = {"code": code}
    if hint:
        data["hint"] = hint
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": rpc_code, "message": message, "data": data}}
    return status, json.dumps(body, sort_keys=True, separators=(",", ":")).encode("utf-8"), headers or []


async def _respond(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                    *headers],
    })
    await send({"type": "http.response.body", "body": body, "more_body": False})


class Guard:
    """ASGI middleware in front of the MCP app; see the module docstring for the order of checks."""

    def __init__(self, app: ASGIApp, settings: GuardSettings, *, version: str) -> None:
        self.app = app
        self.settings = settings
        self.version = version
        self.inflight = 0
        self._token = settings.token.encode("ascii") if settings.token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # websockets and anything else: not served
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            return
        headers: Headers = {}
        for key, value in scope.get("headers") or ():
            headers.setdefault(bytes(key).lower(), []).append(bytes(value))
        refused = self._check_headers(headers)
        if refused is not None:
            await _respond(send, *refused)
            return
        path, method = scope.get("path", ""), scope.get("method", "")
        if path == HEALTH_PATH and method in ("GET", "HEAD"):
            health = json.dumps({"status": "ok", "name": "episteme", "version": self.version}).encode()
            await _respond(send, 200, health, [])
            return
        refused = self._check_token(headers) or self._check_route(path, method)
        if refused is not None:
            await _respond(send, *refused)
            return
        body = await self._read_body(headers, receive)
        if isinstance(body, tuple):
            await _respond(send, *body)
            return
        if self.inflight >= self.settings.max_inflight:
            await _respond(send, *refusal(
                503, f"busy: {self.settings.max_inflight} requests in flight", "RESOURCE_BUSY",
                "retry after a second (the server's --max-inflight)", rpc_code=-32000,
                headers=[(b"retry-after", b"1")],
            ))
            return
        self.inflight += 1
        try:
            await self.app(scope, _replay(body, receive), send)
        finally:
            self.inflight -= 1

    def _check_headers(self, headers: Headers) -> Refusal | None:
        s = self.settings
        hosts = headers.get(b"host") or []
        host = hosts[0].decode("latin-1") if len(hosts) == 1 else ""
        if not host_allowed(host, s.address, s.port):
            return refusal(421, "the Host header does not name this server", "INVALID_USAGE",
                           f"connect to http://{s.address.host}:{s.port}{MCP_PATH}")
        origins = headers.get(b"origin") or []
        if origins:
            origin = origins[0].decode("latin-1").strip().lower()
            scheme, sep, rest = origin.partition("://")
            if len(origins) > 1 or scheme != "http" or not sep or not host_allowed(rest, s.address, s.port):
                return refusal(403, "the Origin header is not this server's", "INVALID_USAGE",
                               "web pages of other origins may not call this server")
        return None

    def _check_token(self, headers: Headers) -> Refusal | None:
        if self._token is None:
            return None
        given = headers.get(b"authorization") or []
        offered = b""
        if len(given) == 1:
            scheme, _, credential = given[0].strip().partition(b" ")
            if scheme.lower() == b"bearer":
                offered = credential.strip()
        if offered and hmac.compare_digest(offered, self._token):
            return None
        return refusal(401, "a valid bearer token is required", "INVALID_USAGE",
                       "send Authorization: Bearer <the token in the server's --token-file>",
                       headers=[(b"www-authenticate", b'Bearer realm="episteme"')])

    def _check_route(self, path: str, method: str) -> Refusal | None:
        if path != MCP_PATH:
            return refusal(404, f"no such path {path[:100]!r}", "INVALID_USAGE",
                           f"MCP is served at {MCP_PATH}, health at {HEALTH_PATH}")
        if method != "POST":
            return refusal(405, f"method {method[:20]} is not served at {MCP_PATH}", "INVALID_USAGE",
                           "send each JSON-RPC message as a POST", headers=[(b"allow", b"POST")])
        return None

    async def _read_body(self, headers: Headers, receive: Receive) -> bytes | Refusal:
        """The whole body, at most ``max_body_bytes`` of it, before the MCP layer sees any."""
        limit = self.settings.max_body_bytes
        too_large = refusal(413, f"the request body is over {limit} bytes", "LIMIT_EXCEEDED",
                            "send smaller requests (the server's --max-body-bytes)")
        lengths = headers.get(b"content-length") or []
        if lengths:
            text = lengths[0].strip()
            if len(lengths) > 1 or not text.isdigit() or len(text) > 18:
                return refusal(400, "the Content-Length header is not a number", "INVALID_USAGE")
            if int(text) > limit:
                return too_large
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return refusal(400, "the request ended early", "INVALID_USAGE")
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                return too_large
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives the buffered body once, then what the server sends (disconnects)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
