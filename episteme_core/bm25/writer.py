"""The shards stage writer: pack committed chunks into frozen shards, one source per shard.

A shard, once written, never changes (its file is named by its sha256). A run keeps every shard
this indexer built whose analyzer, BM25 parameters and layout (``bm25.words``) still hold, records
the rows whose chunks are gone as deleted (in the stage index: they are never returned), drops
shards left with no live row, and packs the chunks no shard holds into new shards of at most
``shard_size`` chunks per source.
``reshard`` rebuilds everything. The commit records the indexer (``bm25``), the chunk index
(fingerprint and sha256 of its bytes) and the log position it covers; readers refuse anything else
as stale.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from episteme_core.bm25 import rows as stored_rows
from episteme_core.bm25.build import BM25_DEFAULTS, build_shard_pieces
from episteme_core.bm25.fields import FIELD_DEFAULTS, FIELDS, MAX_WEIGHT, MIN_WEIGHT, indexed
from episteme_core.bm25.shardfile import header_sha256
from episteme_core.bm25.shards import INDEXER, STAGE, Shard
from episteme_core.bm25.words import LAYOUT
from episteme_core.errors import EpistemeError
from episteme_core.records.gcpause import paused_cycle_gc
from episteme_core.records.stage_index import StageEntry, StageIndex
from episteme_core.search.units import MAX_RUN_CHARS, MIN_RUN_CHARS, RUN_CHARS, SECTION_RUN_CHARS
from episteme_core.stages.chunks import chunks_stage, iter_object_rows, object_rows
from episteme_core.stages.shards import indexer_of, log_mark
from episteme_core.store.commits import LazyStageIndex, Stage
from episteme_core.store.home import Home
from episteme_core.text.analyzer import analyzer_id, analyzer_params

if TYPE_CHECKING:
    from episteme_core.executor.base import Executor

DEFAULT_SHARD_SIZE = 50_000
MIN_SHARD_SIZE, MAX_SHARD_SIZE = 1, 10_000_000
_SAFE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")

ProgressFn = Callable[[int, int, str], None]


@attrs.frozen
class IndexReport:
    """What ``episteme index`` did."""

    shards: int
    chunks: int  # live chunks the shards hold
    built: list[str]  # shard names written this run
    kept: int  # shards kept as they were
    dropped: list[str]  # shards with no live row left
    deleted_rows: int  # rows of kept shards whose chunks are gone
    terms: int  # terms in the shards written this run
    resharded: bool
    changed: bool  # False: the commit was already up to date
    fingerprint: str
    chunk_index_fingerprint: str
    sources: dict[str, int]  # source -> live chunks


@attrs.frozen
class IndexSettings:
    """What ``config.json`` says about building shards (defaults where it is silent)."""

    shard_size: int
    bm25: dict[str, Any]
    fields: dict[str, int]
    run_chars: dict[str, int]  # records, sections


def _config_error(home: Home, message: str) -> EpistemeError:
    return EpistemeError("INVALID_INPUT", f"{home.config_path}: {message}",
                         details={"path": str(home.config_path)})


def _number(home: Home, where: str, value: Any, low: float, high: float, *, integer: bool) -> Any:
    if isinstance(value, bool) or not isinstance(value, int if integer else (int, float)) or not (
        low <= value <= high
    ):
        kind = "an integer" if integer else "a number"
        raise _config_error(home, f"{where} must be {kind} in {low}–{high}")
    return value


def index_settings(home: Home) -> IndexSettings:
    """``shard_size``, ``bm25`` {k1, b}, ``fields`` weights and ``runs`` {records, sections} (the
    characters of a run of a record's paragraphs, of a section's chunks) from config.json.

    ``bm25.headingWeight`` (the first analyzer's only field weight) is read as ``fields.heading``."""
    config = home.config()
    size = _number(home, "shard_size", config.get("shard_size", DEFAULT_SHARD_SIZE), MIN_SHARD_SIZE,
                   MAX_SHARD_SIZE, integer=True)
    params = dict(BM25_DEFAULTS)
    weights = dict(FIELD_DEFAULTS)
    custom = config.get("bm25", {})
    if not isinstance(custom, dict) or set(custom) - {"k1", "b", "headingWeight"}:
        raise _config_error(home, "bm25 takes only k1 and b (field weights are under fields)")
    for key, value in custom.items():
        if key == "headingWeight":
            weights["heading"] = _number(home, "bm25.headingWeight", value, 1, MAX_WEIGHT, integer=True)
        else:
            params[key] = _number(home, f"bm25.{key}", value, 0.0, 10.0, integer=False)
    given = config.get("fields", {})
    if not isinstance(given, dict) or set(given) - set(FIELDS):
        raise _config_error(home, f"fields takes only {', '.join(FIELDS)}")
    for key, value in given.items():
        weights[key] = _number(home, f"fields.{key}", value, 1 if key == "body" else MIN_WEIGHT, MAX_WEIGHT,
                               integer=True)
    runs = config.get("runs", {})
    if not isinstance(runs, dict) or set(runs) - {"records", "sections"}:
        raise _config_error(home, "runs takes only records and sections")
    chars = {
        key: _number(home, f"runs.{key}", runs.get(key, default), MIN_RUN_CHARS, MAX_RUN_CHARS, integer=True)
        for key, default in (("records", RUN_CHARS), ("sections", SECTION_RUN_CHARS))
    }
    return IndexSettings(size, params, weights, chars)


def source_label(source: str) -> str:
    """A shard-name-safe label for a source kind (odd names are hashed, never used as paths)."""
    if _SAFE.match(source):
        return source
    return "src-" + hashlib.sha256(source.encode("utf-8")).hexdigest()[:12]


def _same_but_log_mark(home: Home, old: dict[str, Any], new: dict[str, Any]) -> bool:
    """True when only the log mark moved and the log gained no capture past the old mark."""
    from episteme_core.stages.shards import log_has_captures_after

    marks = ("logPosition", "logBytes")
    if any(k not in old for k in marks):
        return False
    if {k: v for k, v in old.items() if k not in marks} != {k: v for k, v in new.items() if k not in marks}:
        return False
    return not log_has_captures_after(home, int(old.get("logBytes") or 0))


@attrs.frozen
class Piece:
    """Rows ``[start, stop)`` (reading order) of one committed chunks object."""

    entry: StageEntry
    start: int
    stop: int


def _pack(keys: list[str], objects: dict[str, StageEntry], counts: dict[str, int],
          size: int) -> list[list[Piece]]:
    """New shards of at most ``size`` chunks from whole chunks objects, in key order: a document (and
    so a record, and a section) stays in one shard, cut in reading order only when it alone is larger.
    The planner needs only the chunks index (counts per object), never the objects."""
    packed: list[list[Piece]] = []
    current: list[Piece] = []
    filled = 0
    for key in keys:
        count = counts[key]
        if current and filled + count > size:
            packed.append(current)
            current, filled = [], 0
        start = 0
        while count - start > size:  # larger than a shard: cut in reading order (runs end there)
            packed.append([Piece(objects[key], start, start + size)])
            start += size
        current.append(Piece(objects[key], start, count))
        filled += count - start
    if current:
        packed.append(current)
    return packed


@attrs.frozen
class ShardJob:
    """What every shard-building task shares: the home and the settings of the shards."""

    home: Home
    params: dict[str, Any]
    fields: dict[str, int]
    run_chars: dict[str, int]
    built_from: dict[str, Any]


@attrs.frozen
class ShardTask:
    """One shard to build: its name, source and the pieces of chunks objects it holds."""

    name: str
    source: str
    pieces: list[Piece]


@attrs.frozen
class BuiltShard:
    """What a task reports of the shard it wrote: its stage entry, header sha256, rows and terms."""

    entry: StageEntry
    header_sha256: str
    rows: int
    terms: int


def build_shard_object(job: ShardJob, task: ShardTask) -> list[BuiltShard]:
    """Read the task's chunks (hash-verified), build its shard and write it as a stage object: one
    shard, or (past ``MAX_SHARD_TERMS`` distinct tokens) several, named ``NAME``, ``NAME.2``, ..."""
    from episteme_core.bm25.build import trim_heap

    try:
        with paused_cycle_gc():  # millions of small objects, no cycles (also in a worker process)
            return _build_shard_object(job, task)
    finally:
        trim_heap()  # what the task freed goes back before the next task reads its rows


# The most distinct tokens one shard build holds (its vocabulary, a Python string each, is most of
# its memory). Real text stays far below (a 50,000-chunk shard of English holds tens of thousands);
# rows past it, in chunk id order, go to a shard of their own (``build.split_rows``).
MAX_SHARD_TERMS = 400_000


# The fields of a chunk's index view whose values repeat across chunks (a source, its section,
# the facets): parsed anew for every row, kept once per task.
_SHARED_FIELDS = ("sourceKind", "source", "sectionId", "time", "language", "recordId", "family",
                  "authority", "documentType", "normativity")
_RELEASED: dict[str, Any] = {}  # where a part's rows were, once its build took them


def part_name(name: str, part: int) -> str:
    """The name of part ``part`` (0-based) of the shard a task builds: ``NAME``, then ``NAME.2``, ..."""
    return name if part == 0 else f"{name}.{part + 1}"


def shard_seq(name: str) -> int:
    """The sequence number of a shard name (``LABEL-0007`` and its parts ``LABEL-0007.2``: 7)."""
    return int(name.rpartition("-")[2].partition(".")[0])


def _build_shard_object(job: ShardJob, task: ShardTask) -> list[BuiltShard]:
    from episteme_core.bm25.build import RowLimit, header_of, split_rows, trim_heap

    chunks = chunks_stage(job.home)
    inputs = [(piece.entry.key, piece.entry.sha256) for piece in task.pieces]
    # Each chunk keeps only what the index reads of it (``fields.indexed``) and its stored bytes; the
    # parsed row (its blocks, spans, provenance: most of its memory) goes with its object.
    labels: dict[tuple[Any, ...], tuple[str, str, str, str]] = {}
    shared: dict[str, str] = {}
    found: dict[str, tuple[dict[str, Any], bytes, int]] = {}
    for number, piece in enumerate(task.pieces):
        # one row at a time: only its index view and bytes stay (never the object's parsed rows)
        for row, raw in iter_object_rows(chunks, piece.entry, piece.start, piece.stop):
            if row.get("sourceKind") != task.source:
                path = str(chunks.object_path(piece.entry))
                raise EpistemeError(
                    "INVALID_INPUT", f"{path}: a chunk of source {row.get('sourceKind')!r} in an object of "
                    f"source {task.source!r}", details={"path": path})
            if row["id"] not in found:
                view = indexed(row, labels)
                for field in _SHARED_FIELDS:  # one copy of each value the chunks repeat
                    value = view[field]
                    if isinstance(value, str):
                        view[field] = shared.setdefault(value, value)
                found[row["id"]] = (view, raw, number)
    ids = sorted(found)
    rows = [found[i][0] for i in ids]
    row_bytes = [found[i][1] for i in ids]
    row_inputs = [found[i][2] for i in ids]
    del found, ids
    stage = Stage(job.home, STAGE)

    def build(part: int, start: int, stop: int, max_terms: int | None) -> BuiltShard:
        name = part_name(task.name, part)
        if (start, stop) == (0, len(rows)):
            used, numbers = inputs, row_inputs
        else:  # a part records only the inputs its rows came from
            kept = sorted(set(row_inputs[start:stop]))
            renumber = {old: new for new, old in enumerate(kept)}
            used, numbers = [inputs[i] for i in kept], [renumber[i] for i in row_inputs[start:stop]]
        # The build takes the part's rows over: it lets their text go once it has counted their
        # tokens (a part never built again), before it assembles the shard. Past a RowLimit the
        # rows are still whole and come back for the smaller part.
        taken = rows[start:stop]
        rows[start:stop] = [_RELEASED] * (stop - start)
        try:
            pieces = build_shard_pieces(taken, source=task.source, name=name, params=job.params,
                                        built_from=job.built_from, row_bytes=row_bytes[start:stop],
                                        fields=job.fields, run_chars=job.run_chars["records"],
                                        section_run_chars=job.run_chars["sections"], inputs=used,
                                        row_inputs=numbers, max_terms=max_terms, release_rows=True)
        except RowLimit:
            rows[start:stop] = taken
            raise
        del taken
        row_bytes[start:stop] = [b""] * (stop - start)  # now in the shard: not held while it is written
        trim_heap()
        header = header_of(pieces[0])  # the first piece is the whole header
        entry = stage.put_pieces(name, pieces, suffix=".shard")
        return BuiltShard(entry, header_sha256(pieces[0]), stop - start, int(header["meta"]["terms"]))

    return split_rows(len(rows), build, MAX_SHARD_TERMS)


# Below this many chunks to index, a default local executor builds the shards in this process.
PARALLEL_CHUNKS = 100_000


def index_home(
    home: Home, *, reshard: bool = False, progress: ProgressFn | None = None,
    executor: Executor | None = None, purge: bool = False,
) -> IndexReport:
    """Bring the shards up to the committed chunks; call inside ``ctx.writing()``.

    Shards are built by ``executor`` (default: this process), one task per shard; the commit is made
    here, so the shards are the same bytes wherever they were built. With ``purge`` (``forget``) a
    shard holding any row whose chunks are gone is rebuilt from its live rows instead of kept with
    those rows marked deleted, so no shard file holds the text of a chunk the stage no longer has.
    """
    with paused_cycle_gc():
        return _index_home(home, reshard=reshard, progress=progress, executor=executor, purge=purge)


def _index_home(home: Home, *, reshard: bool, progress: ProgressFn | None,
                executor: Executor | None, purge: bool = False) -> IndexReport:
    from episteme_core.executor.base import SERIAL, cleaning_up

    settings = index_settings(home)
    shard_size, params = settings.shard_size, settings.bm25
    cstage = chunks_stage(home)
    chunk_index = cstage.read_index()
    if chunk_index is None:
        raise EpistemeError(
            "INVALID_INPUT", f"no chunks in {cstage.dir}", details={"path": str(cstage.dir)},
            hint="run episteme chunk (or episteme pipeline)",
        )
    chunk_index_sha = hashlib.sha256(cstage.index_path.read_bytes()).hexdigest()
    stage = Stage(home, STAGE)
    previous = stage.read_index()
    analyzer = analyzer_params()
    compatible = (
        previous is not None
        and indexer_of(previous.meta) == INDEXER
        and analyzer_id(previous.meta.get("analyzer")) == analyzer_id(analyzer)
        and previous.meta.get("bm25") == params
        and previous.meta.get("fields") == settings.fields
        and previous.meta.get("runChars") == settings.run_chars
        and previous.meta.get("layout", 1) == LAYOUT  # shards before the words section are rebuilt
        and previous.meta.get("rowCodec") == stored_rows.codec()  # another zstandard: other bytes
    )
    holds_deleted = previous is not None and any(
        (info or {}).get("deleted") for info in (previous.meta.get("shards") or {}).values())
    if compatible and not reshard and previous is not None and (
            previous.meta.get("chunkIndexSha256") == chunk_index_sha
            and previous.meta.get("shardSize") == shard_size) and not (purge and holds_deleted):
        return _unchanged(home, stage, previous, chunk_index.fingerprint, progress)
    delta = (_changed_chunk_buckets(previous, chunk_index, shard_size)
             if compatible and not reshard and not purge and previous is not None else None)
    if delta is None:
        objects = {entry.key: entry for entry in chunk_index.entries}
        counts = {key: int(n) for key, n in (chunk_index.meta.get("counts") or {}).items()}
        kinds = chunk_index.meta.get("sourceKinds")
    else:  # only the chunks of the changed buckets: the others are held by the shards as they are
        objects, counts, kinds = _bucket_objects(cstage, chunk_index, delta)
    if not isinstance(kinds, dict) or set(kinds) != set(objects) or set(counts) != set(objects):
        from episteme_core.stages.chunks import object_source_kind

        kinds = {key: object_source_kind(home, entry) for key, entry in objects.items()}
        counts = {key: len(object_rows(cstage, entry)) for key, entry in objects.items()}
    resharded = reshard or not compatible
    entries: dict[str, StageEntry] = {}
    infos: dict[str, dict[str, Any]] = {}
    held: set[tuple[str, str]] = set()  # (key, object sha256) the kept shards hold
    dropped: list[str] = []
    deleted_rows = 0
    # Shard numbers only grow (kept across commits, even --reshard): a name never means two contents.
    ours = previous is not None and indexer_of(previous.meta) == INDEXER
    next_seq: dict[str, int] = dict((previous.meta.get("nextShard") or {}) if ours and previous else {})
    if previous is not None and not resharded:
        kept = _keep(stage, previous, objects, next_seq, delta, purge=purge)
        if kept is None:  # shards made before they recorded their inputs: rebuild them all
            resharded = True
        else:
            entries, infos, held, dropped, deleted_rows = kept
    if resharded:
        entries, infos, held, dropped, deleted_rows = {}, {}, set(), [], 0
        if previous is not None:
            for entry in previous.entries:  # every old name stays taken
                label = entry.key.rpartition("-")[0]
                next_seq[label] = max(next_seq.get(label, 1), shard_seq(entry.key) + 1)
    fresh: dict[str, list[str]] = {}
    for key in sorted(objects):
        if counts.get(key, 0) > 0 and (key, objects[key].sha256) not in held:
            fresh.setdefault(str(kinds[key]), []).append(key)
    tasks: list[ShardTask] = []
    for source in sorted(fresh):
        label = source_label(source)
        for pieces in _pack(fresh[source], objects, counts, shard_size):
            seq = next_seq.get(label, 1)
            next_seq[label] = seq + 1
            tasks.append(ShardTask(f"{label}-{seq:04d}", source, pieces))
    job = ShardJob(home, params, settings.fields, settings.run_chars,
                   {"chunkIndexFingerprint": chunk_index.fingerprint})
    runner = executor or SERIAL
    built: list[str] = []
    terms = 0
    with cleaning_up(home, runner):
        results = runner.map(functools.partial(build_shard_object, job), tasks, min_work=PARALLEL_CHUNKS,
                             work=lambda task: sum(p.stop - p.start for p in task.pieces))
        for number, (task, parts) in enumerate(zip(tasks, results, strict=True), start=1):
            for shard in parts:
                entries[shard.entry.key] = shard.entry
                terms += shard.terms
                infos[shard.entry.key] = {"source": task.source, "rows": shard.rows,
                                          "headerSha256": shard.header_sha256, "deleted": []}
                built.append(shard.entry.key)
            if progress:
                progress(number, len(tasks), task.name)
    if tasks and runner is not SERIAL:
        from episteme_core.store.atomic import sync_after_rename

        sync_after_rename(stage.dir)  # what workers wrote, durable before the commit names it
    lines, log_bytes = log_mark(home)
    sources: dict[str, int] = {}
    for info in infos.values():
        sources[info["source"]] = sources.get(info["source"], 0) + info["rows"] - len(info["deleted"])
    meta: dict[str, Any] = {
        "indexer": INDEXER,
        "analyzer": analyzer,
        "bm25": params,
        "fields": settings.fields,
        "runChars": settings.run_chars,
        "layout": LAYOUT,
        "rowCodec": stored_rows.codec(),
        "shardSize": shard_size,
        "chunkIndexFingerprint": chunk_index.fingerprint,
        "chunkIndexSha256": chunk_index_sha,
        "logPosition": lines,
        "logBytes": log_bytes,
        "shards": {name: infos[name] for name in sorted(infos)},
        "chunks": sum(sources.values()),
        "sources": dict(sorted(sources.items())),
        "nextShard": dict(sorted(next_seq.items())),
    }
    if isinstance(chunk_index, LazyStageIndex):  # what the next run compares bucket by bucket
        meta[CHUNKS_BUCKETS] = [bucket["sha256"] for bucket in chunk_index.buckets]
    ordered = sorted(entries.values(), key=lambda e: e.key)
    if previous is not None and _same_but_log_mark(home, previous.meta, meta):
        # Only observations of unchanged content were logged since: keep the commit as it is.
        meta["logPosition"], meta["logBytes"] = previous.meta["logPosition"], previous.meta["logBytes"]
    if previous is not None and previous.entries == ordered and previous.meta == meta:
        index = previous
        changed = False
    else:
        index = stage.commit(ordered, meta)
        stage.prune(index)
        changed = True
    return IndexReport(
        shards=len(ordered),
        chunks=meta["chunks"],
        built=built,
        kept=len(ordered) - len(built),
        dropped=sorted(dropped),
        deleted_rows=deleted_rows,
        terms=terms,
        resharded=resharded and previous is not None,
        changed=changed,
        fingerprint=index.fingerprint,
        chunk_index_fingerprint=chunk_index.fingerprint,
        sources=meta["sources"],
    )


CHUNKS_BUCKETS = "chunksBuckets"  # shards meta: the chunks buckets' sha256 it was built from


def _changed_chunk_buckets(previous: Any, chunk_index: StageIndex, shard_size: int
                           ) -> tuple[int, set[int]] | None:
    """(bucket count, the chunks buckets that differ from those the shards were built from) when the
    shards' settings are the same; else None (every object is compared)."""
    recorded = previous.meta.get(CHUNKS_BUCKETS)
    if (not isinstance(chunk_index, LazyStageIndex) or not isinstance(recorded, list)
            or len(recorded) != len(chunk_index.buckets) or previous.meta.get("shardSize") != shard_size
            or not {"counts", "sourceKinds"} <= set(chunk_index.keyed)):
        return None
    buckets = chunk_index.buckets
    return len(recorded), {n for n, bucket in enumerate(buckets) if bucket["sha256"] != recorded[n]}


def _bucket_objects(cstage: Stage, chunk_index: Any, changed: tuple[int, set[int]]
                    ) -> tuple[dict[str, StageEntry], dict[str, int], dict[str, Any]]:
    """The chunks objects of the changed buckets, with their chunk counts and source kinds."""
    objects: dict[str, StageEntry] = {}
    counts: dict[str, int] = {}
    kinds: dict[str, Any] = {}
    for number in sorted(changed[1]):
        entries, keyed = cstage.bucket(chunk_index, number)
        objects.update((entry.key, entry) for entry in entries)
        counts.update((key, int(n)) for key, n in keyed["counts"].items())
        kinds.update(keyed["sourceKinds"])
    return objects, counts, kinds


def _keep(stage: Stage, previous: Any, objects: dict[str, StageEntry], next_seq: dict[str, int],
          changed: tuple[int, set[int]] | None = None, *, purge: bool = False) -> Any:
    """The previous shards that still hold committed chunks: a row lives while the chunks object it
    came from is committed unchanged (its key and sha256); a shard with no live row is dropped, and
    with ``purge`` so is a shard with any row that does not live (its live chunks are packed anew).
    Reads each shard's input table, never a chunks object. None when a shard has no input table.

    With ``changed`` (the chunks bucket count and the changed buckets; ``objects`` then holds the
    changed buckets' objects only), an input of an unchanged bucket lives as it did at the last
    commit (its rows not deleted then)."""
    import numpy as np

    from episteme_core.bm25.build import input_table
    from episteme_core.store.commits import bucket_of

    old_infos = previous.meta.get("shards") or {}
    entries: dict[str, StageEntry] = {}
    infos: dict[str, dict[str, Any]] = {}
    held: set[tuple[str, str]] = set()
    dropped: list[str] = []
    deleted_rows = 0
    for entry in previous.entries:
        info = old_infos[entry.key]
        shard = Shard(stage.object_path(entry), name=entry.key, source=info["source"],
                      size=entry.bytes, header_sha256=info["headerSha256"])
        label = source_label(info["source"])
        seq = shard_seq(entry.key)
        next_seq[label] = max(next_seq.get(label, 1), seq + 1)
        table = input_table(shard.file)
        if table is None:
            return None
        inputs, row_inputs = table
        if changed is None:
            live = [number for number, (key, sha) in enumerate(inputs)
                    if key in objects and objects[key].sha256 == sha]
        else:
            count, buckets = changed
            deleted = info.get("deleted") or []
            was_gone = (set(np.unique(row_inputs[np.asarray(deleted, dtype=np.int64)]).tolist())
                        if deleted else set())
            live = [number for number, (key, sha) in enumerate(inputs)
                    if ((key in objects and objects[key].sha256 == sha) if bucket_of(key, count) in buckets
                        else number not in was_gone)]
        gone = np.flatnonzero(~np.isin(row_inputs, np.asarray(live, dtype=np.int64))).tolist()
        if len(gone) == shard.rows or (purge and gone):
            dropped.append(entry.key)
            continue
        held.update(inputs[number] for number in live)
        entries[entry.key] = entry
        infos[entry.key] = {**info, "deleted": gone}
        deleted_rows += len(gone)
    return entries, infos, held, dropped, deleted_rows


def _unchanged(home: Home, stage: Stage, previous: Any, chunk_fingerprint: str,
               progress: ProgressFn | None) -> IndexReport:
    """The shards were built from the committed chunks with these settings: keep them; only the log
    mark moves, when the log gained captures (readers compare it)."""
    lines, log_bytes = log_mark(home)
    meta = {**previous.meta, "logPosition": lines, "logBytes": log_bytes}
    if _same_but_log_mark(home, previous.meta, meta) or meta == previous.meta:
        index, changed = previous, False
    else:
        index, changed = stage.commit(previous.entries, meta), True
    if progress:
        progress(0, 0, "unchanged")
    return IndexReport(
        shards=len(index.entries), chunks=int(meta["chunks"]), built=[], kept=len(index.entries),
        dropped=[], deleted_rows=sum(len(info.get("deleted") or ()) for info in meta["shards"].values()),
        terms=0, resharded=False, changed=changed, fingerprint=index.fingerprint,
        chunk_index_fingerprint=chunk_fingerprint, sources=dict(meta["sources"]),
    )
