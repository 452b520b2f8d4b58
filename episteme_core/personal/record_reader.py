"""Reading a stored record a paragraph at a time, so extraction never holds it as one tree.

A record's bytes are its canonical JSON, whose ``paragraphs`` array can hold a million objects: one
``json.loads`` of it builds every paragraph's dict at once (700 MiB for a 3 MB book of one-letter
paragraphs). ``open_record`` finds the array's elements by their bytes (a regular expression takes
each flat paragraph object whole; anything else is walked token by token), parses the record
without them (its head), and ``StoredRecord.paragraphs`` parses one element at a time, with the
checks of ``loads_strict`` and the converter applied to each.

Whatever this reader cannot follow (a byte-order mark, a record written by hand in another layout,
invalid JSON) is read by ``record_from_bytes`` instead, so an invalid record gets the same error,
word for word, as before, and a valid one the same paragraphs.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterator, Sequence

import attrs

from episteme_core.errors import EpistemeError
from episteme_core.personal.model import Paragraph, Record, record_from_bytes
from episteme_core.records.canonical import MAX_JSON_DEPTH, loads_strict

# A JSON string in bytes, unrolled (no alternative can start where another does: linear time).
_STRING = rb'"[^"\\]*(?:\\.[^"\\]*)*"'
# A paragraph object whose values nest one object deep at most and hold no array (what every
# builtin source writes: {"attributes":{...},"kind":...}); others are walked token by token.
_FLAT_OBJECT = re.compile(
    rb'\{(?:[^{}"\[\]]|' + _STRING + rb'|\{(?:[^{}"\[\]]|' + _STRING + rb')*\})*\}'
)
_TOKEN = re.compile(_STRING + rb"|[{}\[\]:,]")
_SPACE = re.compile(rb"[ \t\n\r]*")
_PARAGRAPHS_KEY = b'"paragraphs"'
_OPEN = frozenset(b"{[")
_CLOSE = frozenset(b"}]")


class _Unfollowed(Exception):
    """The bytes are not laid out as this reader expects (``record_from_bytes`` reads them)."""


@attrs.define
class StoredRecord:
    """A stored record's head (every field, ``paragraphs`` empty), how many paragraphs it has,
    and those paragraphs parsed one at a time (``paragraphs()``)."""

    head: Record
    count: int
    _data: bytes
    _source: str
    _spans: array[int] | None = None  # (start, end) byte offsets of each paragraph object
    _parsed: Sequence[Paragraph] | None = None  # the whole record's, where the bytes were read whole

    def paragraphs(self) -> Iterator[Paragraph]:
        """The paragraphs in order. A paragraph that fails its checks raises the error reading the
        whole record gives (``INVALID_INPUT`` naming the source)."""
        if self._parsed is not None:
            yield from self._parsed
            return
        spans = self._spans
        assert spans is not None
        for index in range(0, len(spans), 2):
            try:
                paragraph = _paragraph(self._data[spans[index] : spans[index + 1]], self._source)
            except EpistemeError:
                whole = record_from_bytes(self._data, source=self._source)  # raises the record's error
                yield from whole.paragraphs[index // 2 :]  # this reader misread a valid record
                return
            yield paragraph


def _paragraph(data: bytes, source: str) -> Paragraph:
    from episteme_core.records.convert import structure

    # a paragraph object lies two levels down: the record's object, then its array
    value = loads_strict(data, source=source, max_depth=MAX_JSON_DEPTH - 2)
    return structure(value, Paragraph, source=source)


def open_record(data: bytes, *, source: str) -> StoredRecord:
    """A record's bytes, ready to be read a paragraph at a time; invalid bytes are
    ``INVALID_INPUT`` naming ``source``, as ``record_from_bytes`` says it."""
    from episteme_core.records.convert import structure

    try:
        opened, closed, spans = _paragraph_spans(data)
        head_bytes = data[: opened + 1] + data[closed:]
        head = structure(loads_strict(head_bytes, source=source), Record, source=source)
        if head.paragraphs:
            raise _Unfollowed
    except (_Unfollowed, EpistemeError, IndexError):
        record = record_from_bytes(data, source=source)
        return StoredRecord(attrs.evolve(record, paragraphs=[]), len(record.paragraphs), data, source,
                            parsed=record.paragraphs)
    return StoredRecord(head, len(spans) // 2, data, source, spans=spans)


def _skip_space(data: bytes, at: int) -> int:
    found = _SPACE.match(data, at)
    return found.end() if found else at


def _paragraph_spans(data: bytes) -> tuple[int, int, array[int]]:
    """(offset of the array's ``[``, offset of its ``]``, the elements' spans) of the top-level
    object's ``paragraphs`` member."""
    at = _skip_space(data, 0)
    if data[at : at + 1] != b"{":
        raise _Unfollowed
    depth, at, key_end = 1, at + 1, -1
    while True:
        token = _TOKEN.search(data, at)
        if token is None:
            raise _Unfollowed
        first = data[token.start()]
        at = token.end()
        if first == 0x22:  # a string: at depth 1 before ":", a key
            is_key = depth == 1 and at - token.start() == len(_PARAGRAPHS_KEY)
            key_end = at if is_key and data[token.start() : at] == _PARAGRAPHS_KEY else -1
            continue
        if first == 0x3A and key_end >= 0 and depth == 1:  # "paragraphs":
            opened = _skip_space(data, at)
            if data[opened : opened + 1] != b"[":
                raise _Unfollowed
            closed, spans = _elements(data, opened + 1)
            return opened, closed, spans
        key_end = -1
        if first in _OPEN:
            depth += 1
        elif first in _CLOSE:
            depth -= 1
            if depth == 0:
                raise _Unfollowed  # no paragraphs member


def _elements(data: bytes, at: int) -> tuple[int, array[int]]:
    """The offset of the array's ``]`` and each element's (start, end), from just after ``[``."""
    spans: array[int] = array("q")
    at = _skip_space(data, at)
    if data[at : at + 1] == b"]":
        return at, spans
    while True:
        if data[at : at + 1] != b"{":
            raise _Unfollowed
        flat = _FLAT_OBJECT.match(data, at)
        end = flat.end() if flat else _object_end(data, at)
        spans.append(at)
        spans.append(end)
        at = _skip_space(data, end)
        separator = data[at : at + 1]
        if separator == b"]":
            return at, spans
        if separator != b",":
            raise _Unfollowed
        at = _skip_space(data, at + 1)


def _object_end(data: bytes, at: int) -> int:
    """The end of the object that opens at ``at``, found token by token."""
    depth = 0
    for token in _TOKEN.finditer(data, at):
        first = data[token.start()]
        if first in _OPEN:
            depth += 1
        elif first in _CLOSE:
            depth -= 1
            if depth == 0:
                return token.end()
    raise _Unfollowed
