"""The listening socket: TCP, so that asyncio turns Nagle off on each accepted connection (without it a
kept-alive connection waits ~40 ms per reply for a delayed ACK)."""

from __future__ import annotations

import asyncio
import socket

import pytest

from episteme_core.errors import EpistemeError
from episteme_core.serve.app import bind
from episteme_core.serve.guards import parse_host


def test_accepted_connections_have_tcp_nodelay() -> None:
    sock = bind(parse_host("127.0.0.1"), 0)
    assert sock.proto == socket.IPPROTO_TCP
    seen: dict[str, int] = {}

    async def main() -> None:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            accepted = writer.get_extra_info("socket")
            seen["nodelay"] = accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
            writer.close()

        server = await asyncio.start_server(handle, sock=sock)
        async with server:
            reader, writer = await asyncio.open_connection(*sock.getsockname()[:2])
            await reader.read()
            writer.close()

    asyncio.run(main())
    assert seen["nodelay"] == 1


def test_a_port_taken_is_resource_busy() -> None:
    first = bind(parse_host("127.0.0.1"), 0)
    try:
        with pytest.raises(EpistemeError) as busy:
            bind(parse_host("127.0.0.1"), first.getsockname()[1])
        assert busy.value.code == "RESOURCE_BUSY" and busy.value.retryable
    finally:
        first.close()
