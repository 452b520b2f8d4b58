"""Assemble a Document from an extractor's sections and blocks: ids, paths, normativity, fragment.

Every extractor (and the record extractor of personal sources) builds through this class so that
ids, section paths, fragment narrowing, provenance and the content-derived id follow one rule.

The builder also bounds the document, whatever the input, so that extraction, chunking and indexing
stay within memory: at most ``MAX_BLOCKS`` blocks, ``MAX_BLOCK_CHARS`` characters in one block (a
longer block keeps its first characters), ``MAX_DOCUMENT_CHARS`` characters in all (block text
plus the section headings each block repeats), ``MAX_SECTIONS`` sections and ``MAX_SECTION_DEPTH``
levels of them. Past a bound the document is ``partial`` with a diagnostic (``BLOCK_LIMIT``,
``BLOCK_TRUNCATED``, ``DOCUMENT_LIMIT``, ``SECTION_LIMIT``, ``SECTION_DEPTH_LIMIT``); past the block
and character bounds later blocks are dropped and ``full`` tells an extractor it may stop reading,
past the section bounds later headings stay blocks of the sections already open.
"""

from __future__ import annotations

from typing import Any

import attrs

from episteme_core.extract.family import rules_of
from episteme_core.records.evidence import (
    BBox,
    Block,
    Diagnostic,
    Document,
    Section,
    Span,
    configuration_sha256,
    provenance,
    seal,
)
from episteme_core.records.extraction import ExtractRequest

MAX_BLOCKS = 100_000
MAX_SECTIONS = 10_000  # later headings stay blocks of the last section (each section is a chunk or more)
MAX_BLOCK_CHARS = 1_000_000
MAX_DOCUMENT_CHARS = 32_000_000
MAX_SECTION_DEPTH = 64
MAX_HEADING_CHARS = 1_000  # a section's heading as repeated in each block's path (the block keeps all)


@attrs.define
class _SectionDraft:
    id: str
    heading: str
    level: int
    path: list[str]
    number: str | None
    anchor: str | None
    normativity: str
    blocks: list[Block] = attrs.field(factory=list)
    path_chars: int = 0  # characters each of its blocks repeats (its path and heading)


class DocumentBuilder:
    """Collects sections and blocks in reading order, then ``build()`` seals the Document."""

    def __init__(
        self,
        request: ExtractRequest,
        *,
        extractor: str,
        extractor_version: str,
        document_type: str | None = None,
        limits: tuple[str, ...] = (),
        max_blocks: int = MAX_BLOCKS,
        max_block_chars: int = MAX_BLOCK_CHARS,
        max_document_chars: int = MAX_DOCUMENT_CHARS,
        max_section_depth: int = MAX_SECTION_DEPTH,
        max_sections: int = MAX_SECTIONS,
    ) -> None:
        self.request = request
        self.max_sections = max_sections
        self.max_blocks = max_blocks
        self.max_block_chars = max_block_chars
        self.max_document_chars = max_document_chars
        self.max_section_depth = max_section_depth
        self.blocks = 0  # blocks added so far
        self.chars = 0  # characters they hold, paths included
        self.full = False  # a bound was reached: later blocks are dropped
        self.extractor = extractor
        self.extractor_version = extractor_version
        self.family = request.family
        self.authority = request.effective_authority
        self.document_type = document_type or getattr(self.family, "document_type", None)
        self.title: str | None = None
        self.limits = list(limits)
        self.warnings: list[str] = []
        self.diagnostics: list[Diagnostic] = []
        self.attributes: dict[str, Any] = {}
        self._sections: list[_SectionDraft] = []
        self._stack: list[_SectionDraft] = []
        self._ids: set[str] = set()
        self._status = "ok"

    # sections and blocks ------------------------------------------------------

    def _unique(self, wanted: str | None, fallback: str) -> str:
        if wanted and wanted not in self._ids:
            self._ids.add(wanted)
            return wanted
        candidate, n = fallback, 1
        while candidate in self._ids:
            n += 1
            candidate = f"{fallback}~{n}"
        self._ids.add(candidate)
        return candidate

    def open_section(
        self,
        heading: str,
        level: int = 1,
        *,
        anchor: str | None = None,
        number: str | None = None,
        normativity: str | None = None,
    ) -> str:
        """Start a section at ``level``; it nests under the open sections of lower level.

        Once the document is ``full`` nothing more is opened (the current section's id is returned).
        """
        if self.full:
            return self.current_section or ""
        if len(self._sections) >= self.max_sections and self._stack:
            self._once("SECTION_LIMIT", f"more than {self.max_sections} sections: later headings stay "
                       "in the last section")
            return self._stack[-1].id
        while self._stack and self._stack[-1].level >= level:
            self._stack.pop()
        if len(self._stack) >= self.max_section_depth:
            self._once("SECTION_DEPTH_LIMIT", f"sections nested deeper than {self.max_section_depth} "
                       "levels were attached at that depth")
            while len(self._stack) >= self.max_section_depth:
                self._stack.pop()
        parent = self._stack[-1] if self._stack else None
        if normativity is None:
            normativity = parent.normativity if parent and parent.normativity != "normative" else (
                self._default_normativity()
            )
        section_id = self._unique(anchor, f"s-{len(self._sections) + 1}")
        label = heading if len(heading) <= MAX_HEADING_CHARS else heading[:MAX_HEADING_CHARS] + "\u2026"
        path = [*(parent.path if parent else []), label]
        draft = _SectionDraft(section_id, label, level, path, number, anchor, normativity,
                              path_chars=sum(map(len, path)) + len(label))
        self._sections.append(draft)
        self._stack.append(draft)
        return section_id

    @property
    def current_section(self) -> str | None:
        return self._stack[-1].id if self._stack else None

    @property
    def current_level(self) -> int:
        return self._stack[-1].level if self._stack else 0

    def close_section(self, section_id: str) -> None:
        """End ``section_id`` (and what nests in it): later blocks go to its parent again."""
        if any(draft.id == section_id for draft in self._stack):
            while self._stack:
                if self._stack.pop().id == section_id:
                    break

    def mark_section(self, normativity: str) -> None:
        """The open section turns out to be informative ("This section is non-normative.")."""
        if not self._stack:
            return
        draft = self._stack[-1]
        previous = draft.normativity
        draft.normativity = normativity
        draft.blocks = [
            attrs.evolve(b, normativity=normativity) if b.normativity == previous else b
            for b in draft.blocks
        ]

    def _default_normativity(self) -> str:
        return "normative" if self.authority == "normative" else "informative"

    def add_block(
        self,
        kind: str,
        text: str,
        *,
        anchor: str | None = None,
        anchors: list[str] | tuple[str, ...] = (),
        span: tuple[int, int] | None = None,
        page: int | None = None,
        bbox: tuple[float, float, float, float] | None = None,
        rows: list[list[str]] | None = None,
        normativity: str | None = None,
        confidence: float | None = None,
        time: str | None = None,
        attributes: dict[str, Any] | None = None,
        anchor_is_id: bool = True,
    ) -> Block | None:
        """Add a block to the current section (a default one when none is open); empty text is skipped.

        Past a bound of the document (see the module) the block is dropped and None is returned.
        """
        if self.full or (not text.strip() and not rows):
            return None
        if self.blocks >= self.max_blocks:
            self._stop("BLOCK_LIMIT", f"more than {self.max_blocks} blocks: the rest of the source "
                       "was not read")
            return None
        if len(text) > self.max_block_chars:
            self._once("BLOCK_TRUNCATED", f"blocks longer than {self.max_block_chars} characters keep "
                       "only their first characters (attribute truncatedFrom)")
            attributes = {**(attributes or {}), "truncatedFrom": len(text)}
            text, span, rows = text[: self.max_block_chars], None, None
        if not self._stack:
            self.open_section(self.title or "Document", 1)
        section = self._stack[-1]
        cost = len(text) * (2 if rows else 1) + section.path_chars  # a table's cells repeat its text
        if self.chars + cost > self.max_document_chars:
            self._stop("DOCUMENT_LIMIT", f"more than {self.max_document_chars} characters: the rest of "
                       "the source was not read")
            return None
        self.blocks += 1
        self.chars += cost
        if normativity is None:
            normativity = section.normativity
        block_id = self._unique(anchor if anchor_is_id else None, f"{section.id}/{len(section.blocks) + 1}")
        block = Block(
            id=block_id,
            kind=kind,
            text=text,
            normativity=normativity,
            section_id=section.id,
            section_path=list(section.path),
            section_heading=section.heading,
            anchor=anchor,
            anchors=sorted({a for a in anchors if a and a != anchor}),
            span=Span(span[0], span[1]) if span else None,
            page=page,
            bbox=BBox(*bbox) if bbox else None,
            rows=rows,
            confidence=confidence,
            time=time,
            attributes=dict(attributes or {}),
        )
        section.blocks.append(block)
        return block

    # bounds -----------------------------------------------------------------------

    def _once(self, code: str, message: str) -> None:
        if all(d.code != code for d in self.diagnostics):
            self.diagnose(code, "error", message)

    def _stop(self, code: str, message: str) -> None:
        self.full = True
        self._once(code, message)

    # diagnostics ----------------------------------------------------------------

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    def diagnose(
        self, code: str, level: str, message: str, *, page: int | None = None, detail: str | None = None
    ) -> None:
        """Record a diagnostic; an ``error`` makes the document partial unless it is failed."""
        self.diagnostics.append(Diagnostic(code, level, message, page, detail))
        if level == "error" and self._status == "ok":
            self._status = "partial"

    def fail(self, code: str, message: str, *, detail: str | None = None) -> None:
        """The source could not be read at all: status ``failed``, with the cause."""
        self.diagnostics.append(Diagnostic(code, "error", message, None, detail))
        self._status = "failed"

    def partial(self) -> None:
        if self._status == "ok":
            self._status = "partial"

    # the document ---------------------------------------------------------------

    def _sections_out(self) -> list[Section]:
        refine = getattr(self.family, "refine_block", None)
        out = []
        for draft in self._sections:
            section = Section(
                id=draft.id,
                heading=draft.heading,
                level=draft.level,
                path=draft.path,
                number=draft.number,
                anchor=draft.anchor,
                normativity=draft.normativity,
                blocks=[],
            )
            blocks = [refine(b, section) if refine else b for b in draft.blocks]
            out.append(attrs.evolve(section, blocks=blocks))
        return [s for s in out if s.blocks or s.heading]

    def _narrow(self, sections: list[Section], fragment: str) -> list[Section]:
        for index, section in enumerate(sections):
            if fragment in (section.anchor, section.id):
                kept = [section]
                for later in sections[index + 1:]:
                    if later.level <= section.level:
                        break
                    kept.append(later)
                return kept
        for section in sections:
            for block in section.blocks:
                if fragment in (block.anchor, block.id) or fragment in block.anchors:
                    return [attrs.evolve(section, blocks=[block])]
        self.warn(f"fragment not found: {fragment}")
        return sections

    def build(self) -> Document:
        """Seal the document: provenance, configuration sha256, fragment narrowing, id."""
        request = self.request
        family_name = getattr(self.family, "name", "generic")
        family_version = str(getattr(self.family, "version", "1"))
        configuration = request_configuration(request, self.extractor, self.extractor_version)
        sections = self._sections_out()
        if request.fragment and self._status != "failed":
            sections = self._narrow(sections, request.fragment)
        if self._status != "failed" and not any(s.blocks for s in sections):
            self.warn("no text was extracted")
        record = request.record
        title = self.title or next((s.heading for s in sections if s.heading), None) or request.url
        document = Document(
            id="",
            source=record.source,
            source_kind=record.capture_kind,
            snapshot_id=record.id,
            source_sha256=record.content_sha256,
            content_type=record.content_type,
            document_type=self.document_type,
            family=family_name,
            authority=self.authority,
            title=title,
            status=self._status,
            sections=sections,
            provenance=provenance(
                extractor=self.extractor,
                extractor_version=self.extractor_version,
                family=family_name,
                family_version=family_version,
                source_sha256=record.content_sha256,
                configuration=configuration,
            ),
            url=record.final_url or (record.source if "://" in record.source else None),
            fragment=request.fragment,
            diagnostics=list(self.diagnostics),
            warnings=list(self.warnings),
            limits=sorted(set(self.limits)),
            attributes=dict(self.attributes),
        )
        return seal(document)


def request_configuration(request: ExtractRequest, extractor: str, extractor_version: str) -> str:
    """The configuration sha256 of ``request`` read by ``extractor``: what, besides the bytes,
    decides the document (family and its rules, fragment, authority, options). ``extract`` compares
    it, with the snapshot id, to decide whether a committed document can be reused."""
    return configuration_sha256(
        extractor=extractor,
        extractor_version=extractor_version,
        family=getattr(request.family, "name", "generic"),
        family_version=str(getattr(request.family, "version", "1")),
        rules=rules_of(request.family),
        fragment=request.fragment,
        authority=request.effective_authority,
        options=dict(request.options),
    )
