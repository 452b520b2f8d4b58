"""The ``paragraph`` chunker for personal records: one chunk per paragraph block.

A record's document (``document_type`` "record") has one block per paragraph. Each becomes one
chunk keeping the paragraph's own ``time``, the record id and the paragraph number ``n`` (the
block's ``attributes.n``, else its 1-based place), so a hit cites ``record#n`` exactly as
``episteme show`` prints it. A paragraph longer than ``max_chars`` is cut into parts with the
window rules; every part keeps the same ``n``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from episteme_core.chunking.rows import RECORD_DOCUMENT_TYPE, RowChunker, paragraph_rows

if TYPE_CHECKING:
    from episteme_core.records.evidence import Document

NAME = "paragraph"
VERSION = "3"  # 2: the document's diagnostics and limits; 3: blocks carry the PDF bbox, chunks the language


class ParagraphChunker(RowChunker):
    """Registered through ``episteme_chunkers``: documents of personal records."""

    name = NAME
    version = VERSION
    help = "one chunk per paragraph of a personal record, keeping its time and number"
    priority = 0

    def accepts(self, document: Document) -> bool:
        return document.document_type == RECORD_DOCUMENT_TYPE

    def accepts_json(self, data: dict[str, Any]) -> bool:
        """``accepts`` for a document given as its stored JSON."""
        return data.get("documentType") == RECORD_DOCUMENT_TYPE

    def rows(self, data: dict[str, Any], *, max_chars: int, overlap_chars: int, verbatim: frozenset[str],
             chunker: str) -> list[str]:
        return paragraph_rows(data, max_chars, overlap_chars, verbatim, chunker)
