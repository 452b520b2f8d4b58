"""``serve``: check the address and the token, gather the tools, bind, and run the HTTP app until a
signal; then drain the calls in flight and let the signal end the process (143 for SIGTERM).

The app is the SDK's streamable-HTTP app (stateless, JSON responses) behind ``Guard``; uvicorn runs
it on a socket bound here, so the port is known (``--port 0``) before anything is announced.
"""

from __future__ import annotations

import errno
import logging
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from episteme_core import __version__
from episteme_core.errors import EpistemeError
from episteme_core.kernel.contracts import ToolLike
from episteme_core.kernel.defaults import (
    DEFAULT_BODY_TIMEOUT,
    DEFAULT_HOST,
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_INFLIGHT,
    DEFAULT_PORT,
    DEFAULT_REQUEST_TIMEOUT,
)
from episteme_core.serve.guards import Address, parse_host, read_token_file

DRAIN_SECONDS = 30
KEEP_ALIVE_SECONDS = 5  # an idle kept-alive connection is closed after this
Announce = Callable[[str, dict[str, Any]], None]


@attrs.frozen
class ServeOptions:
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    token_file: Path | None = None
    max_inflight: int = DEFAULT_MAX_INFLIGHT
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT  # seconds: a request's headers; silence in a body
    body_timeout: float = DEFAULT_BODY_TIMEOUT  # seconds: from a request's headers to its whole body


def check_address(options: ServeOptions) -> tuple[Address, str | None]:
    """The address to bind and the token; a non-loopback address without a token is refused."""
    address = parse_host(options.host)
    if not address.loopback and options.token_file is None:
        raise EpistemeError(
            "INVALID_USAGE",
            f"--host {options.host} is not a loopback address; serving beyond this machine needs a token",
            details={"host": options.host},
            hint="give --token-file FILE (a private file holding the token), or keep --host 127.0.0.1",
        )
    token = read_token_file(options.token_file) if options.token_file is not None else None
    return address, token


def served_tools(plugins: Any, warn: Callable[[str, str], None]) -> list[ToolLike]:
    """Every registered tool that can be served; the others are reported through ``warn``."""
    from episteme_core.serve.calls import tool_problem

    tools = []
    for name, component in sorted(plugins.of("tool").items()):
        problem = tool_problem(component.obj)
        if problem is None:
            tools.append(component.obj)
        else:
            warn("TOOL_INVALID", f"tool {name!r} of plugin {component.plugin} is not served: {problem}")
    return tools


LISTEN_BACKLOG = 1024  # connections the kernel may hold for the server (deferred ones among them)
DEFER_SECONDS = 1  # how long the kernel holds a connection that has sent nothing before handing it over


def defer_first_byte(sock: socket.socket) -> None:
    """Have the kernel hand over a connection only once its first bytes have come (Linux), or after
    ``DEFER_SECONDS`` without any: a client slow to send after its connect (a busy machine) is then never
    taken for a silent socket and closed to make room."""
    option = getattr(socket, "TCP_DEFER_ACCEPT", None)
    if option is not None:
        sock.setsockopt(socket.IPPROTO_TCP, option, DEFER_SECONDS)


def bind(address: Address, port: int) -> socket.socket:
    """A listening socket on ``address:port`` (0: any free port)."""
    family = socket.AF_INET6 if address.ip.version == 6 else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets whose protocol says TCP, and
    # without it every reply on a kept-alive connection waits ~40 ms for a delayed ACK (Nagle).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((str(address.ip), port))
        defer_first_byte(sock)
        sock.listen(LISTEN_BACKLOG)
    except OSError as exc:
        sock.close()
        where = f"{address.host}:{port}"
        if exc.errno == errno.EADDRINUSE:
            raise EpistemeError(
                "RESOURCE_BUSY", f"{where} is already in use", details={"address": where},
                hint="stop the other server or choose another --port (0: any free port)",
            ) from None
        raise EpistemeError("INVALID_USAGE", f"cannot listen on {where}: {exc.strerror or exc}",
                            details={"address": where}) from None
    return sock


def _quiet_logging() -> None:
    """Warnings and errors (tool crashes with their traceback) as plain lines on stderr."""
    root = logging.getLogger()
    if not root.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("episteme serve: %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
    root.setLevel(logging.WARNING)


def _open_early(cache: Any) -> None:
    """Open the committed shards (and let them warm: numpy imported) before the server says it
    listens, so its first call costs what every later one does. Without an index, or with a stale
    one, nothing is opened: the first call that needs shards answers the CLI's error."""
    try:
        cache.get()
    except EpistemeError:
        pass


def serve(home: Any, plugins: Any, options: ServeOptions, *, announce: Announce,
          warn: Callable[[str, str], None]) -> dict[str, Any]:
    """Serve ``home``'s tools over MCP until a signal. ``announce(text, data)`` is called once, when the
    server accepts connections; a signal ends it with ``Cancelled`` after the calls in flight finish."""
    address, token = check_address(options)
    tools = served_tools(plugins, warn)
    _quiet_logging()
    import asyncio

    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    from episteme_core.serve.calls import Caller
    from episteme_core.serve.connections import connection_limits, guarded_protocol
    from episteme_core.serve.guards import Guard, GuardSettings
    from episteme_core.serve.mcp import EpistemeMCP
    from episteme_core.serve.shardcache import ShardCache

    cache = ShardCache(home, plugins, long_lived=True)
    _open_early(cache)
    caller = Caller(tools, home, plugins, cache.get)
    server = EpistemeMCP(caller)
    app = server.streamable_http_app(
        stateless_http=True, json_response=True, max_request_body_size=options.max_body_bytes,
        # Guard checks Host and Origin for every path against the bound address and port.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        host=str(address.ip),
    )
    sock = bind(address, options.port)
    port = sock.getsockname()[1]
    guarded = Guard(app, GuardSettings(address=address, port=port, token=token,
                                       max_body_bytes=options.max_body_bytes,
                                       max_inflight=options.max_inflight), version=__version__)
    url = f"http://{address.host}:{port}/mcp"
    names = sorted(caller.tools)
    data = {"url": url, "home": str(home.root), "tools": names, "token": token is not None,
            "maxInflight": options.max_inflight, "maxBodyBytes": options.max_body_bytes,
            "requestTimeout": options.request_timeout, "bodyTimeout": options.body_timeout}

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            if not self.should_exit:
                announce(f"listening on {url} (home {home.root}; tools: {', '.join(names)})", data)

    # Connections are bounded and timed by the protocol (per address, in total, header and body
    # deadlines), not by uvicorn's limit_concurrency, which answers 503 to all once idle sockets fill it.
    limits = connection_limits(options.max_inflight, request_seconds=options.request_timeout,
                               body_seconds=options.body_timeout)
    protocol = guarded_protocol(limits)
    config = uvicorn.Config(guarded, log_config=None, log_level="warning", access_log=False, lifespan="on",
                            http=protocol, ws="none", server_header=False, limit_concurrency=None,
                            timeout_keep_alive=KEEP_ALIVE_SECONDS, timeout_graceful_shutdown=DRAIN_SECONDS)
    try:
        asyncio.run(Server(config).serve(sockets=[sock]))
    finally:
        sock.close()
    return {**data, "stopped": True}
