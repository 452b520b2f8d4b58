"""Builtin ``serve`` command, and the builtin MCP tools registered through ``episteme_tools``.

The tools are registered by name and loaded on first use, so that this module (imported at every
start) stays light; their schemas and functions live in ``episteme_core.serve.builtin_tools``.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from episteme_core.hookspecs import Register, hookimpl
from episteme_core.kernel import defaults
from episteme_core.kernel.context import Outcome
from episteme_core.kernel.contracts import Command

if TYPE_CHECKING:
    from episteme_core.kernel.context import Context
    from episteme_core.serve.tools import Tool

BUILTIN_TOOLS = ("ask", "query", "show", "sources", "verify")


class _LazyTool:
    """A builtin tool whose schema and function load when the server first needs them."""

    def __init__(self, name: str) -> None:
        self.name = name

    def _tool(self) -> Tool:
        from episteme_core.serve.builtin_tools import builtin_tool

        return builtin_tool(self.name)

    @property
    def title(self) -> str | None:
        return self._tool().title

    @property
    def description(self) -> str:
        return self._tool().description

    @property
    def input_schema(self) -> Any:
        return self._tool().input_schema

    @property
    def run(self) -> Any:
        return self._tool().run


@hookimpl
def episteme_tools(register: Register) -> None:
    for name in BUILTIN_TOOLS:
        register(_LazyTool(name))


def _configure_serve(parser: argparse.ArgumentParser) -> None:
    from episteme_core.cli.parser import add_int_option

    parser.add_argument("--host", default=defaults.DEFAULT_HOST, metavar="ADDRESS",
                        help="IP address to listen on (default 127.0.0.1); an address that is not loopback "
                             "needs --token-file")
    add_int_option(parser, "--port", default=defaults.DEFAULT_PORT, low=0, high=65535,
                   help="TCP port; 0 takes any free port and prints it")
    parser.add_argument("--token-file", metavar="FILE",
                        help="require 'Authorization: Bearer TOKEN' with the token in FILE (a regular file "
                             "of yours, mode 0600 or 0400, at most 1 KiB)")
    add_int_option(parser, "--max-inflight", default=defaults.DEFAULT_MAX_INFLIGHT, low=defaults.MIN_INFLIGHT,
                   high=defaults.MAX_INFLIGHT, help="most MCP requests handled at once; more get 503")
    add_int_option(parser, "--max-body-bytes", default=defaults.DEFAULT_MAX_BODY_BYTES,
                   low=defaults.MIN_BODY_BYTES, high=defaults.MAX_BODY_BYTES,
                   help="largest request body; larger gets 413")
    add_int_option(parser, "--request-timeout", default=defaults.DEFAULT_REQUEST_TIMEOUT,
                   low=defaults.MIN_REQUEST_TIMEOUT, high=defaults.MAX_REQUEST_TIMEOUT,
                   help="seconds a connection has to send a request's headers, and the longest it may "
                        "stay silent while a body is due; then it is closed")
    add_int_option(parser, "--body-timeout", default=defaults.DEFAULT_BODY_TIMEOUT,
                   low=defaults.MIN_BODY_TIMEOUT, high=defaults.MAX_BODY_TIMEOUT,
                   help="seconds from a request's headers to its whole body; then the connection is "
                        "closed")


def _run_serve(args: argparse.Namespace, ctx: Context) -> Outcome:
    from pathlib import Path

    from episteme_core.serve.app import ServeOptions, serve

    options = ServeOptions(
        host=args.host, port=args.port,
        token_file=Path(args.token_file).expanduser() if args.token_file else None,
        max_inflight=args.max_inflight, max_body_bytes=args.max_body_bytes,
        request_timeout=args.request_timeout, body_timeout=args.body_timeout,
    )

    def announce(text: str, data: dict[str, Any]) -> None:
        if ctx.as_json:
            from episteme_core.records.canonical import canonical_text

            event = {"type": "progress", "command": "serve", "stage": "listening", "current": 0,
                     "total": None, "status": "started", "message": data["url"]}
            sys.stderr.write(canonical_text(event) + "\n")
        else:
            sys.stderr.write(f"episteme serve: {text}\n")
        sys.stderr.flush()

    def warn(code: str, message: str) -> None:
        if ctx.as_json:  # in the envelope when the server stops
            ctx.warn(code, message)
        else:  # now: the server may run for days
            sys.stderr.write(f"warning: {message}\n")

    if not ctx.as_json:  # the plugins' warnings now, not when the server stops (it may run for days)
        for earlier in ctx.warnings:
            sys.stderr.write(f"warning: {earlier['message']}\n")
        ctx.warnings.clear()
    data = serve(ctx.home, ctx.plugins, options, announce=announce, warn=warn)
    return Outcome(data=data, text=f"stopped serving {data['url']}")


@hookimpl
def episteme_commands(register: Register) -> None:
    register(Command(
        name="serve",
        help="serve query, ask, show, sources and verify as MCP tools over HTTP (loopback by default)",
        description=(
            "Serve the home's read commands as MCP tools over streamable HTTP at /mcp (JSON responses),\n"
            "and GET /health. Loopback only unless --token-file is given; Host and Origin are checked,\n"
            "no CORS headers are sent, bodies and requests in flight are bounded. SIGTERM drains the\n"
            "calls in flight and exits 143."
        ),
        configure=_configure_serve,
        run=_run_serve,
    ))
