"""Turn an OpenAI chat request in episteme's reader prompt back into a read: question and candidates.

The http reader renders ``Question: ...``, ``Paragraphs:`` and ``p1: <text>`` blocks from
episteme's prompt template, and lists the labels in its ``response_format`` schema. This module
reads them back using the same template, so a change of wording in the template moves both sides.

A candidate's text that itself holds a blank line followed by the next label and a colon
(``\\n\\np4: ``) is cut there: the prompt cannot tell the two apart. That only changes what the model
reads; the answer is always built from the stored paragraphs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from episteme_core.api import Candidate, ReadRequest, reader_prompt_parts

MAX_LABELS = 1000
_LABEL = re.compile(r"^[A-Za-z0-9_.-]{1,32}$")


class NotAReaderPrompt(ValueError):
    """The request is not in episteme's reader prompt; the message says what is missing."""


def _content(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):  # content parts
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    if not isinstance(content, str):
        raise NotAReaderPrompt("a message has no text content")
    return content


def _template_pieces() -> tuple[str, str, str]:
    """The user template's fixed text: before the question, between, after the paragraphs."""
    _, template = reader_prompt_parts()
    head, _, rest = template.partition("{question}")
    middle, _, tail = rest.partition("{paragraphs}")
    return head, middle, tail


def offered_labels(body: Mapping[str, Any]) -> list[str] | None:
    """The labels listed in the request's structured-output schema, when it has one."""
    try:
        items = body["response_format"]["json_schema"]["schema"]["properties"]["ids"]["items"]
        labels = items["enum"]
    except (KeyError, TypeError):
        return None
    if not isinstance(labels, list) or not all(isinstance(x, str) and _LABEL.match(x) for x in labels):
        raise NotAReaderPrompt("response_format lists labels that are not short label strings")
    if len(labels) > MAX_LABELS or len(set(labels)) != len(labels):
        raise NotAReaderPrompt(f"response_format must list at most {MAX_LABELS} distinct labels")
    return list(labels)


def split_paragraphs(text: str, labels: list[str] | None) -> list[tuple[str, str]]:
    """``(label, text)`` pairs of ``p1: ...`` blocks separated by blank lines, in order.

    With ``labels`` the blocks must carry exactly those labels in that order; without, they are
    taken as p1, p2, ... for as long as the next one is found."""
    expected = labels if labels is not None else [f"p{k}" for k in range(1, MAX_LABELS + 1)]
    if not expected:
        if text.strip():
            raise NotAReaderPrompt("paragraphs are given but no labels are offered")
        return []
    if not text.startswith(f"{expected[0]}: "):
        raise NotAReaderPrompt(f"the paragraphs do not start with '{expected[0]}: '")
    found: list[tuple[str, str]] = []
    start = len(expected[0]) + 2
    for index, label in enumerate(expected):
        following = expected[index + 1] if index + 1 < len(expected) else None
        cut = text.find(f"\n\n{following}: ", start) if following else -1
        if cut < 0:
            if labels is not None and following is not None:
                raise NotAReaderPrompt(f"label {following} is offered but its paragraph is missing")
            found.append((label, text[start:]))
            break
        found.append((label, text[start:cut]))
        start = cut + 2 + len(following or "") + 2
    return found


def read_request(body: Any) -> ReadRequest:
    """The read an episteme chat request asks for. Candidates keep the prompt's order (p1 is BM25's
    best) as descending scores, since the prompt carries no BM25 scores and no coverage."""
    if not isinstance(body, dict):
        raise NotAReaderPrompt("the body must be a JSON object")
    messages = body.get("messages")
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise NotAReaderPrompt("messages must be a list of objects")
    users = [m for m in messages if m.get("role") == "user"]
    if not users:
        raise NotAReaderPrompt("there is no user message")
    user = _content(users[-1])
    head, middle, tail = _template_pieces()
    if not user.startswith(head) or not user.endswith(tail) or middle not in user:
        raise NotAReaderPrompt("the user message is not episteme's reader prompt "
                               "(Question: ..., Paragraphs: ..., labelled p1: ... blocks)")
    inner = user[len(head):len(user) - len(tail)]
    question, _, paragraphs = inner.partition(middle)
    if not question.strip():
        raise NotAReaderPrompt("the question is empty")
    pairs = split_paragraphs(paragraphs, offered_labels(body))
    count = len(pairs)
    candidates = tuple(
        Candidate(label=label, text=text, score=float(count - i), ref=label)
        for i, (label, text) in enumerate(pairs)
    )
    return ReadRequest(question=question, shard="http", source="http", candidates=candidates)
