"""The chunks stage's writer: every committed document cut into chunks by the chunker chosen for it.

The commit (read back through ``stages.chunks``) names one object per document; its meta records the
documents fingerprint it was built from, the options, the chunkers that were there to choose from
(``selection``), the chunker each document went to (``chunkedBy``) and the document object each key
came from, so a re-run reuses every document that did not change without reading it, and a new
chunker re-chunks only the documents it takes.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from episteme_core.errors import EpistemeError
from episteme_core.records.gcpause import paused_cycle_gc
from episteme_core.records.stage_index import StageEntry, StageIndex
from episteme_core.stages.chunks import chunks_stage, object_source_kind
from episteme_core.store.atomic import sync_after_rename
from episteme_core.store.commits import LazyStageIndex
from episteme_core.store.home import Home

if TYPE_CHECKING:
    from episteme_core.executor.base import Executor


ProgressFn = Callable[[int, int, str], None]
Warn = Callable[..., None]


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
    from episteme_core.stages.documents import documents_stage

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
            from episteme_core.records.convert import structure
            from episteme_core.records.evidence import Document
            from episteme_core.stages.documents import documents_stage

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
    from episteme_core.kernel.contracts import choose

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


def _chunk_body(
    home: Home, chunker: Any, pending: _Pending, max_chars: int, overlap_chars: int
) -> tuple[Iterable[bytes], int]:
    """A document's chunks object, in pieces: the chunker's rows over the stored JSON when it has
    ``chunk_rows`` (the fast path), else its ``Chunk`` records (their ids sealed here)."""
    from episteme_core.chunking.rows import OBJECT_SCHEMA_VERSION, body_pieces, verbatim_ids

    data = pending.data
    if callable(getattr(chunker, "chunk_rows", None)):
        try:
            rows = chunker.chunk_rows(
                data, max_chars=max_chars, overlap_chars=overlap_chars, verbatim=verbatim_ids(home, data)
            )
            return body_pieces(_label(chunker), data, rows), len(rows)
        except (ValueError, KeyError, TypeError, AttributeError, IndexError):
            pass  # JSON not as the extractor writes it: the record path names the problem
    from episteme_core.records.canonical import canonical_bytes
    from episteme_core.records.evidence import chunk_id

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
    return [canonical_bytes(body)], len(rows_json)


def chunk_home(
    home: Home,
    chunkers: Sequence[Any],
    *,
    max_chars: int,
    overlap_chars: int,
    progress: ProgressFn | None = None,
    prefer: str | None = None,
    warn: Warn | None = None,
    executor: Executor | None = None,
) -> ChunkReport:
    """Chunk every committed document and commit the chunks stage; call inside ``ctx.writing()``.

    ``chunkers`` come in registration order; each document goes to the accepting chunker of highest
    priority (``prefer``, a chunker's name, first where it accepts the document). A document keeps
    its chunks while its bytes, the options and the chunker chosen for it are unchanged, so adding
    a chunker re-chunks only the documents it takes. When nothing the stage depends on changed (the
    documents commit, the options, the chunkers) the previous commit stands without a document read.

    Documents are cut by ``executor`` (default: this process), one task per document: a task reads
    the document, chooses its chunker, writes its chunks object and returns what the commit needs;
    the commit is made here. The bytes are the same wherever the tasks ran.
    """
    with paused_cycle_gc():
        return _chunk_home(home, list(chunkers), max_chars=max_chars, overlap_chars=overlap_chars,
                           progress=progress, prefer=prefer, warn=warn, executor=executor)


def _signature(chunkers: Sequence[Any], prefer: str | None) -> dict[str, Any]:
    """What decides which chunker takes a document: every chunker's version and priority, in order."""
    from episteme_core.kernel.contracts import priority

    return {
        "chunkers": [[c.name, str(c.version), priority(c)] for c in chunkers],
        "prefer": prefer,
    }


# Below this many bytes of documents to cut, a default local executor chunks in this process.
PARALLEL_BYTES = 16 * 1024 * 1024


@attrs.frozen
class ChunkJob:
    """What every chunking task shares: the home, the chunkers, the preferred one, the options."""

    home: Home
    chunkers: list[Any]
    preferred: Any
    max_chars: int
    overlap_chars: int


@attrs.frozen
class ChunkTask:
    """One document to cut; ``previous`` is the chunker label of its unchanged chunks (reused when
    the same chunker takes it again)."""

    entry: StageEntry
    previous: str | None = None


@attrs.frozen
class ChunkResult:
    """A task's answer: the chunker chosen, the object written (None: the previous one holds), the
    chunk count, the chunks' source kind, and the ties met while choosing (replayed as warnings)."""

    label: str
    entry: StageEntry | None
    count: int
    source_kind: str | None
    ties: list[tuple[tuple[Any, ...], dict[str, Any]]]


def chunk_document(job: ChunkJob, task: ChunkTask) -> ChunkResult:
    """Choose the chunker of one document and, unless its previous chunks hold, cut and store it."""
    with paused_cycle_gc():  # as ``chunk_home`` does, also in a worker process
        return _chunk_document(job, task)


def _chunk_document(job: ChunkJob, task: ChunkTask) -> ChunkResult:
    ties: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    document = _Pending(job.home, task.entry)
    chooser = select_chunker(job.chunkers, document, prefer=job.preferred,
                             warn=lambda *args, **extra: ties.append((args, extra)))
    label = _label(chooser)
    kind = document.data.get("sourceKind")
    if task.previous == label:
        return ChunkResult(label, None, 0, kind, ties)
    data, count = _chunk_body(job.home, chooser, document, job.max_chars, job.overlap_chars)
    entry = chunks_stage(job.home).put_pieces(task.entry.key, data, suffix=".json")
    return ChunkResult(label, entry, count, kind, ties)


def _unchanged_report(previous: StageIndex, docs_index: StageIndex, max_chars: int, overlap_chars: int
                      ) -> ChunkReport:
    from episteme_core.store.commits import entry_count, head_meta

    total = head_meta(previous).get("chunks")  # read from the heads: no bucket is loaded
    if not isinstance(total, int):
        total = sum(int(n) for n in dict(previous.meta.get("counts") or {}).values())
    documents = entry_count(docs_index)
    return ChunkReport(
        documents=documents, chunks=total,
        reused=documents, chunked=0, removed=0, fingerprint=previous.fingerprint,
        documents_fingerprint=docs_index.fingerprint, max_chars=max_chars, overlap_chars=overlap_chars,
    )


def _unchanged_heads(previous: StageIndex, docs_index: StageIndex, options: dict[str, Any],
                     signature: Any) -> bool:
    """Whether the chunks commit was made from these documents with these options and chunkers,
    decided from the two stages' heads (no bucket of a large stage is read)."""
    from episteme_core.store.commits import head_meta, keyed_fields

    head = head_meta(previous)
    return (head.get("documentsFingerprint") == docs_index.fingerprint and head.get("options") == options
            and head.get("selection") == signature
            and ("sourceKinds" in keyed_fields(previous) or isinstance(head.get("sourceKinds"), dict)))


def _chunk_home(
    home: Home, chunkers: list[Any], *, max_chars: int, overlap_chars: int, progress: ProgressFn | None,
    prefer: str | None, warn: Warn | None, executor: Executor | None,
) -> ChunkReport:
    from episteme_core.executor.base import SERIAL, cleaning_up
    from episteme_core.kernel.contracts import warn_once
    from episteme_core.stages.documents import documents_stage
    from episteme_core.store.commits import entry_count

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
    stage = chunks_stage(home)
    previous = stage.read_index()
    options = {"maxChars": max_chars, "overlapChars": overlap_chars}
    signature = _signature(chunkers, prefer)
    if previous is not None and docs_index is not None and _unchanged_heads(previous, docs_index, options,
                                                                            signature):
        if progress:  # the same documents, options and chunkers: the commit stands as it is
            total = entry_count(docs_index)
            progress(total, total, "unchanged")
        return _unchanged_report(previous, docs_index, max_chars, overlap_chars)
    if previous is not None and docs_index is not None:
        changed = _changed_buckets(previous, docs_index, options, signature)
        if changed is not None:  # the documents of a few buckets changed: only those are looked at
            assert isinstance(previous, LazyStageIndex) and isinstance(docs_index, LazyStageIndex)
            job = ChunkJob(home, chunkers, preferred, max_chars, overlap_chars)
            return _chunk_changed(home, job, docs_index, previous, changed, options, signature, progress,
                                  tie_warn, executor)
    doc_entries = list(docs_index.entries) if docs_index else []
    reusable: dict[str, StageEntry] = {}
    previous_inputs: dict[str, Any] = {}
    previous_by: dict[str, Any] = {}
    previous_kinds: dict[str, Any] = {}
    same_choice = False
    if previous is not None and previous.meta.get("options") == options:
        reusable = {entry.key: entry for entry in previous.entries}
        previous_inputs = dict(previous.meta.get("inputs") or {})
        previous_by = dict(previous.meta.get("chunkedBy") or {})
        previous_kinds = dict(previous.meta.get("sourceKinds") or {})
        same_choice = previous.meta.get("selection") == signature
    previous_counts = dict(previous.meta.get("counts") or {}) if previous else {}
    entries: dict[str, StageEntry] = {}
    inputs: dict[str, str] = {}
    chunked_by: dict[str, str] = {}
    counts: dict[str, int] = {}
    kinds: dict[str, Any] = {}
    tasks: list[ChunkTask] = []
    reused = chunked = done = 0
    for doc_entry in doc_entries:
        key = doc_entry.key
        inputs[key] = doc_entry.sha256
        old = reusable.get(key)
        unchanged = (old is not None and previous_inputs.get(key) == doc_entry.sha256
                     and key in previous_counts and key in previous_by)
        if unchanged and same_choice:
            assert old is not None
            entries[key] = old
            counts[key] = int(previous_counts[key])
            chunked_by[key] = str(previous_by[key])
            kinds[key] = previous_kinds[key] if key in previous_kinds else object_source_kind(home, old)
            reused += 1
            done += 1
            if progress:
                progress(done, len(doc_entries), key)
        else:
            tasks.append(ChunkTask(doc_entry, str(previous_by[key]) if unchanged else None))
    job = ChunkJob(home, chunkers, preferred, max_chars, overlap_chars)
    runner = executor or SERIAL
    with cleaning_up(home, runner):
        results = runner.map(functools.partial(chunk_document, job), tasks,
                             work=lambda task: task.entry.bytes, min_work=PARALLEL_BYTES)
        for task, result in zip(tasks, results, strict=True):
            key = task.entry.key
            for args, extra in result.ties:
                if tie_warn is not None:
                    tie_warn(*args, **extra)
            if result.entry is None:  # the same chunker took it again: its chunks hold
                entries[key] = reusable[key]
                counts[key] = int(previous_counts[key])
                reused += 1
            else:
                entries[key] = result.entry
                counts[key] = result.count
                chunked += 1
            chunked_by[key] = result.label
            kinds[key] = result.source_kind
            done += 1
            if progress:
                progress(done, len(doc_entries), key)
    if tasks and runner is not SERIAL:
        sync_after_rename(stage.dir)  # what workers wrote, durable before the commit names it
    documents_fingerprint = docs_index.fingerprint if docs_index else None
    ordered = [key for key in inputs]  # document order (the documents index is sorted by key)
    meta: dict[str, Any] = {
        "documentsFingerprint": documents_fingerprint,
        "options": options,
        "selection": signature,
        "chunkedBy": {key: chunked_by[key] for key in ordered},
        "inputs": inputs,
        "counts": {key: counts[key] for key in ordered},
        "sourceKinds": {key: kinds[key] for key in ordered},
        "chunks": sum(counts.values()),
    }
    if isinstance(docs_index, LazyStageIndex):  # what the next run compares bucket by bucket
        meta[DOCUMENTS_BUCKETS] = [bucket["sha256"] for bucket in docs_index.buckets]
    removed = len({e.key for e in previous.entries} - set(inputs)) if previous else 0
    committed = sorted(entries.values(), key=lambda e: e.key)
    if previous is not None and previous.entries == committed and previous.meta == meta:
        index = previous  # nothing changed: keep the commit (and its bytes) as it is
    else:
        index = stage.commit(committed, meta)
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


DOCUMENTS_BUCKETS = "documentsBuckets"  # chunks meta: the documents buckets' sha256 it was built from
KEYED = ("chunkedBy", "counts", "inputs", "sourceKinds")  # chunks meta: the per-document maps


def _changed_buckets(previous: StageIndex, docs_index: StageIndex, options: dict[str, Any],
                     signature: Any) -> list[int] | None:
    """The documents buckets that differ from those the chunks commit was built from, when that is
    all that changed (the same options and chunkers, both stages bucketed alike); else None (every
    document is compared)."""
    from episteme_core.store.commits import head_meta, keyed_fields

    if not isinstance(previous, LazyStageIndex) or not isinstance(docs_index, LazyStageIndex):
        return None
    head = head_meta(previous)
    recorded = head.get(DOCUMENTS_BUCKETS)
    if (head.get("options") != options or head.get("selection") != signature
            or keyed_fields(previous) != KEYED or previous.keyed_counts is None
            or not isinstance(head.get("chunks"), int) or not isinstance(recorded, list)
            or len(recorded) != len(docs_index.buckets) or len(previous.buckets) != len(docs_index.buckets)):
        return None
    return [n for n, bucket in enumerate(docs_index.buckets) if bucket["sha256"] != recorded[n]]


def _chunk_changed(home: Home, job: ChunkJob, docs_index: LazyStageIndex, previous: LazyStageIndex,
                   changed: list[int], options: dict[str, Any], signature: Any, progress: ProgressFn | None,
                   tie_warn: Warn | None, executor: Executor | None) -> ChunkReport:
    """Chunk the documents of the ``changed`` buckets that changed and commit only their buckets
    (the others carried over as they are): the commit a full pass would make."""
    from episteme_core.executor.base import SERIAL, cleaning_up
    from episteme_core.stages.documents import documents_stage
    from episteme_core.store.commits import head_meta

    docs_stage, stage = documents_stage(home), chunks_stage(home)
    tasks: list[ChunkTask] = []
    drop: list[str] = []
    old_counts: dict[str, int] = {}
    for number in changed:  # the two stages share a bucket layout: a document's chunks sit alike
        documents, _ = docs_stage.bucket(docs_index, number)
        chunked, keyed = stage.bucket(previous, number)
        present = {entry.key: entry for entry in chunked}
        for doc_entry in documents:
            key = doc_entry.key
            if (key in present and keyed["inputs"].get(key) == doc_entry.sha256 and key in keyed["counts"]
                    and key in keyed["chunkedBy"] and key in keyed["sourceKinds"]):
                continue  # its chunks hold
            if key in keyed["counts"]:
                old_counts[key] = int(keyed["counts"][key])
            tasks.append(ChunkTask(doc_entry))
        kept = {entry.key for entry in documents}
        for key in present:
            if key not in kept:
                drop.append(key)
                old_counts[key] = int(keyed["counts"].get(key, 0))
    put: list[StageEntry] = []
    values: dict[str, dict[str, Any]] = {field: {} for field in KEYED}
    runner = executor or SERIAL
    total = docs_index.count
    with cleaning_up(home, runner):
        results = runner.map(functools.partial(chunk_document, job), tasks,
                             work=lambda task: task.entry.bytes, min_work=PARALLEL_BYTES)
        for done, (task, result) in enumerate(zip(tasks, results, strict=True), start=1):
            for args, extra in result.ties:
                if tie_warn is not None:
                    tie_warn(*args, **extra)
            assert result.entry is not None, "a changed document is always cut"
            key = task.entry.key
            put.append(result.entry)
            values["inputs"][key] = task.entry.sha256
            values["counts"][key] = result.count
            values["chunkedBy"][key] = result.label
            values["sourceKinds"][key] = result.source_kind
            if progress:
                progress(done, len(tasks), key)
    if tasks and runner is not SERIAL:
        sync_after_rename(stage.dir)  # what workers wrote, durable before the commit names it
    before = head_meta(previous)
    chunks = int(before["chunks"]) - sum(old_counts.values()) + sum(values["counts"].values())
    head = {"documentsFingerprint": docs_index.fingerprint, "options": options, "selection": signature,
            "chunks": chunks, DOCUMENTS_BUCKETS: [bucket["sha256"] for bucket in docs_index.buckets]}
    index = stage.commit_changes(previous, head=head, fields=KEYED, put=put, drop=drop, values=values)
    stage.prune(index)
    if progress and not tasks:
        progress(total, total, "unchanged")
    return ChunkReport(
        documents=total, chunks=chunks, reused=total - len(tasks), chunked=len(tasks), removed=len(drop),
        fingerprint=index.fingerprint, documents_fingerprint=docs_index.fingerprint,
        max_chars=job.max_chars, overlap_chars=job.overlap_chars,
    )


