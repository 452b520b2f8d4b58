"""``reader serve`` reads the question and candidates back out of the chat request episteme's http
reader sends; anything else is refused with NotAReaderPrompt, never another exception."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from episteme_core.api import reader_messages, reader_response_format
from episteme_llama.chat_request import NotAReaderPrompt, read_request, split_paragraphs

from .conftest import read_request as make_request

texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=80)
questions = texts.filter(lambda q: q.strip() and "\n\nParagraphs:\n\n" not in q and "{paragraphs}" not in q)


def body_of(request: Any, *, schema: bool = True) -> dict[str, Any]:
    """What the kernel's http reader posts for ``request``."""
    body: dict[str, Any] = {"model": "m", "messages": reader_messages(request), "temperature": 0}
    if schema:
        body["response_format"] = reader_response_format(request.labels)
    return body


@settings(max_examples=300, deadline=None)
@given(question=questions, paragraphs=st.lists(texts, max_size=12), schema=st.booleans())
def test_the_http_readers_request_reads_back(question: str, paragraphs: list[str], schema: bool) -> None:
    labels = [f"p{i}" for i in range(1, len(paragraphs) + 1)]
    # A paragraph holding "\n\np<next>: " cannot be told from the next block; keep such texts out here.
    clean = all(f"\n\np{k}: " not in t for t in paragraphs for k in range(1, len(labels) + 2))
    if not clean or not paragraphs:
        return
    request = make_request(question, paragraphs)
    parsed = read_request(json.loads(json.dumps(body_of(request, schema=schema))))
    assert parsed.question == question
    assert [(c.label, c.text) for c in parsed.candidates] == list(zip(labels, paragraphs, strict=True))
    assert [c.score for c in parsed.candidates] == sorted((c.score for c in parsed.candidates), reverse=True)


def test_a_paragraph_that_looks_like_the_next_block_is_cut_there() -> None:
    request = make_request("q", ["first\n\np2: looks like a label", "second"])
    parsed = read_request(body_of(request))
    assert [c.text for c in parsed.candidates] == ["first", "looks like a label\n\np2: second"]


def test_without_a_schema_labels_are_taken_in_order() -> None:
    assert split_paragraphs("p1: a\n\np2: b\n\np4: d", None) == [("p1", "a"), ("p2", "b\n\np4: d")]


@pytest.mark.parametrize("body", [
    None, [], "text", {"messages": "hi"}, {"messages": []},
    {"messages": [{"role": "system", "content": "x"}]},
    {"messages": [{"role": "user", "content": "What is the capital of France?"}]},
    {"messages": [{"role": "user", "content": 7}]},
    {"messages": [{"role": "user", "content": "Question: \n\nParagraphs:\n\np1: a\n\nReply with "
                                              '{"ids": [...]} naming only labels from the list above.'}]},
])
def test_requests_that_are_not_reader_prompts(body: Any) -> None:
    with pytest.raises(NotAReaderPrompt):
        read_request(body)


def test_the_schema_must_list_the_paragraphs_labels() -> None:
    request = make_request("q", ["a", "b"])
    body = body_of(request)
    items = body["response_format"]["json_schema"]["schema"]["properties"]["ids"]["items"]
    items["enum"] = ["p1", "p2", "p3"]
    with pytest.raises(NotAReaderPrompt, match="p3 is offered but its paragraph is missing"):
        read_request(body)
    items["enum"] = ["p1", "p1"]
    with pytest.raises(NotAReaderPrompt, match="distinct"):
        read_request(body)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=500, deadline=None)
@given(body=json_values, content=st.text(max_size=200), enum=st.lists(st.text(max_size=6), max_size=5))
def test_any_body_is_parsed_or_refused_cleanly(body: Any, content: str, enum: list[str]) -> None:
    schema = {"properties": {"ids": {"items": {"enum": enum}}}}
    shaped = {"messages": [{"role": "user", "content": content}], "extra": body,
              "response_format": {"json_schema": {"schema": schema}}}
    for candidate in (body, shaped):
        try:
            read_request(candidate)
        except NotAReaderPrompt:
            pass
