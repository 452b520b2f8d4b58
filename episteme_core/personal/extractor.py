"""The ``record`` extractor: a record snapshot becomes a document of one block per paragraph."""

from __future__ import annotations

from typing import TYPE_CHECKING

from episteme_core.errors import EpistemeError
from episteme_core.personal.limits import RECORD_CONTENT_TYPE

if TYPE_CHECKING:
    from episteme_core.records.evidence import Document
    from episteme_core.records.extraction import ExtractRequest

NAME = "record"
VERSION = "2"  # 2: the record's language in the document's attributes
DOCUMENT_TYPE = "record"

DEFAULT_BLOCK_KIND = "paragraph"


def record_language(metadata: dict[str, object]) -> str | None:
    """The language a record's metadata names (its own ``language``, front matter ``language`` or
    ``lang``, a Project Gutenberg header's ``Language:``), for the index's stemmer; else None."""
    front = metadata.get("frontMatter")
    gutenberg = metadata.get("gutenberg")
    for value in (metadata.get("language"),
                  front.get("language") if isinstance(front, dict) else None,
                  front.get("lang") if isinstance(front, dict) else None,
                  gutenberg.get("language") if isinstance(gutenberg, dict) else None):
        if isinstance(value, str) and value.strip():
            return value.strip()[:35]
    return None


def declared_block_kinds() -> dict[str, str]:
    """The block kind each registered source declares for its records' paragraphs (``block_kind``)."""
    from episteme_core.kernel.loader import get_plugins

    kinds: dict[str, str] = {}
    for source in get_plugins().all("source"):
        kind = getattr(source, "block_kind", None)
        if isinstance(kind, str) and kind:
            kinds[source.name] = kind
    return kinds


def block_kind(kinds: dict[str, str], source: str, paragraph_kind: str) -> str:
    """A paragraph's block kind: ``heading`` for headings, else what its source declares."""
    if paragraph_kind == "heading":
        return "heading"
    return kinds.get(source, DEFAULT_BLOCK_KIND)


class RecordExtractor:
    """Registered through ``episteme_extractors``: reads ``application/vnd.episteme.record+json``."""

    name = NAME
    version = VERSION
    content_types = (RECORD_CONTENT_TYPE,)
    limits: tuple[str, ...] = ()
    help = "personal records (books, chats, commits, intent): one block per paragraph"

    def extract(self, request: ExtractRequest) -> Document:
        from episteme_core.extract.builder import DocumentBuilder
        from episteme_core.personal.model import FORGOTTEN_KIND
        from episteme_core.personal.record_reader import open_record

        def new_builder() -> DocumentBuilder:
            return DocumentBuilder(request, extractor=NAME, extractor_version=VERSION,
                                   document_type=DOCUMENT_TYPE)

        def failed(message: str) -> Document:
            builder = new_builder()
            builder.fail("RECORD_INVALID", message)
            return builder.build()

        builder = new_builder()
        source = f"snapshot {request.record.id}"
        try:
            stored = open_record(request.content, source=source)
        except EpistemeError as exc:
            return failed(exc.message)
        record = stored.head  # every field but the paragraphs, which are read one at a time
        if record.id != request.record.source:
            builder.diagnose(
                "RECORD_ID_MISMATCH", "warning",
                f"the record says {record.id!r} but the snapshot is of {request.record.source!r}",
            )
        builder.title = record.title or record.id
        builder.attributes = {
            "recordId": record.id,
            "recordSource": record.source,
            "recordTime": record.time,
            "paragraphs": stored.count,
        }
        language = record_language(record.metadata)
        if language:
            builder.attributes["language"] = language
        builder.open_section(builder.title, 1)
        kinds = declared_block_kinds()
        try:
            for paragraph in stored.paragraphs():
                if paragraph.kind == FORGOTTEN_KIND:
                    continue  # ``forget`` took its text: nothing of it is evidence
                attributes = {**paragraph.attributes, "n": paragraph.n, "paragraphKind": paragraph.kind}
                if paragraph.marked:
                    attributes["marked"] = True
                builder.add_block(
                    block_kind(kinds, record.source, paragraph.kind),
                    paragraph.text,
                    anchor=str(paragraph.n),
                    time=paragraph.time or record.time,
                    attributes=attributes,
                )
                if builder.full:  # a bound of the document was reached: the rest is dropped
                    break
        except EpistemeError as exc:  # a paragraph failed its checks: the record is invalid
            return failed(exc.message)
        return builder.build()
