"""The chunks stage's fast path (document JSON -> chunk texts) gives the record path's bytes exactly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from episteme_core.canonical import canonical_bytes
from episteme_core.chunk import chunk_id
from episteme_core.chunking import OBJECT_SCHEMA_VERSION
from episteme_core.chunking.paragraph import ParagraphChunker
from episteme_core.chunking.rows import body_bytes
from episteme_core.chunking.window import WindowChunker
from episteme_core.document import Block, Document, Provenance, Section, Span, seal

_words = st.sampled_from(
    ["must", "a", "Straße", "東京都", "x.", "end!", "\"quoted\"", "\\", "é", " ", "\n", "\t"]
)
_texts = st.lists(_words | st.text(max_size=8), min_size=0, max_size=60).map(" ".join)
_normativity = st.sampled_from(["normative", "informative", "example", "unknown"])
_optional = st.none() | st.text(min_size=1, max_size=6)


@st.composite
def _documents(draw: Any) -> Document:
    record = draw(st.booleans())
    sections = []
    number = 0
    for s in range(draw(st.integers(1, 3))):
        blocks = []
        for _ in range(draw(st.integers(0, 4))):
            number += 1
            text = draw(_texts)
            blocks.append(Block(
                id=f"b{number}", kind="paragraph", text=text, normativity=draw(_normativity),
                section_id=f"s{s}", anchor=draw(_optional), page=draw(st.none() | st.integers(1, 9)),
                span=draw(st.none() | st.just(Span(0, len(text))) | st.just(Span(3, 4))),
                time=draw(st.none() | st.sampled_from(["2026-01-01T00:00:00Z", "2025-05-05"])),
                attributes=draw(st.sampled_from([{}, {"n": number}, {"n": "x", "role": "user"}])),
            ))
        path = draw(st.lists(st.text(max_size=5), max_size=2))
        sections.append(Section(id=f"s{s}", heading=draw(st.text(max_size=10)), path=path,
                                anchor=draw(_optional), blocks=blocks))
    sha = "a" * 64
    return seal(Document(
        id="", source="book:x" if record else "https://e.org/a", source_kind="books" if record else "http",
        snapshot_id="c" * 64, source_sha256=sha, content_type="text/plain",
        document_type="record" if record else draw(st.sampled_from(["text", None])), family="generic",
        authority="informative", title=draw(st.text(max_size=10)), status="ok", sections=sections,
        provenance=Provenance("episteme", "0", "text", "1", "generic", "1", sha, sha),
        url=None if record else "https://e.org/a",
    ))


@settings(max_examples=150, deadline=None)
@given(document=_documents(), max_chars=st.integers(256, 400), overlap=st.integers(0, 255),
       verbatim=st.sets(st.sampled_from(["b1", "b2", "b3"])))
def test_fast_rows_equal_sealed_records(document: Document, max_chars: int, overlap: int,
                                        verbatim: set[str]) -> None:
    data = document.to_json()
    for chunker in (WindowChunker(), ParagraphChunker()):
        assert chunker.accepts_json(data) == chunker.accepts(document)
        options = {"max_chars": max_chars, "overlap_chars": overlap, "verbatim": frozenset(verbatim)}
        rows = chunker.chunk_rows(data, **options)
        expected = chunker.chunk_json(document, **options)
        assert [text.encode() for text in rows] == [canonical_bytes(row)[:-1] for row in expected]
        assert all(row["id"] == chunk_id(row) for row in expected)
        label = f"{chunker.name}/{chunker.version}"
        body = {"schemaVersion": OBJECT_SCHEMA_VERSION, "documentId": document.id, "source": document.source,
                "sourceKind": document.source_kind, "chunker": label, "chunks": expected}
        assert body_bytes(label, data, rows) == canonical_bytes(body)


@settings(max_examples=60, deadline=None)
@given(document=_documents())
def test_rows_are_cut_from_stored_bytes_exactly(document: Document) -> None:
    """``_canonical_rows`` gives each row's canonical bytes; any other layout is left to the parser."""
    import json

    from episteme_core.chunking import _canonical_rows

    data = document.to_json()
    chunker = ParagraphChunker() if ParagraphChunker().accepts_json(data) else WindowChunker()
    rows = chunker.chunk_rows(data, max_chars=300, overlap_chars=20)
    text = body_bytes("x/1", data, rows).decode()
    cut = _canonical_rows(text)
    assert cut is not None
    assert [raw for _, raw in cut] == [row.encode() for row in rows]
    assert [parsed for parsed, _ in cut] == json.loads(text)["chunks"]
    assert _canonical_rows(json.dumps(json.loads(text), indent=1)) is None
    assert _canonical_rows(text.replace('"chunks":[', '"chunks":{', 1)) is None
    assert _canonical_rows(text + "x") is None


def test_registered_chunkers_take_the_fast_path(tmp_path: Path) -> None:
    """The chunkers ``episteme chunk`` gets from the plugins cut documents' JSON (no records), with the
    same bytes as the record path."""
    from episteme_core.chunking import _chunk_fast, _chunk_records
    from episteme_core.documents import documents_stage
    from episteme_core.plugins import load_plugins

    from .conftest import commit, make_document

    chunkers = [c for c in load_plugins().all("chunker") if c.name in ("paragraph", "window")]
    assert [c.name for c in chunkers] == ["paragraph", "window"]
    home = commit(tmp_path / "h", [
        make_document("https://e.org/a", [("One", ["first words.", "second " * 200])]),
        make_document("book:x", [("b", ["para one", "para two"])], kind="books", document_type="record"),
    ])
    entries = documents_stage(home).read_index().entries  # type: ignore[union-attr]
    assert len(entries) == 2
    for entry in entries:
        fast, count = _chunk_fast(home, chunkers, entry, 300, 40)
        assert fast is not None and count > 0
        assert (fast, count) == _chunk_records(home, chunkers, entry, 300, 40)
