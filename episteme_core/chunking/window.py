"""The ``window`` chunker: bounded, overlapping windows over a section's blocks.

Within a section, consecutive blocks of one normativity are laid end to end (a blank line between
them) and cut into windows of at most ``max_chars``. A window ends, by preference, at a block's
end, else after a sentence, else at a space, never before half of ``max_chars``; a window that ends
inside a block makes the next one start ``overlap_chars`` earlier, at a word. Windows never cross a
section or a change of normativity, so a ``--normativity`` filter is exact.
"""

from __future__ import annotations

import bisect
import re
from typing import Any

import attrs

from episteme_core.chunk import SEPARATOR, Chunk, ChunkBlock, Part, seal, sealed_json
from episteme_core.document import Block, Document, Section

NAME = "window"
VERSION = "2"  # 2: chunk blocks carry the PDF bbox
DEFAULT_MAX_CHARS = 6000
DEFAULT_OVERLAP_CHARS = 400
MIN_MAX_CHARS, MAX_MAX_CHARS = 256, 100_000

_SENTENCE_END = re.compile(r"[.!?。！？][\"'”’)\]]*\s")
_SPACE = re.compile(r"\s")


@attrs.frozen
class Window:
    """``[start, end)`` of a run's laid-out text."""

    start: int
    end: int


def _layout(blocks: list[Block]) -> tuple[str, list[int], list[int]]:
    """The run's text (blocks joined by a blank line) and each block's start and end in it."""
    starts: list[int] = []
    ends: list[int] = []
    position = 0
    for block in blocks:
        starts.append(position)
        position += len(block.text)
        ends.append(position)
        position += len(SEPARATOR)
    return SEPARATOR.join(block.text for block in blocks), starts, ends


def _cut(text: str, start: int, limit: int, ends: list[int], max_chars: int) -> tuple[int, bool]:
    """Where a window from ``start`` ends (at most ``limit``), and whether that is a block's end."""
    floor = start + max(1, max_chars // 2)
    i = bisect.bisect_right(ends, limit) - 1
    if i >= 0 and ends[i] > start and ends[i] >= floor:
        return ends[i], True
    window = text[floor:limit]
    best = -1
    for match in _SENTENCE_END.finditer(window):
        best = match.end() - 1  # keep the punctuation, cut before the space
    if best > 0:
        return floor + best, False
    space = max(window.rfind(" "), window.rfind("\n"), window.rfind("\t"))
    if space > 0:
        return floor + space, False
    return limit, False


def windows(text: str, ends: list[int], max_chars: int, overlap: int) -> list[Window]:
    """Cut ``text`` (a laid-out run) into windows; each ends at a block end, a sentence or a space."""
    result: list[Window] = []
    starts = [0] + [end + len(SEPARATOR) for end in ends[:-1]]
    start = 0
    total = len(text)
    while start < total:
        limit = min(start + max_chars, total)
        if limit == total:
            end, at_block = total, True
        else:
            end, at_block = _cut(text, start, limit, ends, max_chars)
        while end > start and text[end - 1].isspace():
            end -= 1
        if end <= start:
            end = limit
        result.append(Window(start, end))
        if end >= total:
            break
        if at_block:
            nxt = starts[bisect.bisect_right(starts, end)] if bisect.bisect_right(starts, end) < len(
                starts) else total
        else:
            back = max(end - overlap, start + 1)
            space = _SPACE.search(text, back, end)
            nxt = space.end() if space and overlap > 0 else (end if overlap == 0 else back)
        while nxt < total and text[nxt].isspace():
            nxt += 1
        start = max(nxt, start + 1)
    return result


def _runs(section: Section) -> list[list[Block]]:
    """The section's blocks in runs of one normativity (empty blocks dropped)."""
    runs: list[list[Block]] = []
    for block in section.blocks:
        if not block.text.strip():
            continue
        if runs and runs[-1][-1].normativity == block.normativity:
            runs[-1].append(block)
        else:
            runs.append([block])
    return runs


def chunk_document(
    document: Document, max_chars: int, overlap: int, verbatim: frozenset[str] = frozenset()
) -> list[Chunk]:
    """Every window of every section of ``document``, in reading order (not yet sealed: id "")."""
    chunks: list[Chunk] = []
    for section in document.sections:
        drafts: list[tuple[str, list[ChunkBlock], str]] = []
        for run in _runs(section):
            text, starts, ends = _layout(run)
            for window in windows(text, ends, max_chars, overlap):
                covered = _covered(run, starts, ends, window, verbatim)
                drafts.append((text[window.start : window.end], covered, run[0].normativity))
        for index, (text, covered, normativity) in enumerate(drafts, start=1):
            chunks.append(_make(document, section, text, covered, normativity,
                                Part(index=index, count=len(drafts))))
    return chunks


def _covered(
    run: list[Block], starts: list[int], ends: list[int], window: Window,
    verbatim: frozenset[str] = frozenset(),
) -> list[ChunkBlock]:
    covered: list[ChunkBlock] = []
    for block, b_start, b_end in zip(run, starts, ends, strict=True):
        lo, hi = max(window.start, b_start), min(window.end, b_end)
        if lo >= hi:
            continue
        covered.append(ChunkBlock(
            block_id=block.id,
            kind=block.kind,
            normativity=block.normativity,
            start=lo - b_start,
            end=hi - b_start,
            offset=lo - window.start,
            block_length=len(block.text),
            anchor=block.anchor,
            page=block.page,
            span=block.span,
            time=block.time,
            verbatim=block.id in verbatim,
            bbox=block.bbox,
        ))
    return covered


def _make(
    document: Document, section: Section, text: str, covered: list[ChunkBlock], normativity: str,
    part: Part, *, chunker: str = f"{NAME}/{VERSION}", record_id: str | None = None,
    paragraph: int | None = None, attributes: dict[str, object] | None = None,
) -> Chunk:
    first = covered[0]
    times = [block.time for block in covered if block.time]
    return Chunk(
        id="",
        document_id=document.id,
        source=document.source,
        source_kind=document.source_kind,
        snapshot_id=document.snapshot_id,
        source_sha256=document.source_sha256,
        url=document.url,
        fragment=first.anchor or section.anchor,
        title=document.title,
        family=document.family,
        authority=document.authority,
        document_type=document.document_type,
        section_id=section.id,
        section_path=list(section.path),
        heading=section.heading,
        normativity=normativity,
        text=text,
        blocks=covered,
        part=part,
        chunker=chunker,
        time=times[0] if times else None,
        language=document_language(document.attributes),
        record_id=record_id,
        paragraph=paragraph,
        attributes=dict(attributes or {}),
    )


def document_language(attributes: dict[str, object]) -> str | None:
    """The language a document's attributes name (``language``), which its chunks carry."""
    value = attributes.get("language")
    return value if isinstance(value, str) and value else None


class WindowChunker:
    """Registered through ``episteme_chunkers``: documents that are not records."""

    name = NAME
    version = VERSION
    help = "bounded, overlapping windows over each section's blocks"

    def accepts(self, document: Document) -> bool:
        return document.document_type != "record"

    def accepts_json(self, data: dict[str, Any]) -> bool:
        """``accepts`` for a document given as its stored JSON."""
        return data.get("documentType") != "record"

    def chunk(
        self, document: Document, *, max_chars: int, overlap_chars: int,
        verbatim: frozenset[str] = frozenset(),
    ) -> list[Chunk]:
        return [seal(c) for c in chunk_document(document, max_chars, overlap_chars, verbatim)]

    def chunk_json(
        self, document: Document, *, max_chars: int, overlap_chars: int,
        verbatim: frozenset[str] = frozenset(),
    ) -> list[dict[str, Any]]:
        """The chunks as sealed JSON (what the chunks stage stores), without building records twice."""
        return [sealed_json(c) for c in chunk_document(document, max_chars, overlap_chars, verbatim)]

    def chunk_rows(
        self, data: dict[str, Any], *, max_chars: int, overlap_chars: int,
        verbatim: frozenset[str] = frozenset(),
    ) -> list[str]:
        """The chunks of a document given as its stored JSON, as sealed canonical JSON texts (the
        stage's fast path: no records; same bytes as ``chunk_json``)."""
        from episteme_core.chunking.rows import window_rows

        return window_rows(data, max_chars, overlap_chars, verbatim, f"{NAME}/{VERSION}")
