"""A stored record read a paragraph at a time (``open_record``) is the record ``record_from_bytes``
reads, paragraph for paragraph, and invalid bytes get the same error, word for word."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from episteme_core.errors import EpistemeError
from episteme_core.personal.model import Paragraph, Record, record_from_bytes
from episteme_core.personal.record_reader import open_record

from .test_record_bytes import PARAGRAPHS, TEXT, VALUES

SOURCE = "snapshot s1"


def _streamed(data: bytes) -> tuple[Record, int, list[Paragraph]]:
    stored = open_record(data, source=SOURCE)
    return stored.head, stored.count, list(stored.paragraphs())


def _outcome(read) -> object:  # type: ignore[no-untyped-def]
    try:
        return read()
    except EpistemeError as exc:
        return ("error", exc.code, exc.message)


def _whole(data: bytes) -> tuple[Record, int, list[Paragraph]]:
    import attrs

    record = record_from_bytes(data, source=SOURCE)
    return attrs.evolve(record, paragraphs=[]), len(record.paragraphs), record.paragraphs


@settings(max_examples=150, deadline=None)
@given(paragraphs=st.lists(PARAGRAPHS, max_size=6), title=st.none() | TEXT,
       metadata=st.dictionaries(TEXT, VALUES, max_size=3))
def test_a_record_read_a_paragraph_at_a_time_is_the_whole_record(
        paragraphs: list[Paragraph], title: str | None, metadata: dict[str, object]) -> None:
    record = Record(id="book:a/b", source="books", time=None, paragraphs=paragraphs, title=title,
                    metadata=metadata)
    data = record.to_bytes()
    assert _streamed(data) == _whole(data)
    # the same record in another layout (indented, keys in another order) reads the same too
    other = json.dumps(json.loads(data), indent=2, ensure_ascii=True).encode()
    assert _streamed(other) == _whole(other)


def _record_json(**changes: object) -> dict[str, object]:
    value: dict[str, object] = {
        "contentTrust": "untrusted-source", "id": "book:a/b", "metadata": {}, "schemaVersion": "1",
        "source": "books", "time": None, "title": "T",
        "paragraphs": [{"attributes": {"line": 1}, "kind": "text", "n": 1, "text": "one", "time": None},
                       {"attributes": {"deep": [1, {"x": [2]}]}, "kind": "text", "n": 2, "text": "two",
                        "time": None}],
    }
    value.update(changes)
    return value


BAD = {
    "a paragraph missing its text": json.dumps(_record_json(paragraphs=[{"n": 1}])).encode(),
    "a paragraph with an unknown key": json.dumps(_record_json(paragraphs=[
        {"n": 1, "text": "a", "colour": "red"}])).encode(),
    "a paragraph that is a number": json.dumps(_record_json(paragraphs=[1, 2])).encode(),
    "a duplicate key in a paragraph": b'{"id":"book:a/b","source":"books","time":null,"paragraphs":'
                                      b'[{"n":1,"text":"a","text":"b"}]}',
    "a duplicate paragraphs key": b'{"id":"book:a/b","source":"books","time":null,"paragraphs":[],'
                                  b'"paragraphs":[{"n":1,"text":"a"}]}',
    "invalid UTF-8 in a paragraph": b'{"id":"book:a/b","source":"books","time":null,"paragraphs":'
                                    b'[{"n":1,"text":"\xff"}]}',
    "an unterminated paragraph": (b'{"id":"book:a/b","source":"books","time":null,'
                                  b'"paragraphs":[{"n":1,"text":"a'),
    "NaN in a paragraph": (b'{"id":"book:a/b","source":"books","time":null,'
                           b'"paragraphs":[{"n":NaN,"text":"a"}]}'),
    "no paragraphs": b'{"id":"book:a/b","source":"books","time":null}',
    "not an object": b'[1,2]',
    "trailing bytes": json.dumps(_record_json()).encode() + b" x",
    "a byte-order mark": b"\xef\xbb\xbf" + json.dumps(_record_json()).encode(),
    "a lone surrogate escaped": json.dumps(_record_json(title="\\ud800")).encode().replace(b"\\\\ud800",
                                                                                        b"\\ud800"),
    "deep nesting in a paragraph": (b'{"id":"book:a/b","source":"books","time":null,"paragraphs":[{"n":1,'
                                    b'"text":"a","attributes":{"x":' + b"[" * 300 + b"]" * 300 + b"}}]}"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_bytes_get_the_error_the_whole_reading_gives(name: str) -> None:
    data = BAD[name]
    assert _outcome(lambda: _streamed(data)) == _outcome(lambda: _whole(data))


def test_nested_and_valid_layouts_read_the_same() -> None:
    data = json.dumps(_record_json()).encode()
    assert open_record(data, source=SOURCE)._parsed is None  # read a paragraph at a time
    head, count, paragraphs = _streamed(data)
    assert count == 2 and paragraphs[1].attributes == {"deep": [1, {"x": [2]}]}
    assert (head, count, paragraphs) == _whole(data)


def test_a_million_paragraphs_are_never_parsed_at_once() -> None:
    """The head is read without the paragraphs, and each paragraph only when asked for."""
    paragraphs = [Paragraph(n=i, text="a", attributes={"line": i}) for i in range(1, 1001)]
    data = Record(id="book:a/b", source="books", time=None, paragraphs=paragraphs).to_bytes()
    stored = open_record(data, source=SOURCE)
    assert stored.count == 1000 and stored.head.paragraphs == []
    assert stored._parsed is None  # the record was not read whole (the fallback's way)
    first = next(iter(stored.paragraphs()))
    assert first == paragraphs[0]
