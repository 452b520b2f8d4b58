"""The builtin tools through the SDK's real streamable-HTTP client against ``episteme serve``: each
returns the CLI's ``--json`` data, refuses with the CLI's code and hint, and checks its arguments
against bounds that are the CLI options' own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from .conftest import Served, cli_data, cli_error, connect, mcp_call, start_server

ASK_QUESTION = "What must a single man in possession of a good fortune be in want of?"


def _without_duration(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k != "durationMs"}


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_a_client_connects_lists_the_tools_and_their_schemas(server: Served, mode: str) -> None:
    async def go() -> tuple[Any, Any]:
        async with connect(server.url, mode=mode) as client:
            return client.server_info, await client.list_tools()

    info, listed = anyio.run(go)
    names = [tool.name for tool in listed.tools]
    assert names == ["ask", "query", "show", "sources", "verify"]
    assert info is None or info.name == "episteme"
    by_name = {tool.name: tool for tool in listed.tools}
    query = by_name["query"].input_schema
    assert query["required"] == ["term"] and query["additionalProperties"] is False
    assert query["properties"]["limit"] == {
        "type": "integer", "default": 10, "minimum": 1, "maximum": 100,
        "description": "results per page (default 10; 1–100)",
    }
    assert by_name["ask"].input_schema["properties"]["budget"]["maximum"] == 10_000_000
    assert all(tool.annotations.read_only_hint for tool in listed.tools)
    assert "untrusted-source" in by_name["query"].description


def test_query_returns_the_cli_data_with_citations_and_content_trust(server: Served,
                                                                     example_home: Path) -> None:
    arguments = {"term": "percent-encoded byte", "limit": 3, "maxChars": 300}
    result = mcp_call(server.url, "query", arguments)
    assert not result.is_error
    expected = cli_data(example_home, "query", "--term", "percent-encoded byte", "--limit", "3",
                        "--max-chars", "300")
    assert result.structured_content == expected
    assert json.loads(result.content[0].text) == expected
    assert expected["results"], "the example corpus answers this query"
    for item in result.structured_content["results"]:
        assert item["contentTrust"] == "untrusted-source"
        assert item["citation"]["selector"][0]["type"] == "TextQuoteSelector"
    assert result.meta["episteme/warnings"] == []


def test_query_filters_mirror_the_cli(server: Served, example_home: Path) -> None:
    arguments = {"term": "MUST", "source": ["file"], "normativity": "informative", "offset": 1, "limit": 2}
    result = mcp_call(server.url, "query", arguments)
    expected = cli_data(example_home, "query", "--term", "MUST", "--source", "file", "--normativity",
                        "informative", "--offset", "1", "--limit", "2")
    assert result.structured_content == expected and expected["total"] > 1


def test_ask_returns_the_cli_answer_and_writes_a_serve_telemetry_line(server: Served,
                                                                        example_home: Path) -> None:
    telemetry = example_home / "telemetry.jsonl"
    before = telemetry.read_text("utf-8").splitlines() if telemetry.exists() else []
    result = mcp_call(server.url, "ask", {"question": ASK_QUESTION, "budget": 1200, "filter": ["books"]})
    assert not result.is_error, result.content[0].text
    lines = telemetry.read_text("utf-8").splitlines()
    assert len(lines) == len(before) + 1
    line = json.loads(lines[-1])
    assert line["command"] == "serve" and line["question"] == ASK_QUESTION and line["ok"] is True
    expected = cli_data(example_home, "ask", ASK_QUESTION, "--budget", "1200", "--filter", "books")
    assert _without_duration(result.structured_content) == _without_duration(expected)
    paragraphs = result.structured_content["paragraphs"]
    assert paragraphs and all(p["contentTrust"] == "untrusted-source" for p in paragraphs)
    assert any("truth universally acknowledged" in p["text"] for p in paragraphs)
    assert result.structured_content["contentTrust"] == "untrusted-source"


def test_show_sources_and_verify_return_the_cli_data(server: Served, example_home: Path) -> None:
    reference = "book:books/pg1342_pride_and_prejudice#140"
    shown = mcp_call(server.url, "show", {"reference": reference})
    assert shown.structured_content == cli_data(example_home, "show", reference)
    assert shown.structured_content["contentTrust"] == "untrusted-source"
    sources = mcp_call(server.url, "sources", {})
    assert sources.structured_content == cli_data(example_home, "sources")
    verified = mcp_call(server.url, "verify", {})
    assert verified.structured_content == cli_data(example_home, "verify")
    assert verified.structured_content["problems"] == []


def test_a_refusal_is_a_tool_error_with_the_clis_code_message_and_hint(server: Served,
                                                                         example_home: Path) -> None:
    result = mcp_call(server.url, "show", {"reference": "book:books/no-such-book"})
    assert result.is_error
    expected = cli_error(example_home, "show", "book:books/no-such-book")
    assert result.structured_content == {"error": expected}
    assert expected["code"] == "INVALID_INPUT" and expected["hint"]
    assert result.content[0].text == f"INVALID_INPUT: {expected['message']}\nhint: {expected['hint']}"


def test_stale_and_missing_shards_are_refused_as_the_cli_refuses(tmp_path: Path) -> None:
    home = tmp_path / "empty"
    served = start_server(home)
    try:
        query = mcp_call(served.url, "query", {"term": "anything"})
        ask = mcp_call(served.url, "ask", {"question": "anything"})
    finally:
        assert served.stop() == 143
    assert query.is_error and ask.is_error
    assert query.structured_content["error"] == cli_error(home, "query", "--term", "anything")
    assert query.structured_content["error"]["code"] == "STALE_INDEX"
    assert query.structured_content["error"]["hint"] == "run episteme index"
    assert ask.structured_content["error"] == cli_error(home, "ask", "anything")
    assert "run episteme ingest" in ask.structured_content["error"]["hint"]


LIMITS = [
    # tool, arguments at the limit, the same one step past it
    ("query", {"term": "byte", "limit": 100}, {"term": "byte", "limit": 101}),
    ("query", {"term": "byte", "limit": 1}, {"term": "byte", "limit": 0}),
    ("query", {"term": "byte", "maxChars": 80}, {"term": "byte", "maxChars": 79}),
    ("query", {"term": "byte", "maxChars": 20_000}, {"term": "byte", "maxChars": 20_001}),
    ("query", {"term": "byte", "offset": 10_000}, {"term": "byte", "offset": 10_001}),
    ("query", {"term": "b" * 4096}, {"term": "b" * 4097}),
    ("ask", {"question": "q" * 4000, "candidates": 1}, {"question": "q" * 4001, "candidates": 1}),
    ("ask", {"question": "whale", "candidates": 200}, {"question": "whale", "candidates": 201}),
    ("ask", {"question": "whale", "budget": 10_000_000}, {"question": "whale", "budget": 10_000_001}),
    ("ask", {"question": "whale", "budget": 1}, {"question": "whale", "budget": 0}),
]


@pytest.mark.parametrize(("tool", "at", "past"), LIMITS)
def test_every_argument_bound_holds_at_and_just_past_it(server: Served, tool: str, at: dict[str, Any],
                                                         past: dict[str, Any]) -> None:
    accepted = mcp_call(server.url, tool, at)
    assert not accepted.is_error, accepted.content[0].text
    refused = mcp_call(server.url, tool, past)
    assert refused.is_error
    error = refused.structured_content["error"]
    assert error["code"] == "INVALID_USAGE"
    assert error["details"]["field"] in past


@pytest.mark.parametrize(("tool", "arguments", "field"), [
    ("query", {"term": 5}, "term"),
    ("query", {"term": "x", "limit": "10"}, "limit"),
    ("query", {"term": "x", "limit": True}, "limit"),
    ("query", {"term": "x", "limit": 2.5}, "limit"),
    ("query", {"term": "x", "source": "books"}, "source"),
    ("query", {"term": "x", "authority": "supreme"}, "authority"),
    ("query", {"term": "x", "index": "/elsewhere"}, None),  # CLI-only options are not offered
    ("query", {}, None),
    ("ask", {"question": ["a"]}, "question"),
    ("ask", {"question": "a", "includeMarked": "yes"}, "includeMarked"),
    ("ask", {"question": "a", "excludeMarked": 1}, "excludeMarked"),
    ("show", {"reference": None}, "reference"),
    ("sources", {"verbose": True}, None),
])
def test_arguments_of_the_wrong_type_are_refused_naming_the_field(server: Served, tool: str,
                                                                   arguments: dict[str, Any],
                                                                   field: str | None) -> None:
    result = mcp_call(server.url, tool, arguments)
    assert result.is_error
    error = result.structured_content["error"]
    assert error["code"] == "INVALID_USAGE" and error["details"]["field"] == field
    assert error["hint"] == "tools/list gives each tool's input schema"


def test_a_whole_number_sent_as_a_float_is_an_integer(server: Served, example_home: Path) -> None:
    result = mcp_call(server.url, "query", {"term": "byte", "limit": 2.0})
    assert result.structured_content == cli_data(example_home, "query", "--term", "byte", "--limit", "2")


def test_semantic_checks_after_the_schema_are_the_clis(server: Served, example_home: Path) -> None:
    since = mcp_call(server.url, "query", {"term": "byte", "since": "yesterday"})
    assert since.structured_content["error"] == cli_error(example_home, "query", "--term", "byte",
                                                          "--since", "yesterday")
    both = mcp_call(server.url, "ask", {"question": "byte", "includeMarked": True, "excludeMarked": True})
    assert both.structured_content["error"] == cli_error(example_home, "ask", "byte", "--include-marked",
                                                         "--exclude-marked")
    blank = mcp_call(server.url, "ask", {"question": "   "})
    assert blank.structured_content["error"] == cli_error(example_home, "ask", "   ")
    reader = mcp_call(server.url, "ask", {"question": "whale", "reader": "nope"})
    assert reader.structured_content["error"] == cli_error(example_home, "ask", "whale", "--reader", "nope")


def test_an_unknown_tool_is_a_json_rpc_invalid_params_error_and_the_server_keeps_on(server: Served) -> None:
    from mcp.shared.exceptions import MCPError

    with pytest.raises(MCPError) as refused:
        mcp_call(server.url, "summarise", {})
    assert refused.value.error.code == -32602
    assert refused.value.error.data == {"code": "INVALID_USAGE",
                                        "known": ["ask", "query", "show", "sources", "verify"]}
    assert not mcp_call(server.url, "sources", {}).is_error
