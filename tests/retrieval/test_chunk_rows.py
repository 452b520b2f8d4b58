"""The one chunk builder: canonical, sealed, valid chunks on the fast path and the record path alike."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from episteme_core.chunking.paragraph import ParagraphChunker
from episteme_core.chunking.rows import (
    OBJECT_SCHEMA_VERSION,
    Cut,
    body_bytes,
    body_pieces,
    build_chunks,
    cut_rows,
)
from episteme_core.chunking.window import WindowChunker
from episteme_core.errors import EpistemeError
from episteme_core.records.canonical import canonical_bytes
from episteme_core.records.evidence import (
    Block,
    Diagnostic,
    Document,
    Provenance,
    Section,
    Span,
    chunk_from_json,
    chunk_id,
    seal,
)
from episteme_core.testing import validate

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
def test_rows_are_canonical_sealed_valid_chunks(document: Document, max_chars: int, overlap: int,
                                               verbatim: set[str]) -> None:
    """Each row is the canonical JSON of a valid chunk whose id is its content's hash, and the
    record path (``chunk`` over the ``Document``) gives the same chunks."""
    data = document.to_json()
    for chunker in (WindowChunker(), ParagraphChunker()):
        assert chunker.accepts_json(data) == chunker.accepts(document)
        options = {"max_chars": max_chars, "overlap_chars": overlap, "verbatim": frozenset(verbatim)}
        rows = chunker.chunk_rows(data, **options)
        parsed = [json.loads(row) for row in rows]
        assert [row.encode() for row in rows] == [canonical_bytes(p)[:-1] for p in parsed]
        for row in parsed:
            assert row["id"] == chunk_id(row)
            assert chunk_from_json(row, source="test").to_json() == row  # every field is a Chunk's
            assert row["limits"] == document.limits
            assert row["diagnostics"] == sorted(
                ({"code": d.code, "level": d.level} for d in document.diagnostics),
                key=lambda d: (d["code"], d["level"]))
            validate(row, "chunk")
        assert [c.to_json() for c in chunker.chunk(document, **options)] == parsed
        label = f"{chunker.name}/{chunker.version}"
        body = {"schemaVersion": OBJECT_SCHEMA_VERSION, "documentId": document.id, "source": document.source,
                "sourceKind": document.source_kind, "chunker": label, "chunks": parsed}
        assert body_bytes(label, data, rows) == canonical_bytes(body)
        # in pieces of any size (what the stage writes to the object file), the same bytes
        assert b"".join(body_pieces(label, data, rows, piece_bytes=max_chars // 7 + 1)) == canonical_bytes(
            body
        )


def test_cuts_build_the_same_chunks_as_the_window_rule() -> None:
    """``cut_rows`` (what a plugin chunker uses) and the window rule share one builder."""
    document = _example_document()
    data = document.to_json()
    window = WindowChunker().chunk_rows(data, max_chars=6000, overlap_chars=0)
    cuts = []
    for s, section in enumerate(data["sections"]):
        texts = [b["text"] for b in section["blocks"]]
        cuts.append(Cut(section=s, blocks=tuple(range(len(texts))), start=0,
                        end=len("\n\n".join(texts))))
    assert cut_rows(data, cuts, "window/3") == window
    assert [c.to_json() for c in build_chunks(document, cuts, chunker="window/3")] == [
        json.loads(row) for row in window]


@pytest.mark.parametrize(("start", "end"), [(0, 0), (-1, 3), (2, 999), (5, 4)])
def test_a_cut_outside_its_blocks_is_refused(start: int, end: int) -> None:
    data = _example_document().to_json()
    with pytest.raises(EpistemeError) as caught:
        cut_rows(data, [Cut(section=0, blocks=(0,), start=start, end=end)], "x/1")
    assert caught.value.code == "INVALID_INPUT" and "x/1" in caught.value.message


def _example_document() -> Document:
    sha = "a" * 64
    blocks = [Block(id="b1", kind="paragraph", text="first words", section_id="s0"),
              Block(id="b2", kind="paragraph", text="second words", section_id="s0")]
    return seal(Document(
        id="", source="https://e.org/a", source_kind="http", snapshot_id="c" * 64, source_sha256=sha,
        content_type="text/plain", document_type="text", family="generic", authority="informative",
        title="t", status="partial", sections=[Section(id="s0", heading="H", blocks=blocks)],
        provenance=Provenance("episteme", "0", "text", "1", "generic", "1", sha, sha),
        url="https://e.org/a", limits=["no-layout"],
        diagnostics=[Diagnostic("B", "warning", "b"), Diagnostic("A", "error", "a"),
                     Diagnostic("A", "error", "again")],
    ))


def test_chunks_carry_the_documents_diagnostics_and_limits() -> None:
    (chunk,) = WindowChunker().chunk(_example_document(), max_chars=6000, overlap_chars=0)
    assert chunk.limits == ["no-layout"]
    assert [(d.code, d.level) for d in chunk.diagnostics] == [("A", "error"), ("B", "warning")]


@settings(max_examples=60, deadline=None)
@given(document=_documents())
def test_rows_are_cut_from_stored_bytes_exactly(document: Document) -> None:
    """``_canonical_rows`` gives each row's canonical bytes; any other layout is left to the parser."""
    from episteme_core.stages.chunks import _canonical_rows

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


class _RecordsOnly:
    """A chunker without the fast path: the stage builds its object from ``Chunk`` records."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.name = inner.name  # type: ignore[attr-defined]
        self.version = inner.version  # type: ignore[attr-defined]

    def accepts(self, document: Document) -> bool:
        return self.inner.accepts(document)  # type: ignore[attr-defined,no-any-return]

    def chunk(self, document: Document, **options: object) -> list:  # type: ignore[type-arg]
        return self.inner.chunk(document, **options)  # type: ignore[attr-defined,no-any-return]


def test_the_fast_path_and_the_record_path_store_the_same_bytes(tmp_path: Path) -> None:
    """The chunkers ``episteme chunk`` gets from the plugins cut documents' JSON (no records); a
    chunker that only returns records gets the very same object bytes."""
    from episteme_core.chunking.run import _chunk_body, _Pending, select_chunker
    from episteme_core.kernel.loader import load_plugins
    from episteme_core.stages.documents import documents_stage

    from .conftest import commit, make_document

    chunkers = [c for c in load_plugins().all("chunker") if c.name in ("paragraph", "window")]
    assert sorted(c.name for c in chunkers) == ["paragraph", "window"]
    home = commit(tmp_path / "h", [
        make_document("https://e.org/a", [("One", ["first words.", "second " * 200])]),
        make_document("book:x", [("b", ["para one", "para two"])], kind="books", document_type="record"),
    ])
    entries = documents_stage(home).read_index().entries  # type: ignore[union-attr]
    assert len(entries) == 2
    for entry in entries:
        pending = _Pending(home, entry)
        chunker = select_chunker(chunkers, pending)
        fast, count = _chunk_body(home, chunker, pending, 300, 40)
        assert count > 0
        slow, slow_count = _chunk_body(home, _RecordsOnly(chunker), _Pending(home, entry), 300, 40)
        assert (b"".join(fast), count) == (b"".join(slow), slow_count)


@settings(max_examples=200, deadline=None)
@given(
    lengths=st.lists(st.integers(min_value=0, max_value=40), min_size=1, max_size=30),
    window=st.tuples(st.integers(min_value=0, max_value=1300), st.integers(min_value=0, max_value=1300)),
)
def test_a_window_covers_exactly_the_blocks_it_overlaps(lengths: list[int], window: tuple[int, int]) -> None:
    """The window's blocks, found by bisection over the run, are those a walk over every block finds:
    each block whose text shares at least one character with the window, in reading order."""
    from episteme_core.chunking.layout import layout
    from episteme_core.chunking.rows import _covered

    run = [{"id": f"b{n}", "kind": "paragraph", "text": "x" * length} for n, length in enumerate(lengths)]
    _, starts, ends = layout([block["text"] for block in run])
    lo_w, hi_w = sorted(window)
    expected = [block["id"] for block, start, end in zip(run, starts, ends, strict=True)
                if max(start, lo_w) < min(end, hi_w)]
    assert [block["id"] for block, _ in _covered(run, starts, ends, lo_w, hi_w, frozenset())] == expected


@settings(max_examples=100, deadline=None)
@given(document=_documents(), depth=st.integers(0, 6), piece_bytes=st.integers(1, 300))
def test_a_document_in_pieces_is_its_bytes_and_its_id_is_the_json_s(
    document: Document, depth: int, piece_bytes: int
) -> None:
    """``seal`` hashes the record a piece at a time and the stage writes ``to_pieces``: the same
    id as ``document_id`` of its JSON, the same bytes as ``to_bytes``."""
    from episteme_core.records.canonical import canonical_pieces
    from episteme_core.records.evidence import document_id

    assert document.id == document_id(document.to_json())
    assert b"".join(document.to_pieces()) == document.to_bytes()
    assert b"".join(canonical_pieces(document, depth=depth, piece_bytes=piece_bytes)) == document.to_bytes()
