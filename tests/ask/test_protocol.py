"""The reader protocol's words: the prompt file, the messages, the structured-output schema, ids."""

from __future__ import annotations

import pytest

from episteme_core.ask import protocol
from episteme_core.records.reading import Candidate, ReadRequest


def request() -> ReadRequest:
    return ReadRequest("Where is {the} whale?", "books-0001", "books", (
        Candidate("p1", "A paragraph with {question} in braces.", 2.0, "book:a/b#1"),
        Candidate("p2", "Second.", 1.0, "book:a/b#2"),
    ))


def test_prompt_file_says_only_name_labels() -> None:
    system, template = protocol.prompt_parts()
    assert "Only name labels" in system
    assert "{question}" in template and "{paragraphs}" in template
    assert not any(line.startswith("#") for line in system.splitlines())


def test_messages_hold_question_and_labelled_paragraphs_verbatim() -> None:
    messages = protocol.messages(request())
    assert [m["role"] for m in messages] == ["system", "user"]
    user = messages[1]["content"]
    assert "Question: Where is {the} whale?" in user
    assert "p1: A paragraph with {question} in braces.\n\np2: Second." in user


def test_response_format_allows_only_offered_labels() -> None:
    fmt = protocol.response_format(("p1", "p2"))
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["schema"]["properties"]["ids"]["items"]["enum"] == ["p1", "p2"]


@pytest.mark.parametrize(("content", "ids"), [
    ('{"ids": ["p3", "p1"]}', ["p3", "p1"]),
    ('  {"ids": []}\n', []),
    ('Sure! ```json\n{"ids": ["p2"]}\n``` hope it helps', ["p2"]),
    ('{"note": 1} then {"ids": ["p1"]}', ["p1"]),
    ('{"reason": "x", "ids": ["p4"]}', ["p4"]),
])
def test_extract_ids_accepts_json_whole_or_inside_text(content: str, ids: list[str]) -> None:
    assert protocol.extract_ids(content) == ids


@pytest.mark.parametrize("content", [
    "", "p1, p3", '{"ids": "p1"}', '{"labels": ["p1"]}', "[\"p1\"]", '{"ids": [', "{" * 10_000,
])
def test_extract_ids_refuses_anything_else(content: str) -> None:
    assert protocol.extract_ids(content) is None
