"""Hypothesis strategies and home builders shared by the retrieval laws (documents → chunks → shards)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from episteme_core.chunking.paragraph import ParagraphChunker
from episteme_core.chunking.run import chunk_home
from episteme_core.chunking.window import WindowChunker
from episteme_core.records.evidence import Block, Document, Provenance, Section, Span, seal
from episteme_core.stages.documents import write_documents
from episteme_core.store.home import Home

WORDS = ("whale", "sea", "ship", "Straße", "東京都", "café", "हिन्दी", "ＦＵＬＬ", "must", "a", "x_y", "42")
SOURCES = ("http", "file", "books", "claude", "git")
SHA = "a" * 64

texts = st.lists(st.sampled_from(WORDS) | st.text(min_size=1, max_size=10), min_size=1, max_size=40).map(
    " ".join
)


@st.composite
def documents(draw: Any, max_documents: int = 5) -> list[Document]:
    """Documents of random sources, sections and paragraphs (records for the personal sources)."""
    result = []
    n = draw(st.integers(min_value=1, max_value=max_documents))
    for d in range(n):
        kind = draw(st.sampled_from(SOURCES))
        record = kind in ("books", "claude", "git")
        sections = draw(st.lists(st.lists(texts, min_size=1, max_size=4), min_size=1, max_size=3))
        result.append(make_document(f"{kind}:doc/{d}", kind, sections, record=record))
    return result


def make_document(source: str, kind: str, sections: Sequence[Sequence[str]], *, record: bool = False) -> Document:
    built = []
    position = 0
    number = 0
    for s, paragraphs in enumerate(sections, start=1):
        blocks = []
        for text in paragraphs:
            number += 1
            blocks.append(Block(id=f"b{number}", kind="paragraph", text=text, section_id=f"s{s}",
                                span=Span(position, position + len(text)),
                                attributes={"n": number} if record else {}))
            position += len(text) + 2
        built.append(Section(id=f"s{s}", heading=f"Heading {s}", path=[f"Heading {s}"], blocks=blocks))
    return seal(Document(
        id="", source=source, source_kind=kind, snapshot_id="c" * 64, source_sha256=SHA,
        content_type="text/plain", document_type="record" if record else "text", family="generic",
        authority="informative", title=source, status="ok", sections=built,
        provenance=Provenance("episteme", "0", "text", "1", "generic", "1", SHA, "b" * 64),
        url=None if record else f"https://example.org/{source}",
    ))


def commit_and_chunk(root: Path, docs: Sequence[Document], *, replace: bool = True,
                     max_chars: int = 300, overlap: int = 40) -> Home:
    """Commit ``docs`` and chunk them (no lock: the law owns the home)."""
    home = Home(root)
    root.mkdir(parents=True, exist_ok=True)
    write_documents(home, docs, replace=replace)
    chunk_home(home, [ParagraphChunker(), WindowChunker()], max_chars=max_chars, overlap_chars=overlap)
    return home
