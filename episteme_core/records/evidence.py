"""The evidence records: the document (sections of blocks, each block's exact text with where it came
from) and the chunks cut from it (bounded windows with the citation of every block they cover).

Every stage after extraction (chunks, shards, query, ask, records) reads these records. A document's
``id`` is the sha256 of its canonical JSON without the ``id`` field, so two runs over the same
snapshot, options and version give the same bytes and the same id. No field holds a clock time,
except a block's ``time`` (a message's or a commit's own time, part of the source).

A chunk's text is the covered parts of its blocks joined by a blank line; each ``ChunkBlock`` says
which characters ``[start, end)`` of that block's text it holds and where they begin in the chunk
(``offset``). Its ``id`` is the sha256 of its canonical JSON without ``id``: equal inputs give equal
ids, and any change in text, place or source gives a new one. A chunk carries its document's labels,
including what its extractor could not see (``limits``) and which diagnostics it noted, so a reader
of one hit knows them. Chunks are built by ``episteme_core.chunking.rows`` (one builder for every path).

JSON keys are camelCase (``records.convert``); ``schema/document.schema.json`` and
``schema/chunk.schema.json`` describe them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import attrs

from episteme_core import __version__
from episteme_core.errors import EpistemeError
from episteme_core.records.canonical import canonical_bytes, fingerprint
from episteme_core.records.trust import CONTENT_TRUST

DOCUMENT_SCHEMA_VERSION = "1"
PRODUCER = "episteme"

STATUSES = ("ok", "partial", "failed")
AUTHORITIES = ("normative", "informative")
NORMATIVITIES = ("normative", "informative", "example", "unknown")
DIAGNOSTIC_LEVELS = ("info", "warning", "error")

def _one_of(allowed: tuple[str, ...]) -> Any:
    return attrs.validators.in_(allowed)


@attrs.frozen
class Span:
    """Character offsets ``[start, end)`` into the decoded source text (after BOM/CRLF handling)."""

    start: int
    end: int


@attrs.frozen
class BBox:
    """A PDF box in points, pdfplumber's coordinates: origin top-left of the page."""

    x0: float
    top: float
    x1: float
    bottom: float


@attrs.frozen
class Block:
    """One citable piece of evidence: its kind, its exact text, and where it sits in the source.

    ``text`` is the source's own words (whitespace inside a paragraph collapsed as a browser would;
    code keeps its lines). ``anchor`` is the fragment that cites it (element id, nearest anchor,
    ``section-3.2-1``, ``page=4``); ``anchors`` are further ids inside it (``dfn`` ids). ``rows``
    holds a table's cells. ``time`` and ``attributes`` are for records (role, ``marked``).
    """

    id: str
    kind: str
    text: str
    normativity: str = attrs.field(default="unknown", validator=_one_of(NORMATIVITIES))
    section_id: str | None = None
    section_path: list[str] = attrs.field(factory=list)
    section_heading: str | None = None
    anchor: str | None = None
    anchors: list[str] = attrs.field(factory=list)
    span: Span | None = None
    page: int | None = None
    bbox: BBox | None = None
    rows: list[list[str]] | None = None
    confidence: float | None = None
    time: str | None = None
    attributes: dict[str, Any] = attrs.field(factory=dict)


@attrs.frozen
class Section:
    """A part of the document: its heading, its place (``path`` of headings) and its blocks.

    ``id`` is unique in the document (the element id, or a synthetic ``s-N``); ``anchor`` is the
    fragment that cites it when the source has one; ``number`` is its printed number ("3.2", "A.1").
    """

    id: str
    heading: str
    level: int = 1
    path: list[str] = attrs.field(factory=list)
    number: str | None = None
    anchor: str | None = None
    normativity: str = attrs.field(default="unknown", validator=_one_of(NORMATIVITIES))
    blocks: list[Block] = attrs.field(factory=list)


@attrs.frozen
class Provenance:
    """Who made the document from what: no timestamps, so equal inputs give equal bytes."""

    producer: str
    producer_version: str
    extractor: str
    extractor_version: str
    family: str
    family_version: str
    source_sha256: str
    configuration_sha256: str


@attrs.frozen
class Diagnostic:
    """Something the extractor noticed: a stable code, a level, a message, and where."""

    code: str
    level: str = attrs.field(validator=_one_of(DIAGNOSTIC_LEVELS))
    message: str
    page: int | None = None
    detail: str | None = None


@attrs.frozen
class Document:
    """One snapshot's evidence. ``id`` = sha256 of the canonical JSON of everything else."""

    id: str
    source: str  # the source URL (without fragment) or the record id
    source_kind: str  # the snapshot's capture kind: http, file, warc, books, claude, git, ...
    snapshot_id: str
    source_sha256: str
    content_type: str | None
    document_type: str | None  # "spec", "rfc", "pdf", "text", "xml", "record", ...
    family: str
    authority: str = attrs.field(validator=_one_of(AUTHORITIES))
    title: str
    status: str = attrs.field(validator=_one_of(STATUSES))
    sections: list[Section]
    provenance: Provenance
    url: str | None = None  # the URL a citation points at (final URL), None for records
    fragment: str | None = None  # the part the manifest asked for (``#id``), if any
    diagnostics: list[Diagnostic] = attrs.field(factory=list)
    warnings: list[str] = attrs.field(factory=list)
    limits: list[str] = attrs.field(factory=list)  # what the extractor cannot see
    attributes: dict[str, Any] = attrs.field(factory=dict)  # e.g. pdf pageCount, forms
    content_trust: str = attrs.field(
        default=CONTENT_TRUST, validator=attrs.validators.in_((CONTENT_TRUST,))
    )
    schema_version: str = DOCUMENT_SCHEMA_VERSION

    def blocks(self) -> list[Block]:
        """Every block in reading order."""
        return [block for section in self.sections for block in section.blocks]

    def to_json(self) -> dict[str, Any]:
        """The canonical JSON object of this document (camelCase keys)."""
        from episteme_core.records.convert import unstructure

        data: dict[str, Any] = unstructure(self)
        return data

    def to_bytes(self) -> bytes:
        """The canonical bytes stored in the documents stage."""
        return canonical_bytes(self.to_json())

    def to_pieces(self) -> Iterator[bytes | memoryview]:
        """``to_bytes()`` in pieces (what the documents stage writes: a book's document is never one
        string of JSON)."""
        from episteme_core.records.canonical import canonical_pieces

        return canonical_pieces(self)


def document_id(data: dict[str, Any]) -> str:
    """The id of a document given as JSON: sha256 of its canonical JSON without ``id``."""
    body = {key: value for key, value in data.items() if key != "id"}
    return fingerprint(body)


def seal(document: Document) -> Document:
    """Return ``document`` with its content-derived ``id`` set: ``document_id`` of its JSON, hashed
    from the record a piece at a time (a book's document never becomes one tree of dicts)."""
    from episteme_core.records.canonical import fingerprint_pieces

    return attrs.evolve(document, id=fingerprint_pieces(document, omit=("id",)))


def document_from_json(data: Any, *, source: str) -> Document:
    """Build a Document from JSON and check its id; a wrong id is ``INVALID_INPUT`` naming ``source``."""
    from episteme_core.records.convert import structure

    document = structure(data, Document, source=source)
    if isinstance(data, dict) and document.id != document_id(data):
        raise EpistemeError(
            "INVALID_INPUT",
            f"{source}: document id does not match its content (tampered or corrupt)",
            details={"source": source},
        )
    return document


def configuration_sha256(
    *,
    extractor: str,
    extractor_version: str,
    family: str,
    family_version: str,
    rules: Any,
    fragment: str | None,
    authority: str,
    options: dict[str, Any],
) -> str:
    """sha256 of everything besides the bytes that decides the output (rules, fragment, options)."""
    return fingerprint({
        "extractor": extractor,
        "extractorVersion": extractor_version,
        "family": family,
        "familyVersion": family_version,
        "rules": rules,
        "fragment": fragment,
        "authority": authority,
        "options": options,
    })


def provenance(
    *,
    extractor: str,
    extractor_version: str,
    family: str,
    family_version: str,
    source_sha256: str,
    configuration: str,
) -> Provenance:
    """Provenance with this episteme as producer."""
    return Provenance(
        producer=PRODUCER,
        producer_version=__version__,
        extractor=extractor,
        extractor_version=extractor_version,
        family=family,
        family_version=family_version,
        source_sha256=source_sha256,
        configuration_sha256=configuration,
    )


# -- Chunks. --------------------------------------------------------------------------------------

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
        from episteme_core.records.convert import unstructure

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
    from episteme_core.records.convert import structure

    return structure(data, Chunk, source=source)
