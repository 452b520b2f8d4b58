"""``episteme extract``: every latest snapshot (or those named) to one document each, one commit.

Offline. The extractor is the manifest's choice, else ``--extractor``, else the one of highest
priority registered for the content type, else what the bytes look like; the family is the
manifest's choice, else the matching family (``matches(url)``) of highest priority, else
``generic``. Two of one priority claiming one input is a ``COMPONENT_TIE`` warning naming both.
Everything is resolved before anything is extracted, and nothing is written unless every source
extracted: the previous commit stays.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from episteme_core.canonical import sha256_hex
from episteme_core.document import Document
from episteme_core.errors import Cancelled, EpistemeError, cancel_requested, clear_cancel
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


Warn = Callable[..., None]


def _for_type(plugins: Any, mtype: str, warn: Warn | None) -> Any | None:
    """The extractor of highest priority registered for ``mtype`` (``+xml`` types: xml), or None."""
    from episteme_core.components import choose

    if not mtype:
        return None
    claiming = [e for e in plugins.all("extractor") if mtype in getattr(e, "content_types", ())]
    chosen = choose(claiming, kind="extractor", what=f"content type {mtype}", warn=warn)
    if chosen is None and mtype.endswith("+xml"):
        return plugins.get("extractor", "xml")
    return chosen


def choose_extractor(plugins: Any, wanted: str | None, record: SnapshotRecord, content: bytes,
                     warn: Warn | None = None) -> Any:
    """The manifest's extractor, else the one registered for the media type, else by sniffing."""
    if wanted:
        return plugins.get("extractor", wanted)
    for mtype in (media_type(record.content_type), sniff(content)):
        chosen = _for_type(plugins, mtype, warn)
        if chosen is not None:
            return chosen
    return plugins.get("extractor", "text")


def choose_family(plugins: Any, wanted: str | None, url: str, warn: Warn | None = None) -> Any:
    """The manifest's family (unknown: ``INVALID_INPUT``), else the URL match of highest priority,
    else generic."""
    from episteme_core.components import choose

    if wanted:
        return plugins.get("family", wanted)
    matching = [f for f in plugins.all("family") if f.name != GENERIC and f.matches(url)]
    chosen = choose(matching, kind="family", what=f"the URL {url}", warn=warn)
    return chosen if chosen is not None else plugins.get("family", GENERIC)


@attrs.frozen
class Planned:
    source: str
    record: SnapshotRecord
    extractor: Any
    family: Any
    fragment: str | None
    authority: str | None


def plan(home: Home, plugins: Any, sources: Sequence[str] | None, *, extractor: str | None = None,
         warn: Warn | None = None) -> tuple[Any, list[Planned]]:
    """Resolve every source's latest snapshot, extractor and family before doing any work.

    ``extractor`` (``--extractor``) is used for every source whose manifest names none.
    """
    from episteme_core.snapshots import read_catalog

    catalog = read_catalog(home)
    targets = list(dict.fromkeys(sources)) if sources else catalog.sources()
    planned = []
    for source in targets:
        record = catalog.latest(source)
        options = catalog.options(source)
        url = record.final_url or record.source
        family = choose_family(plugins, options.get("family"), url, warn)
        wanted = options.get("extractor") or extractor
        chosen = plugins.get("extractor", wanted) if wanted else None
        planned.append(Planned(source, record, chosen, family, options.get("fragment"),
                               options.get("authority")))
    return catalog, planned


def _request(item: Planned, extractor: Any, content: bytes, options: dict[str, Any]) -> ExtractRequest:
    wanted = {k: v for k, v in options.items() if k in getattr(extractor, "option_names", ())}
    return ExtractRequest(record=item.record, content=content, family=item.family,
                          fragment=item.fragment, authority=item.authority, options=wanted)


def _run_extractor(extractor: Any, request: ExtractRequest, source: str) -> Document:
    """One extractor on one source; a signal that arrived meanwhile cancels the run even when the
    extractor swallowed the exception it raised (its document is never committed)."""
    try:
        document: Document = extractor.extract(request)
    except EpistemeError:
        raise
    except Exception as exc:
        _check_cancel(exc)
        raise EpistemeError(
            "PROCESSING_FAILED", f"extraction failed for {source}: {type(exc).__name__}: {exc}",
            details={"source": source, "extractor": extractor.name},
        ) from exc
    _check_cancel(None)
    return document


def _check_cancel(cause: BaseException | None) -> None:
    signal_name = cancel_requested()
    if signal_name is not None:
        raise Cancelled(signal_name) from cause


def _extractor_by_type(plugins: Any, record: SnapshotRecord, warn: Warn | None) -> Any | None:
    """The extractor the declared media type selects, or None when only the bytes can tell."""
    return _for_type(plugins, media_type(record.content_type), warn)


# Diagnostics that depend on the machine, not on the inputs: such a document is never reused.
TRANSIENT = frozenset({"TIME_LIMIT"})


def reuse_key(item: Planned, extractor: Any, options: dict[str, Any]) -> dict[str, str]:
    """What must be unchanged for a committed document to be reused: the latest snapshot id, the
    configuration sha256 (extractor id+version, family+version+rules, fragment, authority,
    options) and this episteme's version."""
    from episteme_core import __version__
    from episteme_core.extract.builder import request_configuration

    request = _request(item, extractor, b"", options)
    return {
        "snapshotId": item.record.id,
        "configurationSha256": request_configuration(request, extractor.name,
                                                     str(getattr(extractor, "version", ""))),
        "producerVersion": __version__,
    }


def _reusable(record: dict[str, Any] | None, entry: Any, key: dict[str, str], stage: Any) -> bool:
    if record is None or entry is None:
        return False
    if any(record.get(name) != value for name, value in key.items()):
        return False
    if record.get("objectSha256") != entry.sha256 or not stage.object_path(entry).is_file():
        return False
    return not set(record.get("diagnostics") or ()) & TRANSIENT


@attrs.frozen
class ExtractReport:
    """What ``extract`` did: a row per source (``outcome`` extracted, reused or failed) and the
    documents it extracted afresh (reused ones are not read back)."""

    rows: list[dict[str, Any]]
    documents: list[Document]

    def counts(self) -> dict[str, int]:
        counts = {"extracted": 0, "reused": 0, "failed": 0}
        for row in self.rows:
            counts[row["outcome"]] += 1
        return counts


def extract_sources(
    home: Home,
    plugins: Any,
    sources: Sequence[str] | None = None,
    options: dict[str, Any] | None = None,
    progress: Callable[[int, int, str], None] | None = None,
    *,
    force: bool = False,
    extractor: str | None = None,
    warn: Warn | None = None,
) -> ExtractReport:
    """Extract what changed and commit; call under the writer lock.

    A source whose committed document was made from the same latest snapshot, configuration and
    episteme version is reused without reading its bytes (unless ``force``); the committed bytes
    are the same either way. Nothing is committed unless every source extracted.

    Memory: each document is written as its stage object as soon as it is extracted and only its
    summary is kept, so a run holds one document at a time; the documents returned carry their
    summary fields but no sections (read the committed ones with ``documents.read_documents``).
    """
    from episteme_core.components import warn_once
    from episteme_core.documents import commit_documents, documents_stage, source_records

    clear_cancel()
    options = dict(options or {})
    tie_warn = warn_once(warn) if warn is not None else None
    catalog, planned = plan(home, plugins, sources, extractor=extractor, warn=tie_warn)
    stage = documents_stage(home)
    previous = stage.read_index()
    entries = {entry.key: entry for entry in previous.entries} if previous else {}
    records = source_records(previous)
    written: list[tuple[Document, dict[str, Any]]] = []
    kept: list[tuple[Any, dict[str, Any]]] = []
    fresh: list[Document] = []
    created: list[Any] = []  # objects this run wrote that did not exist: removed if it fails
    rows: list[dict[str, Any]] = []
    try:
        _extract_each(catalog, plugins, planned, options, force, stage, entries, records, kept, fresh,
                      created, rows, progress, tie_warn)
    except BaseException:
        for path in created:
            path.unlink(missing_ok=True)
        raise
    if rows or not sources:
        commit_documents(home, written, kept, replace=not sources)
    return ExtractReport(rows=rows, documents=fresh)


def _extract_each(
    catalog: Any, plugins: Any, planned: list[Planned], options: dict[str, Any], force: bool,
    stage: Any, entries: dict[str, Any], records: dict[str, dict[str, Any]],
    kept: list[tuple[Any, dict[str, Any]]], fresh: list[Document], created: list[Any],
    rows: list[dict[str, Any]], progress: Callable[[int, int, str], None] | None,
    tie_warn: Warn | None,
) -> None:
    """Extract (or reuse) each planned source, writing each fresh document's object at once."""
    for n, item in enumerate(planned, start=1):
        content: bytes | None = None
        chosen = item.extractor or _extractor_by_type(plugins, item.record, tie_warn)
        if chosen is None:
            content = catalog.content(item.record)
            chosen = choose_extractor(plugins, None, item.record, content, tie_warn)
        key = reuse_key(item, chosen, options)
        old = records.get(item.source)
        if not force and _reusable(old, entries.get(item.source), key, stage):
            assert old is not None
            kept.append((entries[item.source], old))
            rows.append({**_row(old), "outcome": "failed" if old.get("status") == "failed" else "reused"})
        else:
            if content is None:
                content = catalog.content(item.record)
            document = _run_extractor(chosen, _request(item, chosen, content, options), item.source)
            content = None
            record = {**key, **summary(document)}
            data = document.to_bytes()
            path = stage.dir / f"objects/{sha256_hex(data)[:2]}/{sha256_hex(data)}.json"
            if not path.exists():
                created.append(path)
            kept.append((stage.put_bytes(document.source, data, suffix=".json"), record))
            del data
            fresh.append(attrs.evolve(document, sections=[]))  # the summary stays, the blocks go
            rows.append({**_row(record), "outcome": "failed" if document.status == "failed" else "extracted"})
        if progress:
            progress(n, len(planned), item.source)


def _row(record: dict[str, Any]) -> dict[str, Any]:
    return {name: record.get(name) for name in SUMMARY_FIELDS}


def extract_documents(
    home: Home,
    plugins: Any,
    sources: Sequence[str] | None = None,
    options: dict[str, Any] | None = None,
    progress: Callable[[int, int, str], None] | None = None,
    warn: Warn | None = None,
) -> list[Document]:
    """Extract what changed and commit (see ``extract_sources``); returns the documents extracted
    afresh. Sources whose committed document was reused are not among them."""
    return extract_sources(home, plugins, sources, options, progress, warn=warn).documents


SUMMARY_FIELDS = ("source", "documentId", "snapshotId", "extractor", "family", "status", "title",
                  "sections", "blocks", "warnings", "diagnostics")


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
