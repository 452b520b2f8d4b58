"""The documents stage: one extracted Document per source, committed together.

Layout: ``documents/index.json`` (the stage commit) names one object per source; the entry key is
the source (URL without fragment, or record id) and the object is the Document's canonical JSON at
``objects/ab/<sha256>.json``. Readers verify every hash and every document id; they never lock.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from episteme_core.records.evidence import Document, document_from_json
from episteme_core.records.stage_index import StageEntry, StageIndex
from episteme_core.store.commits import Stage
from episteme_core.store.home import Home

STAGE = "documents"
SOURCES_META = "sources"  # index meta: per source, what made its document


def documents_stage(home: Home) -> Stage:
    return Stage(home, STAGE)


def read_index(home: Home) -> StageIndex | None:
    """The committed documents index (verified), or None when nothing was extracted yet."""
    return documents_stage(home).read_index()


def documents_fingerprint(home: Home) -> str | None:
    """The fingerprint of the committed documents index: what a chunk stage records it was built from."""
    index = read_index(home)
    return index.fingerprint if index else None


def read_document(home: Home, entry: StageEntry) -> Document:
    stage = documents_stage(home)
    return document_from_json(stage.read_json(entry), source=str(stage.object_path(entry)))


def read_documents(home: Home, sources: Iterable[str] | None = None) -> list[Document]:
    """Every committed document (or those of ``sources``), sorted by source key, each verified."""
    index = read_index(home)
    if index is None:
        return []
    wanted = set(sources) if sources is not None else None
    return [
        read_document(home, entry)
        for entry in index.entries
        if wanted is None or entry.key in wanted
    ]


def write_documents(
    home: Home, documents: Iterable[Document], *, replace: bool = False
) -> StageIndex:
    """Commit ``documents`` (objects first, then the index), keeping other sources' documents
    unless ``replace``; call inside ``ctx.writing()``. Returns the new index."""
    return commit_documents(home, [(document, {}) for document in documents], [], replace=replace)


def commit_documents(
    home: Home,
    written: Iterable[tuple[Document, dict[str, Any]]],
    kept: Iterable[tuple[StageEntry, dict[str, Any]]],
    *,
    replace: bool = False,
    meta: dict[str, Any] | None = None,
    drop: Iterable[str] = (),
) -> StageIndex:
    """Commit fresh documents and reused entries, each with its ``meta.sources`` record (what
    ``extract`` compares to reuse a document). Without ``replace`` the other sources stay, but for
    those in ``drop`` (``forget``: in the same commit). ``meta`` adds keys to the index meta (what
    extraction records of its run). An index equal to the committed one is not rewritten. Call
    inside ``ctx.writing()``."""
    stage = documents_stage(home)
    previous = stage.read_index()
    entries: dict[str, StageEntry] = {}
    records: dict[str, Any] = {}
    if previous is not None and not replace:
        entries = {entry.key: entry for entry in previous.entries}
        old = previous.meta.get(SOURCES_META)
        records = dict(old) if isinstance(old, dict) else {}
    for key in drop:
        entries.pop(key, None)
    for entry, record in kept:
        entries[entry.key] = entry
        records[entry.key] = {**record, "objectSha256": entry.sha256}
    for document, record in written:
        entry = stage.put_pieces(document.source, document.to_pieces(), suffix=".json")
        entries[document.source] = entry
        records[document.source] = {**record, "objectSha256": entry.sha256}
    records = {key: records[key] for key in sorted(records) if key in entries}
    full = {**(meta or {}), "documents": len(entries), SOURCES_META: records}
    ordered = sorted(entries.values(), key=lambda e: e.key)
    if previous is not None and previous.entries == ordered and previous.meta == full:
        return previous
    index = stage.commit(ordered, meta=full)
    stage.prune(index)
    return index


def source_records(index: StageIndex | None) -> dict[str, dict[str, Any]]:
    """``meta.sources`` of a documents index: per source what made its document (snapshot id,
    configuration sha256, producer version, object sha256) and its summary; {} when absent."""
    raw = index.meta.get(SOURCES_META) if index is not None else None
    if not isinstance(raw, dict):
        return {}
    return {key: value for key, value in raw.items() if isinstance(value, dict)}
