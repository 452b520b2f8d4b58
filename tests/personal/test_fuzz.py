"""Fuzz: the book, transcript, intent and front-matter parsers never crash on any bytes."""

from __future__ import annotations

import io
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from episteme_core.personal.books import split_gutenberg
from episteme_core.personal.claude import parse_transcript
from episteme_core.personal.intent import split_sections
from episteme_core.personal.plaintext import (
    decode_text,
    normalise_newlines,
    parse_front_matter,
    split_paragraphs,
)

JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(
        st.sampled_from(["type", "message", "content", "text", "uuid", "timestamp", "role", "thinking",
                         "name", "input", "tool_use_id", "isSidechain", "isMeta", "agentId"]),
        children, max_size=6,
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=2000))
def test_any_bytes_decode_and_split(data: bytes) -> None:
    text, encoding = decode_text(data)
    assert isinstance(text, str) and encoding
    clean = normalise_newlines(text)
    for piece, line in split_paragraphs(clean, markdown=True):
        assert piece.strip() and line >= 1 and piece in clean
    body, first, meta = split_gutenberg(clean)
    assert first >= 1 and body in clean
    fields, rest, consumed, raw = parse_front_matter(clean, strict=True)
    assert rest in clean and consumed >= 0
    for section, _heading, line in split_sections(clean):
        assert section.strip() and line >= 1


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(JSONISH | st.binary(max_size=50), max_size=12))
def test_any_transcript_lines_are_parsed_or_counted(lines: list[object]) -> None:
    encoded = b"\n".join(
        item if isinstance(item, bytes) else json.dumps(item).encode() for item in lines
    )
    result = parse_transcript(io.BytesIO(encoded), max_line_bytes=1024)
    assert all(p.text.strip() for p in result.paragraphs)
    assert result.lines <= len(lines) + encoded.count(b"\n") + 1
