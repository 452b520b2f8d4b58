"""The documents stage: one extracted Document per source, committed together.

Layout: ``documents/index.json`` (the stage commit) names one object per source; the entry key is
the source (URL without fragment, or record id) and the object is the Document's canonical JSON at
``objects/ab/<sha256>.json``. Readers verify every hash and every document id; they never lock.
"""

from __future__ import annotations

from collections.abc import Iterable

from episteme_core.document import Document, document_from_json
from episteme_core.records import StageEntry, StageIndex
from episteme_core.store.home import Home
from episteme_core.store.stage import Stage

STAGE = "documents"


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
    stage = documents_stage(home)
    previous = stage.read_index()
    entries: dict[str, StageEntry] = {}
    if previous is not None and not replace:
        entries = {entry.key: entry for entry in previous.entries}
    for document in documents:
        entries[document.source] = stage.put_bytes(document.source, document.to_bytes(), suffix=".json")
    index = stage.commit(entries.values(), meta={"documents": len(entries)})
    stage.prune(index)
    return index
