"""``episteme extract``: every latest snapshot (or those named) to one document each, one commit.

Offline. The extractor is the manifest's choice, else the one registered for the content type,
else what the bytes look like; the family is the manifest's choice, else the first family (by
name) whose ``matches(url)`` is true, else ``generic``. Everything is resolved before anything
is extracted, and nothing is written unless every source extracted: the previous commit stays.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from episteme_core.document import Document
from episteme_core.errors import EpistemeError
from episteme_core.extract.api import ExtractRequest
from episteme_core.records import SnapshotRecord
from episteme_core.store.home import Home

GENERIC = "generic"


def media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def sniff(content: bytes) -> str:
    """A content type guessed from the first bytes, for snapshots that declare none."""
    head = content[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if head.startswith(b"%pdf-"):
        return "application/pdf"
    if head.startswith((b"<!doctype html", b"<html")) or b"<html" in head[:512]:
        return "text/html"
    if head.startswith(b"<?xml") or head.startswith(b"<"):
        return "application/xml"
    return "text/plain"


def choose_extractor(plugins: Any, wanted: str | None, record: SnapshotRecord, content: bytes) -> Any:
    """The manifest's extractor, else the one registered for the media type, else by sniffing."""
    if wanted:
        return plugins.get("extractor", wanted)
    extractors = plugins.all("extractor")
    for mtype in (media_type(record.content_type), sniff(content)):
        for extractor in extractors:
            if mtype in getattr(extractor, "content_types", ()):
                return extractor
        if mtype.endswith("+xml"):
            return plugins.get("extractor", "xml")
    return plugins.get("extractor", "text")


def choose_family(plugins: Any, wanted: str | None, url: str) -> Any:
    """The manifest's family (unknown: ``INVALID_INPUT``), else the first URL match, else generic."""
    if wanted:
        return plugins.get("family", wanted)
    for family in plugins.all("family"):
        if family.name != GENERIC and family.matches(url):
            return family
    return plugins.get("family", GENERIC)


@attrs.frozen
class Planned:
    source: str
    record: SnapshotRecord
    extractor: Any
    family: Any
    fragment: str | None
    authority: str | None


def plan(home: Home, plugins: Any, sources: Sequence[str] | None) -> tuple[Any, list[Planned]]:
    """Resolve every source's latest snapshot, extractor and family before doing any work."""
    from episteme_core.snapshots import read_catalog

    catalog = read_catalog(home)
    targets = list(dict.fromkeys(sources)) if sources else catalog.sources()
    planned = []
    for source in targets:
        record = catalog.latest(source)
        options = catalog.options(source)
        url = record.final_url or record.source
        family = choose_family(plugins, options.get("family"), url)
        extractor = plugins.get("extractor", options["extractor"]) if options.get("extractor") else None
        planned.append(Planned(source, record, extractor, family, options.get("fragment"),
                               options.get("authority")))
    return catalog, planned


def extract_one(catalog: Any, plugins: Any, item: Planned, options: dict[str, Any]) -> Document:
    content = catalog.content(item.record)
    extractor = item.extractor or choose_extractor(plugins, None, item.record, content)
    wanted = {k: v for k, v in options.items() if k in getattr(extractor, "option_names", ())}
    request = ExtractRequest(record=item.record, content=content, family=item.family,
                             fragment=item.fragment, authority=item.authority, options=wanted)
    try:
        document: Document = extractor.extract(request)
    except EpistemeError:
        raise
    except Exception as exc:
        raise EpistemeError(
            "PROCESSING_FAILED", f"extraction failed for {item.source}: {type(exc).__name__}: {exc}",
            details={"source": item.source, "extractor": extractor.name},
        ) from exc
    return document


def extract_documents(
    home: Home,
    plugins: Any,
    sources: Sequence[str] | None = None,
    options: dict[str, Any] | None = None,
    progress: Callable[[int, int, str], None] | None = None,
) -> list[Document]:
    """Extract and commit; call under the writer lock. Returns the documents written."""
    from episteme_core.documents import write_documents

    catalog, planned = plan(home, plugins, sources)
    documents = []
    for n, item in enumerate(planned, start=1):
        documents.append(extract_one(catalog, plugins, item, dict(options or {})))
        if progress:
            progress(n, len(planned), item.source)
    if documents or not sources:
        write_documents(home, documents, replace=not sources)
    return documents


def summary(document: Document) -> dict[str, Any]:
    """What the envelope reports per document."""
    return {
        "source": document.source,
        "documentId": document.id,
        "snapshotId": document.snapshot_id,
        "extractor": document.provenance.extractor,
        "family": document.family,
        "status": document.status,
        "title": document.title,
        "sections": len(document.sections),
        "blocks": sum(len(s.blocks) for s in document.sections),
        "warnings": list(document.warnings),
        "diagnostics": [d.code for d in document.diagnostics],
    }
