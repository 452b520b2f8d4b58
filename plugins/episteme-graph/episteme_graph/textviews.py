"""The texts of a recorded snapshot that a selector can point into.

The **source text** is the snapshot's bytes decoded with its recorded charset (else UTF-8), a leading
BOM dropped; PDFs and other binary content have none. The **document text** is the blocks of the
committed document extracted from that very snapshot, or a personal record's paragraphs (read from the
record itself, so an older snapshot of a record works too).
"""

from __future__ import annotations

import codecs
import json
import re
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from episteme_core.api import Home, SnapshotCatalog

RECORD_TYPE = "application/vnd.episteme.record+json"
BINARY_TYPES = (
    "application/pdf",
    "image/",
    "audio/",
    "video/",
    "application/zip",
    "application/octet-stream",
)


@attrs.frozen
class Block:
    """One piece of the document text: its id, text, page and fragment anchors."""

    id: str
    text: str
    page: int | None = None
    anchors: tuple[str, ...] = ()


JOIN = "\n\n"  # how chunks and query passages join blocks: a quote across blocks holds it at each seam


@attrs.frozen
class Views:
    """What a snapshot offers for verification. ``joined`` is the document text as one string, the
    blocks joined by a blank line the way a query passage joins them, so a quote that runs on from
    one block into the next is found there."""

    snapshot_id: str
    source: str  # the snapshot's source URL or record id
    source_text: str | None
    blocks: tuple[Block, ...]
    page_count: int | None
    anchors: frozenset[str]
    joined: str = attrs.field(init=False)
    starts: tuple[int, ...] = attrs.field(init=False)  # where each block begins in ``joined``

    @joined.default
    def _joined(self) -> str:
        return JOIN.join(b.text for b in self.blocks)

    @starts.default
    def _starts(self) -> tuple[int, ...]:
        starts, at = [], 0
        for block in self.blocks:
            starts.append(at)
            at += len(block.text) + len(JOIN)
        return tuple(starts)

    def spanned(self, start: int, end: int) -> list[int]:
        """The indexes of the blocks that ``joined[start:end]`` touches (a seam touches none)."""
        return [
            i
            for i, (at, block) in enumerate(zip(self.starts, self.blocks, strict=True))
            if at < end and start < at + len(block.text)
        ]


def _decode(data: bytes, charset: str | None, content_type: str | None) -> str | None:
    kind = (content_type or "").lower()
    if kind.startswith(BINARY_TYPES) or data.startswith(b"%PDF-") or b"\x00" in data[:4096]:
        return None
    name = charset or "utf-8"
    try:
        codecs.lookup(name)
    except LookupError:
        name = "utf-8"
    text = data.decode(name, errors="replace")
    return text[1:] if text.startswith("\ufeff") else text


_HTML_ID = re.compile(r"""\s(?:id|name)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.IGNORECASE)


def _record_blocks(data: bytes) -> tuple[Block, ...]:
    try:
        record = json.loads(data)
    except ValueError:
        return ()
    paragraphs = record.get("paragraphs") if isinstance(record, dict) else None
    if not isinstance(paragraphs, list):
        return ()
    return tuple(
        Block(f"p{p.get('n')}", p["text"], anchors=(str(p.get("n")),))
        for p in paragraphs
        if isinstance(p, dict) and isinstance(p.get("text"), str)
    )


def _document_blocks(home: Home, source: str, snapshot_id: str) -> tuple[tuple[Block, ...], int | None]:
    from episteme_core.api import read_documents

    for document in read_documents(home, [source]):
        if document.snapshot_id != snapshot_id:
            continue
        blocks = []
        for section in document.sections:
            section_anchors = tuple(a for a in (section.anchor,) if a)
            for block in section.blocks:
                anchors = tuple(a for a in (block.anchor, *block.anchors) if a) + section_anchors
                blocks.append(Block(block.id, block.text, block.page, anchors))
        pages = document.attributes.get("pageCount") if isinstance(document.attributes, dict) else None
        return tuple(blocks), pages if isinstance(pages, int) else None
    return (), None


def views_of(home: Home, catalog: SnapshotCatalog, snapshot_id: str) -> Views:
    """Read (and verify) the snapshot's bytes and gather its texts."""
    record = catalog.record(snapshot_id)
    data = catalog.content(record)
    text = _decode(data, record.charset, record.content_type)
    if (record.content_type or "").startswith(RECORD_TYPE):
        blocks, pages = _record_blocks(data), None
    else:
        blocks, pages = _document_blocks(home, record.source, snapshot_id)
    anchors = {a for b in blocks for a in b.anchors}
    if text is not None and "html" in (record.content_type or "").lower():
        anchors.update(next(g for g in m.groups() if g is not None) for m in _HTML_ID.finditer(text))
    if pages is None:
        found = [b.page for b in blocks if b.page is not None]
        pages = max(found) if found else None
    return Views(snapshot_id, record.source, text, blocks, pages, frozenset(anchors))


def find_snapshot(
    catalog: SnapshotCatalog,
    *,
    snapshot_id: str | None = None,
    sha256: str | None = None,
    url: str | None = None,
) -> str | None:
    """A snapshot by id, or the one holding bytes of ``sha256`` (the one captured from ``url`` first,
    then the smallest id)."""
    if snapshot_id is not None:
        return snapshot_id if catalog.has_snapshot(snapshot_id) else None
    if sha256 is None:
        return None
    matches: list[tuple[int, str]] = []
    for sid in catalog.snapshot_ids():
        record = catalog.record(sid)
        if record.content_sha256 == sha256:
            matches.append((0 if url and url in (record.source, record.final_url) else 1, sid))
    return min(matches)[1] if matches else None


def page_of(views: Views, predicate: Any) -> list[int]:
    return sorted({b.page for b in views.blocks if b.page is not None and predicate(b)})
