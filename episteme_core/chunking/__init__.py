"""The chunks stage: every committed document cut into chunks by the chunker chosen for it.

Layout: ``chunks/index.json`` names one object per document (key = the document's source key, as
in the documents stage); the object holds that document's chunks as canonical JSON. The commit's
meta records the documents fingerprint it was built from, the options, the chunkers that were
there to choose from (``selection``), the chunker each document went to (``chunkedBy``) and the
document object each key came from, so a re-run reuses every document that did not change without
reading it, and a new chunker re-chunks only the documents it takes.

Modules: ``layout`` (how text is laid out and cut), ``rows`` (the one chunk builder), ``window``
and ``paragraph`` (the builtin chunkers), this package (the stage). Nothing in the submodules
imports this package.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import attrs

from episteme_core.chunk import Chunk, chunk_from_json
from episteme_core.errors import EpistemeError
from episteme_core.gcpause import paused_cycle_gc
from episteme_core.records import StageEntry, StageIndex
from episteme_core.store.home import Home
from episteme_core.store.stage import Stage

STAGE = "chunks"

ProgressFn = Callable[[int, int, str], None]
Warn = Callable[..., None]
PENDING_BYTES = 256 * 1024 * 1024  # chunk objects held before they are written


def chunks_stage(home: Home) -> Stage:
    return Stage(home, STAGE)


@attrs.frozen
class ChunkReport:
    """What ``episteme chunk`` did."""

    documents: int
    chunks: int
    reused: int  # documents whose chunks were kept without re-chunking
    chunked: int  # documents cut this run
    removed: int  # documents dropped since the last commit
    fingerprint: str
    documents_fingerprint: str | None
    max_chars: int
    overlap_chars: int


def check_options(max_chars: int, overlap_chars: int) -> None:
    """``overlap_chars`` must be less than ``max_chars``: else ``INVALID_USAGE``."""
    if overlap_chars >= max_chars:
        raise EpistemeError(
            "INVALID_USAGE",
            f"--overlap-chars ({overlap_chars}) must be less than --max-chars ({max_chars})",
            details={"maxChars": max_chars, "overlapChars": overlap_chars},
        )


def _read_json(home: Home, entry: StageEntry) -> dict[str, Any]:
    """A committed document as plain JSON (its bytes are checked against the strict index)."""
    from episteme_core.documents import documents_stage

    stage = documents_stage(home)
    try:
        data = json.loads(stage.read_bytes(entry))
    except ValueError as exc:
        path = str(stage.object_path(entry))
        raise EpistemeError("INVALID_INPUT", f"{path}: not valid JSON", details={"path": path}) from exc
    if not isinstance(data, dict):
        path = str(stage.object_path(entry))
        raise EpistemeError("INVALID_INPUT", f"{path}: not a document", details={"path": path})
    return data


class _Pending:
    """One document to chunk: its JSON, and its ``Document`` record built only if a chunker needs it.

    The stage's sha256 already proves the JSON is the canonical bytes the extractor wrote (with
    their id), so the record is structured without the strict parser's walk or an id re-hash.
    """

    def __init__(self, home: Home, entry: StageEntry) -> None:
        self.home = home
        self.entry = entry
        self.data = _read_json(home, entry)
        self._document: Any = None

    def document(self) -> Any:
        if self._document is None:
            from episteme_core.convert import structure
            from episteme_core.document import Document
            from episteme_core.documents import documents_stage

            source = str(documents_stage(self.home).object_path(self.entry))
            self._document = structure(self.data, Document, source=source)
        return self._document

    def accepted_by(self, chunker: Any) -> bool:
        judge = getattr(chunker, "accepts_json", None)
        if callable(judge):
            try:
                return bool(judge(self.data))
            except (ValueError, KeyError, TypeError, AttributeError, IndexError):
                pass  # JSON not as the extractor writes it: let the record decide (and name it)
        return bool(chunker.accepts(self.document()))


def _label(chunker: Any) -> str:
    return f"{chunker.name}/{chunker.version}"


def select_chunker(
    chunkers: Sequence[Any], pending: _Pending, *, prefer: Any = None, warn: Warn | None = None
) -> Any:
    """The chunker for one document: ``prefer`` when it accepts it, else the accepting chunker of
    highest priority (a tie is a ``COMPONENT_TIE`` warning naming both); none is ``INVALID_INPUT``."""
    from episteme_core.components import choose

    if prefer is not None and pending.accepted_by(prefer):
        return prefer
    data = pending.data
    what = f"documents of type {data.get('documentType')!r} (e.g. {data.get('source')})"
    chosen = choose([c for c in chunkers if pending.accepted_by(c)], kind="chunker", what=what, warn=warn)
    if chosen is None:
        raise EpistemeError(
            "INVALID_INPUT",
            f"no chunker accepts document {data.get('source')} (type {data.get('documentType')})",
            details={"source": data.get("source")},
            hint="install a chunker plugin that accepts it",
        )
    return chosen


def _chunk_body(home: Home, chunker: Any, pending: _Pending, max_chars: int, overlap_chars: int
                ) -> tuple[bytes, int]:
    """A document's chunks object: the chunker's rows over the stored JSON when it has
    ``chunk_rows`` (the fast path), else its ``Chunk`` records (their ids sealed here)."""
    from episteme_core.chunking.rows import OBJECT_SCHEMA_VERSION, body_bytes, verbatim_ids

    data = pending.data
    if callable(getattr(chunker, "chunk_rows", None)):
        try:
            rows = chunker.chunk_rows(data, max_chars=max_chars, overlap_chars=overlap_chars,
                                      verbatim=verbatim_ids(home, data))
            return body_bytes(_label(chunker), data, rows), len(rows)
        except (ValueError, KeyError, TypeError, AttributeError, IndexError):
            pass  # JSON not as the extractor writes it: the record path names the problem
    from episteme_core.canonical import canonical_bytes
    from episteme_core.chunk import chunk_id

    document = pending.document()
    chunks = chunker.chunk(document, max_chars=max_chars, overlap_chars=overlap_chars,
                           verbatim=verbatim_ids(home, document.to_json()))
    rows_json = []
    for chunk in chunks:
        row = chunk.to_json()
        row["id"] = chunk_id(row)  # an id is the content's hash, whoever built the chunk
        rows_json.append(row)
    body = {
        "schemaVersion": OBJECT_SCHEMA_VERSION,
        "documentId": document.id,
        "source": document.source,
        "sourceKind": document.source_kind,
        "chunker": _label(chunker),
        "chunks": rows_json,
    }
    return canonical_bytes(body), len(rows_json)


def chunk_home(
    home: Home,
    chunkers: Sequence[Any],
    *,
    max_chars: int,
    overlap_chars: int,
    progress: ProgressFn | None = None,
    prefer: str | None = None,
    warn: Warn | None = None,
) -> ChunkReport:
    """Chunk every committed document and commit the chunks stage; call inside ``ctx.writing()``.

    ``chunkers`` come in registration order; each document goes to the accepting chunker of highest
    priority (``prefer``, a chunker's name, first where it accepts the document). A document keeps
    its chunks while its bytes, the options and the chunker chosen for it are unchanged, so adding
    a chunker re-chunks only the documents it takes.
    """
    with paused_cycle_gc():
        return _chunk_home(home, list(chunkers), max_chars=max_chars, overlap_chars=overlap_chars,
                           progress=progress, prefer=prefer, warn=warn)


def _signature(chunkers: Sequence[Any], prefer: str | None) -> dict[str, Any]:
    """What decides which chunker takes a document: every chunker's version and priority, in order."""
    from episteme_core.components import priority

    return {
        "chunkers": [[c.name, str(c.version), priority(c)] for c in chunkers],
        "prefer": prefer,
    }


def _chunk_home(
    home: Home, chunkers: list[Any], *, max_chars: int, overlap_chars: int, progress: ProgressFn | None,
    prefer: str | None, warn: Warn | None,
) -> ChunkReport:
    from episteme_core.components import warn_once
    from episteme_core.documents import documents_stage

    check_options(max_chars, overlap_chars)
    preferred = None
    if prefer is not None:
        preferred = next((c for c in chunkers if c.name == prefer), None)
        if preferred is None:
            known = ", ".join(c.name for c in chunkers) or "none"
            raise EpistemeError("INVALID_USAGE", f"unknown chunker {prefer!r} (known: {known})",
                                details={"chunker": prefer})
    tie_warn = warn_once(warn) if warn is not None else None
    docs_stage = documents_stage(home)
    docs_index = docs_stage.read_index()
    doc_entries = list(docs_index.entries) if docs_index else []
    stage = chunks_stage(home)
    previous = stage.read_index()
    options = {"maxChars": max_chars, "overlapChars": overlap_chars}
    signature = _signature(chunkers, prefer)
    reusable: dict[str, StageEntry] = {}
    previous_inputs: dict[str, Any] = {}
    previous_by: dict[str, Any] = {}
    same_choice = False
    if previous is not None and previous.meta.get("options") == options:
        reusable = {entry.key: entry for entry in previous.entries}
        previous_inputs = dict(previous.meta.get("inputs") or {})
        previous_by = dict(previous.meta.get("chunkedBy") or {})
        same_choice = previous.meta.get("selection") == signature
    entries: list[StageEntry] = []
    pending: list[tuple[str, bytes, str]] = []
    pending_bytes = 0
    inputs: dict[str, str] = {}
    chunked_by: dict[str, str] = {}
    counts: dict[str, int] = {}
    previous_counts = dict(previous.meta.get("counts") or {}) if previous else {}
    reused = chunked = 0
    for number, doc_entry in enumerate(doc_entries, start=1):
        key = doc_entry.key
        inputs[key] = doc_entry.sha256
        old = reusable.get(key)
        unchanged = (old is not None and previous_inputs.get(key) == doc_entry.sha256
                     and key in previous_counts and key in previous_by)
        document: _Pending | None = None
        chooser: Any = None
        if unchanged and same_choice:
            label = str(previous_by[key])
        else:
            document = _Pending(home, doc_entry)
            chooser = select_chunker(chunkers, document, prefer=preferred, warn=tie_warn)
            label = _label(chooser)
        if unchanged and previous_by.get(key) == label:
            assert old is not None
            entries.append(old)
            counts[key] = int(previous_counts[key])
            reused += 1
        else:
            if document is None:
                document = _Pending(home, doc_entry)
                chooser = select_chunker(chunkers, document, prefer=preferred, warn=tie_warn)
                label = _label(chooser)
            data, count = _chunk_body(home, chooser, document, max_chars, overlap_chars)
            pending.append((key, data, ".json"))
            pending_bytes += len(data)
            if pending_bytes > PENDING_BYTES:  # bounded memory: write this batch (one sync each)
                entries.extend(stage.put_bytes(k, d, suffix) for k, d, suffix in pending)
                pending, pending_bytes = [], 0
            counts[key] = count
            chunked += 1
        chunked_by[key] = label
        if progress:
            progress(number, len(doc_entries), key)
    documents_fingerprint = docs_index.fingerprint if docs_index else None
    entries.extend(stage.put_bytes(k, d, suffix) for k, d, suffix in pending)
    meta: dict[str, Any] = {
        "documentsFingerprint": documents_fingerprint,
        "options": options,
        "selection": signature,
        "chunkedBy": chunked_by,
        "inputs": inputs,
        "counts": counts,
        "chunks": sum(counts.values()),
    }
    removed = len({e.key for e in previous.entries} - set(inputs)) if previous else 0
    if previous is not None and previous.entries == sorted(entries, key=lambda e: e.key) and (
        previous.meta == meta
    ):
        index = previous  # nothing changed: keep the commit (and its bytes) as it is
    else:
        index = stage.commit(entries, meta)
        stage.prune(index)
    return ChunkReport(
        documents=len(doc_entries),
        chunks=sum(counts.values()),
        reused=reused,
        chunked=chunked,
        removed=removed,
        fingerprint=index.fingerprint,
        documents_fingerprint=documents_fingerprint,
        max_chars=max_chars,
        overlap_chars=overlap_chars,
    )


def iter_chunk_objects(home: Home, index: StageIndex | None = None) -> Iterator[dict[str, Any]]:
    """Each document's chunk object as JSON, hash-verified (fast path: the bytes are ours, canonical)."""
    stage = chunks_stage(home)
    index = index if index is not None else stage.read_index()
    if index is None:
        return
    for entry in index.entries:
        data = stage.read_bytes(entry)  # size and sha256 checked against the strict index
        try:
            body = json.loads(data)
        except ValueError as exc:
            raise EpistemeError(
                "INVALID_INPUT", f"{stage.object_path(entry)}: not valid JSON",
                details={"path": str(stage.object_path(entry))},
            ) from exc
        if not isinstance(body, dict) or not isinstance(body.get("chunks"), list):
            raise EpistemeError(
                "INVALID_INPUT", f"{stage.object_path(entry)}: not a chunks object",
                details={"path": str(stage.object_path(entry))},
            )
        yield body


def iter_chunk_rows(home: Home, index: StageIndex | None = None) -> Iterator[tuple[dict[str, Any], bytes]]:
    """Every committed chunk as (JSON, its canonical bytes), hash-verified, in stage order.

    The bytes are cut from the stored object (canonical JSON, as ``chunk_home`` writes it), so a
    reader that stores rows (the shard builder) need not encode them again. An object that is not
    in that layout (no writer of ours makes one) is parsed and its rows encoded canonically.
    """
    stage = chunks_stage(home)
    index = index if index is not None else stage.read_index()
    if index is None:
        return
    for entry in index.entries:
        data = stage.read_bytes(entry)  # size and sha256 checked against the strict index
        path = str(stage.object_path(entry))
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise EpistemeError("INVALID_INPUT", f"{path}: not valid UTF-8", details={"path": path}) from exc
        rows = _canonical_rows(text)
        if rows is None:
            try:
                body = json.loads(text)
            except ValueError as exc:
                raise EpistemeError(
                    "INVALID_INPUT", f"{path}: not valid JSON", details={"path": path}
                ) from exc
            if not isinstance(body, dict) or not isinstance(body.get("chunks"), list):
                raise EpistemeError("INVALID_INPUT", f"{path}: not a chunks object", details={"path": path})
            from episteme_core.canonical import canonical_bytes

            rows = [(row, canonical_bytes(row)[:-1]) for row in body["chunks"]]
        yield from rows


_SCAN: Any = None


def _canonical_rows(text: str) -> list[tuple[dict[str, Any], bytes]] | None:
    """The rows of a chunks object in canonical layout with each row's own bytes; None otherwise.

    Canonical JSON has no whitespace, so the object is ``{"key":value,...}`` and each row of
    ``"chunks":[...]`` is the text between its commas; the C scanner gives where each value ends.
    """
    global _SCAN
    if _SCAN is None:
        from json.scanner import make_scanner

        _SCAN = make_scanner(json.JSONDecoder())  # type: ignore[arg-type]
    from json.decoder import scanstring  # type: ignore[attr-defined]

    scan = _SCAN
    rows: list[tuple[dict[str, Any], bytes]] | None = None
    try:
        if text[:2] != '{"':
            return None
        at = 1
        while True:
            if text[at] != '"':
                return None
            key, at = scanstring(text, at + 1)
            if text[at] != ":":
                return None
            at += 1
            if key == "chunks":
                if text[at] != "[" or rows is not None:
                    return None
                rows = []
                at += 1
                if text[at] == "]":
                    at += 1
                else:
                    while True:
                        start = at
                        row, at = scan(text, at)
                        if not isinstance(row, dict):
                            return None
                        rows.append((row, text[start:at].encode("utf-8")))
                        if text[at] == "]":
                            at += 1
                            break
                        if text[at] != ",":
                            return None
                        at += 1
            else:
                _, at = scan(text, at)
            if text[at] == "}":
                return rows if text[at + 1 :] in ("", "\n") else None
            if text[at] != ",":
                return None
            at += 1
    except (IndexError, StopIteration, ValueError):
        return None


def read_chunks(home: Home) -> list[Chunk]:
    """Every committed chunk as a record, in stage order (documents by key, chunks in reading order)."""
    stage = chunks_stage(home)
    result: list[Chunk] = []
    for body in iter_chunk_objects(home):
        for data in body["chunks"]:
            result.append(chunk_from_json(data, source=str(stage.index_path)))
    return result
