"""The graph tools over MCP: a real ``episteme serve`` (a subprocess on a free loopback port, this
plugin loaded through its entry point) called with the MCP SDK's client. Each tool returns what the
command's ``--json`` gives, refuses as the command refuses (a tool error with the same code), and is
bounded (input size, result items)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import fixture_graph, rescore, write_graph

from episteme_core.testing import invoke

TEXT = (
    "The lighthouse keeper records the tide at dawn. He notes each ship by name.\n\n"
    "Storms arrive from the west in autumn; the keeper lights the lamp early.\n"
)
LISTENING = re.compile(r"listening on (http://\S+/mcp)")


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("served-graph")
    (root / "keeper.txt").write_text(TEXT, "utf-8")
    (root / "map.json").write_text(
        json.dumps(
            [
                {
                    "sourceUrl": "https://example.org/keeper.txt",
                    "localPath": "keeper.txt",
                    "contentType": "text/plain",
                }
            ]
        ),
        "utf-8",
    )
    result = invoke("--home", str(root / "home"), "pipeline", "--map", str(root / "map.json"))
    assert result.exit_code == 0, result.stderr
    return root / "home"


@pytest.fixture(scope="module")
def url(home: Path) -> Iterator[str]:
    """``episteme serve --port 0`` on the home, with this plugin loaded; stopped after the module."""
    env = {**os.environ, "EPISTEME_LOAD_PLUGINS": "graph"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "episteme_core", "--home", str(home), "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    found: list[str] = []
    log: list[str] = []
    ready = threading.Event()

    def drain() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            log.append(line)
            match = LISTENING.search(line)
            if match and not found:
                found.append(match.group(1))
                ready.set()
        ready.set()

    threading.Thread(target=drain, daemon=True).start()
    deadline = time.monotonic() + 60
    while not ready.wait(0.1) and time.monotonic() < deadline:
        pass
    try:
        assert found, "".join(log)
        yield found[0]
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def call(url: str, name: str, arguments: dict[str, Any]) -> Any:
    """One tool call on a fresh connection; a JSON-RPC error is raised as the SDK's ``MCPError``
    (caught inside the client's task group, raised outside it)."""
    import anyio
    from mcp import Client
    from mcp.shared.exceptions import MCPError

    async def go() -> Any:
        async with Client(url) as client:
            try:
                return await client.call_tool(name, arguments)
            except MCPError as exc:
                return exc

    result = anyio.run(go)
    if isinstance(result, MCPError):
        raise result
    return result


def listed(url: str) -> dict[str, Any]:
    import anyio
    from mcp import Client

    async def go() -> Any:
        async with Client(url) as client:
            return {tool.name: tool for tool in (await client.list_tools()).tools}

    return dict(anyio.run(go))


def test_the_graph_tools_are_listed_beside_the_builtins(url: str) -> None:
    tools = listed(url)
    assert {"graph_validate", "graph_verify", "graph_evidence", "query", "ask"} <= set(tools)
    assert tools["graph_validate"].input_schema["required"] == ["graph"]


def test_graph_validate_gives_the_commands_report(url: str, tmp_path: Path) -> None:
    graph = fixture_graph("contextual")
    result = call(url, "graph_validate", {"graph": graph})
    assert not result.is_error, result.content[0].text
    path = write_graph(tmp_path / "g.knowledge.json", graph)
    cli = invoke("graph", "validate", str(path), "--json").envelope["data"]
    assert result.structured_content == {**cli, "file": "graph", "truncated": False}
    as_text = call(url, "graph_validate", {"graph": json.dumps(graph)})
    assert as_text.structured_content == result.structured_content


def test_an_invalid_graph_is_a_tool_error_with_its_findings(url: str) -> None:
    graph = fixture_graph("minimal")
    graph["edges"][0]["target"] = "delta"
    result = call(url, "graph_validate", {"graph": graph, "maxFindings": 1})
    assert result.is_error
    error = result.structured_content["error"]
    assert error["code"] == "INVALID_INPUT"
    assert len(error["details"]["findings"]) == 1 and error["details"]["truncated"]
    assert error["details"]["errorCount"] >= 1


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ({"graph": '{"a": 1, "a": 2}'}, "INVALID_INPUT"),  # strict JSON: a duplicate key
        ({"graph": "[1, 2]"}, "INVALID_INPUT"),  # not an object
        ({"graph": {}, "maxFindings": 0}, "INVALID_USAGE"),  # past a bound
        ({"graph": {}, "maxFindings": 2001}, "INVALID_USAGE"),
        ({"graph": 5}, "INVALID_USAGE"),
        ({}, "INVALID_USAGE"),
    ],
)
def test_bad_arguments_are_refused_as_tool_errors(url: str, arguments: dict[str, Any], code: str) -> None:
    result = call(url, "graph_validate", arguments)
    assert result.is_error and result.structured_content["error"]["code"] == code


def test_a_graph_past_the_input_bound_is_refused(url: str) -> None:
    """The server's request body bound (64 KiB by default) stops a large graph before the tool; the
    tool's own bound (16 MiB, the largest body a server accepts) holds past it."""
    from mcp.shared.exceptions import MCPError

    from episteme_core.api import EpistemeError
    from episteme_graph.tools import MAX_INPUT_BYTES, run_validate

    with pytest.raises(MCPError, match="over 65536 bytes"):
        call(url, "graph_validate", {"graph": "x" * 70_000})
    with pytest.raises(EpistemeError) as caught:
        run_validate({"graph": " " * (MAX_INPUT_BYTES + 1)}, None)
    assert caught.value.code == "LIMIT_EXCEEDED"


def test_graph_evidence_turns_the_servers_query_into_evidence_that_verifies(url: str, home: Path) -> None:
    result = call(url, "graph_evidence", {"query": {"term": "keeper tide"}})
    assert not result.is_error, result.content[0].text
    data = result.structured_content
    assert data["from"] == "query" and data["evidence"] and not data["truncated"]
    record = data["evidence"][0]
    assert record["id"].startswith("ev-") and record["review_status"] == "unreviewed"
    assert record["selector"]["type"] == "TextQuoteSelector"
    # The same as the command on the same query's --json.
    found = invoke("--home", str(home), "query", "--term", "keeper tide", "--json")
    cli = invoke("graph", "evidence", "--json", stdin=found.stdout.encode("utf-8")).envelope["data"]
    assert {**cli, "truncated": False} == data
    # The records verify against the server's home.
    graph = fixture_graph("contextual")
    graph["metadata"]["sources"] += data["sources"]
    graph["evidence"] += data["evidence"]
    graph["nodes"][1]["evidence"] = [e["id"] for e in data["evidence"]]
    verified = call(url, "graph_verify", {"graph": rescore(graph)})
    assert not verified.is_error, verified.content[0].text
    report = verified.structured_content
    ours = [r for r in report["results"] if r["source"].startswith("snapshot:")]
    assert ours and all(r["status"] == "found" for r in ours) and "home" not in report
    strict = call(url, "graph_verify", {"graph": rescore(graph), "requireAll": True})
    assert strict.is_error and strict.structured_content["error"]["code"] == "INVALID_INPUT"


def test_graph_evidence_takes_results_a_client_has(url: str, home: Path) -> None:
    found = invoke("--home", str(home), "query", "--term", "storms lamp", "--json").envelope
    result = call(url, "graph_evidence", {"result": found, "support": "supports", "maxRecords": 1})
    assert not result.is_error, result.content[0].text
    assert len(result.structured_content["evidence"]) == 1
    assert result.structured_content["evidence"][0]["support"] == "supports"


@pytest.mark.parametrize(
    "arguments",
    [
        {},
        {"query": {"term": "x"}, "result": {"results": []}},
        {"query": {"term": "x", "limit": 1000}},  # the query tool's own bound
        {"query": {"nothing": "x"}},
        {"result": {"neither": True}},
    ],
)
def test_graph_evidence_refusals_are_tool_errors(url: str, arguments: dict[str, Any]) -> None:
    result = call(url, "graph_evidence", arguments)
    assert result.is_error
    assert result.structured_content["error"]["code"] in ("INVALID_USAGE", "INVALID_INPUT")


def test_a_selector_not_found_refuses_graph_verify(url: str, home: Path) -> None:
    data = call(url, "graph_evidence", {"query": {"term": "keeper tide"}}).structured_content
    graph = fixture_graph("contextual")
    tampered = dict(data["evidence"][0])
    tampered["selector"] = {**tampered["selector"], "exact": "The keeper never saw a ship."}
    tampered["excerpt"] = tampered["selector"]["exact"]
    import hashlib

    tampered["excerpt_sha256"] = hashlib.sha256(tampered["excerpt"].encode()).hexdigest()
    graph["metadata"]["sources"] += data["sources"]
    graph["evidence"].append(tampered)
    result = call(url, "graph_verify", {"graph": rescore(graph)})
    assert result.is_error
    error = result.structured_content["error"]
    assert error["code"] == "INVALID_INPUT" and error["details"]["counts"]["not-found"] == 1
