"""``episteme_tools``: a third-party plugin (found through its entry point) adds a tool that the server
lists and calls; its refusals and crashes are tool errors, and an invalid registration is left out."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from .conftest import Served, child_env, connect, mcp_call, start_server


@pytest.fixture(scope="module")
def served(example_home: Path) -> Iterator[Served]:
    server = start_server(example_home, env=child_env(sample_plugin=True))
    yield server
    server.stop()


def test_the_plugin_tool_is_listed_beside_the_builtins(served: Served) -> None:
    async def go() -> list[str]:
        async with connect(served.url) as client:
            return [tool.name for tool in (await client.list_tools()).tools]

    assert anyio.run(go) == ["ask", "query", "sample-echo", "show", "sources", "verify"]


def test_a_tool_the_server_cannot_serve_is_left_out_with_a_warning(served: Served) -> None:
    warning = ("tool 'sample not a tool!' of plugin sample is not served: its name 'sample not a tool!' "
               "is not 1–128 of A-Z a-z 0-9 _ . -")
    assert warning in served.log_when(warning)


def test_hook_episteme_tools(served: Served) -> None:
    """The plugin's tool is served: called with its arguments checked, its warnings passed on."""
    result = mcp_call(served.url, "sample-echo", {"word": "hello", "times": 2.0, "shards": True})
    assert not result.is_error
    assert result.structured_content == {"word": "hello", "times": 2, "shards": 3}
    warning = {"code": "SAMPLE_NOTE", "message": "the sample tool was called"}
    assert result.meta["episteme/warnings"] == [warning]
    assert result.content[1].text == "warning SAMPLE_NOTE: the sample tool was called"


def test_a_plugin_refusal_carries_its_code_and_hint(served: Served) -> None:
    result = mcp_call(served.url, "sample-echo", {"word": "refuse"})
    assert result.is_error
    assert result.structured_content["error"] == {
        "code": "LIMIT_EXCEEDED", "message": "the sample tool refuses this word", "retryable": False,
        "details": None, "hint": "say another word",
    }


def test_a_plugin_crash_is_an_internal_error_and_the_server_keeps_serving(served: Served) -> None:
    result = mcp_call(served.url, "sample-echo", {"word": "crash"})
    assert result.is_error
    error = result.structured_content["error"]
    assert error["code"] == "INTERNAL_ERROR" and error["message"] == "RuntimeError: the sample tool crashed"
    log = served.log_when("tool sample-echo failed", "Traceback")
    assert "tool sample-echo failed" in log and "Traceback" in log
    assert mcp_call(served.url, "sample-echo", {"word": "again"}).structured_content["word"] == "again"


def test_the_plugin_tools_schema_is_enforced(served: Served) -> None:
    result = mcp_call(served.url, "sample-echo", {"word": "x" * 21})
    assert result.structured_content["error"]["details"]["field"] == "word"
    result = mcp_call(served.url, "sample-echo", {"word": "x", "times": 4})
    assert result.structured_content["error"]["details"]["field"] == "times"
