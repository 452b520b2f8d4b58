"""The chunk: a bounded window of one section's blocks, with the citation of every block it covers.

A chunk's text is the covered parts of its blocks joined by a blank line; each ``ChunkBlock`` says
which characters ``[start, end)`` of that block's text it holds and where they begin in the chunk
(``offset``). ``id`` is the sha256 of the chunk's canonical JSON without ``id``: equal inputs give
equal ids, and any change in text, place or source gives a new one. A chunk carries its
document's labels, including what its extractor could not see (``limits``) and which diagnostics
it noted, so a reader of one hit knows them. JSON keys are camelCase; ``schema/chunk.schema.json``
describes them. Chunks are built by ``episteme_core.chunking.rows`` (one builder for every path).
"""

from __future__ import annotations

from typing import Any

import attrs

from episteme_core.canonical import fingerprint
from episteme_core.document import CONTENT_TRUST, BBox, Span

CHUNK_SCHEMA_VERSION = "1"
SEPARATOR = "\n\n"


@attrs.frozen
class ChunkBlock:
    """One block a chunk covers: which characters of its text, and where the block sits."""

    block_id: str
    kind: str
    normativity: str
    start: int  # [start, end) into the block's own text
    end: int
    offset: int  # where those characters begin in the chunk's text
    block_length: int  # the block's whole text length (a part covers less)
    anchor: str | None = None
    page: int | None = None
    span: Span | None = None  # the block's span in the decoded source, as the extractor gave it
    time: str | None = None
    verbatim: bool = False  # the decoded source at ``span`` is exactly the block's text (checked)
    bbox: BBox | None = None  # PDF: the block's box on its page, in points from the top-left


@attrs.frozen
class ChunkDiagnostic:
    """One kind of diagnostic the chunk's document has (the document holds each in full)."""

    code: str
    level: str


@attrs.frozen
class Part:
    """Chunk ``index`` (1-based) of the ``count`` chunks cut from one section (or one paragraph)."""

    index: int
    count: int


@attrs.frozen
class Chunk:
    """A bounded piece of one document: its text, its blocks' citations, and the document's labels."""

    id: str
    document_id: str
    source: str  # the document's source: a URL without fragment, or a record id
    source_kind: str  # the shard source: http, file, warc, books, claude, git, honcho, intent
    snapshot_id: str
    source_sha256: str
    url: str | None
    fragment: str | None  # the anchor that cites the chunk's first block (else its section)
    title: str
    family: str
    authority: str
    document_type: str | None
    section_id: str
    section_path: list[str]
    heading: str
    normativity: str
    text: str
    blocks: list[ChunkBlock]
    part: Part
    chunker: str  # name/version of the chunker that cut it
    time: str | None = None  # records: the paragraph's own time
    language: str | None = None  # the document's language where it is known (HTML lang, a record's)
    record_id: str | None = None  # records: the record id (equals ``source``)
    paragraph: int | None = None  # records: the paragraph number n (``show ID#n``)
    attributes: dict[str, Any] = attrs.field(factory=dict)
    diagnostics: list[ChunkDiagnostic] = attrs.field(factory=list)  # the document's, each code once
    limits: list[str] = attrs.field(factory=list)  # what the document's extractor cannot see
    content_trust: str = CONTENT_TRUST
    schema_version: str = CHUNK_SCHEMA_VERSION

    def to_json(self) -> dict[str, Any]:
        from episteme_core.convert import unstructure

        data: dict[str, Any] = unstructure(self)
        return data

    @property
    def citation_url(self) -> str | None:
        """The URL with the chunk's fragment, the link a person follows."""
        if self.url is None:
            return None
        return f"{self.url}#{self.fragment}" if self.fragment else self.url

    @property
    def cite(self) -> str:
        """A short citation: ``url#fragment``, or ``record#n`` for records."""
        if self.record_id is not None and self.paragraph is not None:
            return f"{self.record_id}#{self.paragraph}"
        return self.citation_url or self.source


def chunk_id(data: dict[str, Any]) -> str:
    """The id of a chunk given as JSON: sha256 of its canonical JSON without ``id``."""
    return fingerprint({key: value for key, value in data.items() if key != "id"})


def chunk_from_json(data: Any, *, source: str) -> Chunk:
    """Build a Chunk from JSON (no id check: callers that need one compare ``chunk_id``)."""
    from episteme_core.convert import structure

    return structure(data, Chunk, source=source)
