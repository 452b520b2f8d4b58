"""Call one tool of a running ``episteme serve`` with the MCP SDK's client, as an agent does.

    python examples/mcp_call.py --log serve.log query term="percent-encoded byte" limit=2
    python examples/mcp_call.py --url http://127.0.0.1:18113/mcp sources

Each ``NAME=VALUE`` is one argument of the tool: VALUE as JSON when it parses (``limit=2``,
``source='["file"]'``), else as a string.

``--log`` waits (up to a minute) for the line ``episteme serve`` writes to stderr when it listens and
takes the URL from it, so the server can take any free port (``--port 0``); until the call connects
it reads the log again (a log left by an earlier server names an old port). Prints the tools the
server offers, then the tool's result: query hits as rank, citation and the start of the snippet,
anything else as its JSON. Exits 1 when the tool answers with an error.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

LISTENING = re.compile(r"listening on (http://\S+/mcp)")
WAIT_SECONDS = 60


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--url", help="the server's MCP endpoint")
    where.add_argument("--log", type=Path, help="the server's stderr, which names its URL once it listens")
    parser.add_argument("tool", help="the tool to call: query, ask, show, sources, verify, ...")
    parser.add_argument("arguments", nargs="*", metavar="NAME=VALUE", help="the tool's arguments")
    args = parser.parse_args(argv)
    arguments = dict(map(argument, args.arguments))
    import anyio

    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        url = args.url or wait_for_url(args.log, deadline)
        try:
            tools, result = anyio.run(call, url, args.tool, arguments)
            break
        except Exception:  # not listening (yet): with --log, read it again until the deadline
            if args.url or time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    print(f"{url}: tools {', '.join(tools)}")
    content = result.structured_content
    if result.is_error or content is None:
        print(result.content[0].text if result.content else "(no content)")
        return 1 if result.is_error else 0
    if args.tool == "query":
        print(f"{args.tool}: {content['total']} result(s), showing {len(content['results'])}")
        for hit in content["results"]:
            snippet = " ".join(hit["snippet"].split())
            print(f"  {hit['rank']}. {hit['citation'].get('link') or hit['source']}  [{hit['contentTrust']}]")
            print(f"     {snippet[:150]}{'…' if len(snippet) > 150 else ''}")
    else:
        print(json.dumps(content, indent=1, ensure_ascii=False)[:4000])
    return 0


def argument(text: str) -> tuple[str, Any]:
    """``NAME=VALUE``: VALUE as JSON when it parses, else the string itself."""
    name, equals, value = text.partition("=")
    if not equals or not name:
        sys.exit(f"mcp_call: {text!r} is not NAME=VALUE")
    try:
        return name, json.loads(value)
    except ValueError:
        return name, value


def wait_for_url(log: Path, deadline: float) -> str:
    """The URL in ``log`` once the server has written it; exit when it never does."""
    while time.monotonic() < deadline:
        text = log.read_text("utf-8", errors="replace") if log.exists() else ""
        found = LISTENING.search(text)
        if found:
            return found.group(1)
        if "error:" in text:
            sys.exit(f"episteme serve failed: {text.strip()}")
        time.sleep(0.1)
    sys.exit(f"{log}: no 'listening on' line after {WAIT_SECONDS} s")


async def call(url: str, tool: str, arguments: dict[str, Any]) -> tuple[list[str], Any]:
    from mcp import Client

    async with Client(url) as client:
        listed = await client.list_tools()
        return [t.name for t in listed.tools], await client.call_tool(tool, arguments)


if __name__ == "__main__":
    sys.exit(main())
