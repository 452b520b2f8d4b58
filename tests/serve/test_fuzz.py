"""Fuzzing the MCP endpoint: every request body, however malformed, gets a clean JSON-RPC error or result
(never a hang, a traceback or a dead server), and no tool argument makes a builtin tool fail with
INTERNAL_ERROR."""

from __future__ import annotations

import json
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .conftest import Served

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
TOOLS = ("query", "ask", "show", "sources", "verify")
ARGUMENT_NAMES = ("term", "family", "authority", "documentType", "normativity", "source", "since", "limit",
                  "offset", "maxChars", "question", "filter", "reader", "budget", "candidates",
                  "includeMarked", "excludeMarked", "reference", "snapshot", "staleOk")
METHODS = ("initialize", "tools/list", "tools/call", "server/discover", "ping", "resources/list",
           "prompts/list", "notifications/initialized", "notifications/cancelled", "completion/complete")

scalars = (st.none() | st.booleans() | st.integers(-(2**70), 2**70)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=40))
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
argument_values = (
    json_values
    | st.sampled_from(["2024-01-01", "2024-13-45", "1e400", "book:books/pg1342_pride_and_prejudice#1", "#",
                       "a#b#c", "../../etc/passwd", "\u0000", "\ud800", "normative", "books", "bm25"])
    | st.integers(-5, 300)
)
argument_names = st.sampled_from(ARGUMENT_NAMES) | st.text(max_size=8)
arguments = st.dictionaries(argument_names, argument_values, max_size=5)


@st.composite
def messages(draw: Any) -> Any:
    message: dict[str, Any] = {}
    if draw(st.booleans()):
        message["jsonrpc"] = draw(st.sampled_from(["2.0", "2.0", "1.0", 2]))
    if draw(st.booleans()):
        message["id"] = draw(st.integers(-(2**63), 2**63) | st.text(max_size=10) | st.none() | st.floats())
    message["method"] = draw(st.sampled_from(METHODS) | st.text(max_size=20))
    if message["method"] == "tools/call" and draw(st.integers(0, 4)):
        message["params"] = {"name": draw(st.sampled_from(TOOLS) | st.text(max_size=10)),
                             "arguments": draw(arguments | json_values)}
    elif draw(st.booleans()):
        message["params"] = draw(json_values)
    return message


def _encoded(value: Any) -> bytes:
    return json.dumps(value, allow_nan=True).encode("utf-8", "surrogatepass")


bodies = st.one_of(
    st.binary(max_size=300),
    json_values.map(_encoded),
    messages().map(_encoded),
    st.lists(messages(), min_size=1, max_size=3).map(_encoded),
)


def _check(response: httpx.Response) -> None:
    assert response.status_code in (200, 202, 400), (response.status_code, response.text[:300])
    if response.status_code == 202 or not response.content:
        return
    body = response.json()
    assert isinstance(body, dict) and body.get("jsonrpc") == "2.0", body
    assert ("result" in body) != ("error" in body), body
    if "error" in body:
        assert isinstance(body["error"]["code"], int) and isinstance(body["error"]["message"], str)
    result = body.get("result")
    if isinstance(result, dict) and result.get("isError"):
        error = result["structuredContent"]["error"]
        assert error["code"] != "INTERNAL_ERROR", error
    assert "Traceback" not in response.text


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=bodies)
def test_every_body_gets_a_clean_json_rpc_answer(server: Served, body: bytes) -> None:
    with httpx.Client(timeout=60) as client:
        _check(client.post(server.url, content=body, headers=HEADERS))
        assert client.get(server.base + "/health").status_code == 200


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tool=st.sampled_from(TOOLS), given_arguments=arguments)
def test_no_tool_argument_is_an_internal_error(server: Served, tool: str, given_arguments: Any) -> None:
    message = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
               "params": {"name": tool, "arguments": given_arguments}}
    response = httpx.post(server.url, content=_encoded(message), headers=HEADERS, timeout=60)
    _check(response)


def test_after_the_fuzzing_the_server_still_answers_a_real_call(server: Served) -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "query", "arguments": {"term": "percent-encoded byte", "limit": 1}}}
    response = httpx.post(server.url, content=json.dumps(message), headers=HEADERS, timeout=60)
    assert response.json()["result"]["structuredContent"]["results"]
