"""The ``paragraph`` chunker for personal records: one chunk per paragraph block.

A record's document (``document_type`` "record") has one block per paragraph. Each becomes one
chunk keeping the paragraph's own ``time``, the record id and the paragraph number ``n`` (the
block's ``attributes.n``, else its 1-based place), so a hit cites ``record#n`` exactly as
``episteme show`` prints it. A paragraph longer than ``max_chars`` is cut into parts with the
window rules; every part keeps the same ``n``.
"""

from __future__ import annotations

from typing import Any

from episteme_core.chunk import Chunk, Part, seal, sealed_json
from episteme_core.chunking.window import _covered, _layout, _make, windows
from episteme_core.document import Document

NAME = "paragraph"
VERSION = "2"  # 2: chunk blocks carry the PDF bbox (null for records)
RECORD_DOCUMENT_TYPE = "record"


def paragraph_number(block_attributes: dict[str, object], position: int) -> int:
    n = block_attributes.get("n")
    return n if isinstance(n, int) and not isinstance(n, bool) else position


def chunk_record(
    document: Document, max_chars: int, overlap: int, verbatim: frozenset[str] = frozenset()
) -> list[Chunk]:
    """One chunk per non-empty paragraph block (more when a paragraph is longer than max_chars);
    not yet sealed (id "")."""
    chunks: list[Chunk] = []
    position = 0
    for section in document.sections:
        for block in section.blocks:
            position += 1
            if not block.text.strip():
                continue
            n = paragraph_number(block.attributes, position)
            text, starts, ends = _layout([block])
            cut = windows(text, ends, max_chars, overlap)
            for index, window in enumerate(cut, start=1):
                covered = _covered([block], starts, ends, window, verbatim)
                chunks.append(_make(
                    document, section, text[window.start : window.end], covered, block.normativity,
                    Part(index=index, count=len(cut)), chunker=f"{NAME}/{VERSION}",
                    record_id=document.source, paragraph=n, attributes=dict(block.attributes),
                ))
    return chunks


class ParagraphChunker:
    """Registered through ``episteme_chunkers``: documents of personal records."""

    name = NAME
    version = VERSION
    help = "one chunk per paragraph of a personal record, keeping its time and number"

    def accepts(self, document: Document) -> bool:
        return document.document_type == RECORD_DOCUMENT_TYPE

    def accepts_json(self, data: dict[str, Any]) -> bool:
        """``accepts`` for a document given as its stored JSON."""
        return data.get("documentType") == RECORD_DOCUMENT_TYPE

    def chunk(
        self, document: Document, *, max_chars: int, overlap_chars: int,
        verbatim: frozenset[str] = frozenset(),
    ) -> list[Chunk]:
        return [seal(c) for c in chunk_record(document, max_chars, overlap_chars, verbatim)]

    def chunk_json(
        self, document: Document, *, max_chars: int, overlap_chars: int,
        verbatim: frozenset[str] = frozenset(),
    ) -> list[dict[str, Any]]:
        return [sealed_json(c) for c in chunk_record(document, max_chars, overlap_chars, verbatim)]

    def chunk_rows(
        self, data: dict[str, Any], *, max_chars: int, overlap_chars: int,
        verbatim: frozenset[str] = frozenset(),
    ) -> list[str]:
        """Sealed canonical JSON texts from the document's stored JSON (same bytes as ``chunk_json``)."""
        from episteme_core.chunking.rows import paragraph_rows

        return paragraph_rows(data, max_chars, overlap_chars, verbatim, f"{NAME}/{VERSION}")
