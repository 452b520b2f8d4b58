"""Citations as MCP resources, through the SDK's real client against ``episteme serve``: the two
templates are listed, and what a query or ask result cites reads back verbatim with its citation."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from episteme_core.serve.resources import doc_uri

from .conftest import Served, connect, mcp_call

QUESTION = "What must a single man in possession of a good fortune be in want of?"


def _read(url: str, uri: str) -> Any:
    async def go() -> Any:
        async with connect(url) as client:
            try:
                return await client.read_resource(uri)
            except MCPError as exc:
                return exc

    return anyio.run(go)


def test_the_citation_templates_are_listed(server: Served) -> None:
    async def go() -> Any:
        async with connect(server.url) as client:
            return await client.list_resource_templates()

    listed = anyio.run(go)
    assert [t.uri_template for t in listed.resource_templates] == [
        "episteme://record/{id}", "episteme://doc/{url}#{block}"]


def test_an_answer_paragraph_reads_back_verbatim(server: Served) -> None:
    answer = mcp_call(server.url, "ask", {"question": QUESTION}).structured_content
    paragraph = answer["paragraphs"][0]
    read = _read(server.url, "episteme://record/" + paragraph["ref"])
    [content] = read.contents
    data = json.loads(content.text)
    assert content.mime_type == "application/json"
    assert data["paragraph"]["text"] == paragraph["text"]
    assert data["contentTrust"] == "untrusted-source"
    assert data["citation"]["cite"] == paragraph["ref"]


def test_a_query_hit_reads_back_as_its_block(server: Served) -> None:
    hit = mcp_call(server.url, "query", {"term": "percent-encoded byte", "limit": 1}).structured_content
    citation = hit["results"][0]["citation"]
    read = _read(server.url, doc_uri(citation["url"], citation["blockId"]))
    data = json.loads(read.contents[0].text)
    assert hit["results"][0]["snippet"] in data["text"] or data["text"] in hit["results"][0]["snippet"] \
        or citation["selector"][0]["exact"] in data["text"]
    assert data["citation"]["blockId"] == citation["blockId"]
    assert data["citation"]["snapshotId"] == citation["snapshotId"]


@pytest.mark.parametrize("uri", ["episteme://record/book:nowhere/none#1", "episteme://doc/x",
                                 "episteme://doc/https%3A%2F%2Fnowhere.example%2F#b1",
                                 "https://example.org/", "episteme://record/" + "x" * 9000])
def test_a_uri_that_names_nothing_is_an_invalid_params_error_with_its_code(server: Served, uri: str) -> None:
    refused = _read(server.url, uri)
    assert isinstance(refused, MCPError)
    assert refused.error.data["code"] == "INVALID_INPUT"
