"""A record's paragraphs kept as spans of one text: what a large book holds while it is stored.

``Record.paragraphs`` is any sequence of ``Paragraph``. A book read from a file keeps its body text
once and, per paragraph, its start and end offsets, first line and kind (``SpanParagraphs``); each
``Paragraph`` is made when it is read (its text a slice, ``attributes`` ``{"line": n}``) and let go
after. A book of a million one-letter paragraphs held a million objects of about 380 bytes each
(the attributes dict alone 184) beside their texts; it now holds about 30 bytes a paragraph. It
compares equal to any sequence of the same paragraphs, a list included.
"""

from __future__ import annotations

import operator
from array import array
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar, overload

from episteme_core.personal.model import Paragraph

T = TypeVar("T")


class TextSpans(Sequence[str]):
    """The texts of spans of one string, sliced when read (what the shape rules of
    ``personal.frontmatter`` read, without a string kept per paragraph)."""

    __slots__ = ("_ends", "_starts", "_text")

    def __init__(self, text: str, starts: array[int], ends: array[int]) -> None:
        self._text, self._starts, self._ends = text, starts, ends

    def __len__(self) -> int:
        return len(self._starts)

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        return _indexed(self, index, self._item)

    def _item(self, at: int) -> str:
        return self._text[self._starts[at] : self._ends[at]]

    def __iter__(self) -> Iterator[str]:
        text = self._text
        for start, end in zip(self._starts, self._ends, strict=True):
            yield text[start:end]


class SpanParagraphs(Sequence[Paragraph]):
    """Paragraphs 1..N of one text: spans (start, end, first line) with a kind each and one time
    for all, each made a ``Paragraph`` only when read."""

    __slots__ = ("_kinds", "_lines", "_spans", "_time")

    def __init__(self, spans: TextSpans, lines: array[int], kinds: Sequence[str], time: str | None) -> None:
        if not len(spans) == len(lines) == len(kinds):
            raise ValueError("spans, lines and kinds must be as many")
        self._spans, self._lines, self._time = spans, lines, time
        self._kinds = list(kinds)

    def __len__(self) -> int:
        return len(self._lines)

    @overload
    def __getitem__(self, index: int) -> Paragraph: ...
    @overload
    def __getitem__(self, index: slice) -> list[Paragraph]: ...
    def __getitem__(self, index: int | slice) -> Paragraph | list[Paragraph]:
        return _indexed(self, index, self._item)

    def _item(self, at: int) -> Paragraph:
        return Paragraph(
            n=at + 1,
            text=self._spans[at],
            time=self._time,
            kind=self._kinds[at],
            attributes={"line": self._lines[at]},
        )

    def __iter__(self) -> Iterator[Paragraph]:
        time = self._time
        for at, (text, line, kind) in enumerate(zip(self._spans, self._lines, self._kinds, strict=True)):
            yield Paragraph(n=at + 1, text=text, time=time, kind=kind, attributes={"line": line})

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # equal to lists, which are unhashable

    def __repr__(self) -> str:
        return f"SpanParagraphs({len(self)} paragraphs)"


def _indexed(items: Sequence[T], index: int | slice, item: Callable[[int], T]) -> T | list[T]:
    """``items[index]`` through ``item(position)``: a slice as a list, a negative index from the end,
    one out of range ``IndexError``."""
    if isinstance(index, slice):
        return [item(at) for at in range(*index.indices(len(items)))]
    return item(_position(index, len(items)))


def _position(index: int, size: int) -> int:
    at = operator.index(index)
    if at < 0:
        at += size
    if not 0 <= at < size:
        raise IndexError("paragraph index out of range")
    return at
