"""The ``window`` chunker: bounded, overlapping windows over each section's blocks (not records).

Within a section, consecutive blocks of one normativity are laid end to end and cut with the
rules of ``chunking.layout``; windows never cross a section or a change of normativity, so a
``--normativity`` filter is exact. Chunks are built by ``chunking.rows`` on both paths.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from episteme_core.chunking.rows import RECORD_DOCUMENT_TYPE, RowChunker, window_rows

if TYPE_CHECKING:
    from episteme_core.records.evidence import Document

NAME = "window"
VERSION = "3"  # 2: the document's diagnostics and limits; 3: blocks carry the PDF bbox, chunks the language


class WindowChunker(RowChunker):
    """Registered through ``episteme_chunkers``: documents that are not records."""

    name = NAME
    version = VERSION
    help = "bounded, overlapping windows over each section's blocks"
    priority = 0

    def accepts(self, document: Document) -> bool:
        return document.document_type != RECORD_DOCUMENT_TYPE

    def accepts_json(self, data: dict[str, Any]) -> bool:
        """``accepts`` for a document given as its stored JSON."""
        return data.get("documentType") != RECORD_DOCUMENT_TYPE

    def rows(self, data: dict[str, Any], *, max_chars: int, overlap_chars: int, verbatim: frozenset[str],
             chunker: str) -> list[str]:
        return window_rows(data, max_chars, overlap_chars, verbatim, chunker)
