"""A book's paragraphs as spans: the same paragraphs, lines and records as a list of them."""

from __future__ import annotations

from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from episteme_core.personal.model import Paragraph
from episteme_core.personal.plaintext import paragraph_spans, split_paragraphs
from episteme_core.personal.spans import SpanParagraphs, TextSpans

_lines = st.lists(st.sampled_from(["", " ", "\t", "a", " b c", "```", "  ~~~", "# h", "x\r"]), max_size=40)


def _oracle(text: str, first_line: int, markdown: bool) -> list[tuple[str, int]]:
    """Paragraphs read line by line, the plain way: runs of lines not blank (or inside a fence)."""
    found: list[tuple[str, int]] = []
    run: list[str] = []
    run_line = first_line
    in_fence = False
    for number, line in enumerate(text.split("\n"), start=first_line):
        if markdown and line.lstrip(" ")[:3] in ("```", "~~~") and len(line) - len(line.lstrip(" ")) <= 3:
            in_fence = not in_fence
        if not in_fence and (not line or line.isspace()):
            if run:
                found.append(("\n".join(run), run_line))
                run = []
        else:
            if not run:
                run_line = number
            run.append(line)
    if run:
        found.append(("\n".join(run), run_line))
    return found


@settings(max_examples=300, deadline=None)
@given(lines=_lines, first_line=st.integers(1, 50), markdown=st.booleans())
def test_spans_slice_the_paragraphs_a_line_reader_finds(
    lines: list[str], first_line: int, markdown: bool
) -> None:
    text = "\n".join(lines)
    expected = _oracle(text, first_line, markdown)
    assert split_paragraphs(text, first_line=first_line, markdown=markdown) == expected
    starts, ends, numbers = paragraph_spans(text, first_line=first_line, markdown=markdown)
    assert [(text[s:e], n) for s, e, n in zip(starts, ends, numbers, strict=True)] == expected


@settings(max_examples=100, deadline=None)
@given(lines=_lines, time=st.none() | st.just("2024-01-01T00:00:00Z"))
def test_span_paragraphs_equal_the_list_they_stand_for(lines: list[str], time: str | None) -> None:
    text = "\n".join(lines)
    starts, ends, numbers = paragraph_spans(text)
    kinds = ["paragraph"] * len(starts)
    spans = SpanParagraphs(TextSpans(text, starts, ends), numbers, kinds, time)
    listed = [
        Paragraph(n=i + 1, text=text[s:e], time=time, kind="paragraph", attributes={"line": n})
        for i, (s, e, n) in enumerate(zip(starts, ends, numbers, strict=True))
    ]
    assert spans == listed and list(spans) == listed and len(spans) == len(listed)
    assert [spans[i] for i in range(-len(listed), len(listed))] == listed + listed
    assert spans[1:3] == listed[1:3]


def test_span_paragraphs_refuse_what_does_not_line_up() -> None:
    text = "a\n\nb"
    spans = TextSpans(text, array("q", [0, 3]), array("q", [1, 4]))
    assert list(spans) == ["a", "b"] and spans[-1] == "b"
    with pytest.raises(IndexError):
        spans[2]
    with pytest.raises(ValueError, match="as many"):
        SpanParagraphs(spans, array("q", [1]), ["paragraph", "paragraph"], None)
    paragraphs = SpanParagraphs(spans, array("q", [1, 3]), ["paragraph", "heading"], None)
    with pytest.raises(IndexError):
        paragraphs[-3]
    with pytest.raises(TypeError):
        hash(paragraphs)
    assert paragraphs != "ab" and paragraphs[1].kind == "heading" and paragraphs[1].attributes == {"line": 3}
