"""The shards stage writer: pack committed chunks into frozen shards, one source per shard.

A shard, once written, never changes (its file is named by its sha256). A run keeps every shard
this indexer built whose analyzer and BM25 parameters still hold, records the rows whose chunks are
gone as deleted (in the stage index: they are never returned), drops shards left with no live row,
and packs the chunks no shard holds into new shards of at most ``shard_size`` chunks per source.
``reshard`` rebuilds everything. The commit records the indexer (``bm25``), the chunk index
(fingerprint and sha256 of its bytes) and the log position it covers; readers refuse anything else
as stale.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import Any

import attrs

from episteme_core.chunking import chunks_stage, iter_chunk_rows
from episteme_core.errors import EpistemeError
from episteme_core.gcpause import paused_cycle_gc
from episteme_core.index.analyzer import analyzer_id, analyzer_params
from episteme_core.index.build import BM25_DEFAULTS, build_shard
from episteme_core.index.fields import FIELD_DEFAULTS, FIELDS, MAX_WEIGHT, MIN_WEIGHT, indexed
from episteme_core.index.runs import MAX_RUN_CHARS, MIN_RUN_CHARS, RUN_CHARS, SECTION_RUN_CHARS
from episteme_core.index.shardfile import header_sha256
from episteme_core.index.shards import INDEXER, STAGE, Shard
from episteme_core.records import StageEntry
from episteme_core.shardstage import indexer_of, log_mark
from episteme_core.store.home import Home
from episteme_core.store.stage import Stage

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


def shard_settings(home: Home) -> tuple[int, dict[str, Any]]:
    """``shard_size`` and ``bm25`` parameters from config.json (defaults when absent)."""
    settings = index_settings(home)
    return settings.shard_size, settings.bm25


def source_label(source: str) -> str:
    """A shard-name-safe label for a source kind (odd names are hashed, never used as paths)."""
    if _SAFE.match(source):
        return source
    return "src-" + hashlib.sha256(source.encode("utf-8")).hexdigest()[:12]


def _same_but_log_mark(home: Home, old: dict[str, Any], new: dict[str, Any]) -> bool:
    """True when only the log mark moved and the log gained no capture past the old mark."""
    from episteme_core.shardstage import log_has_captures_after

    marks = ("logPosition", "logBytes")
    if any(k not in old for k in marks):
        return False
    if {k: v for k, v in old.items() if k not in marks} != {k: v for k, v in new.items() if k not in marks}:
        return False
    return not log_has_captures_after(home, int(old.get("logBytes") or 0))


def _pack(ids: list[str], live: dict[str, tuple[dict[str, Any], bytes]], size: int) -> list[list[str]]:
    """New shards of at most ``size`` chunks, chunk ids sorted within each; a record's paragraphs are
    kept in one shard (their runs never cross shards) unless the record alone is larger."""
    groups: dict[str, list[str]] = {}
    for chunk in ids:  # sorted: each group is sorted, groups ordered by their first chunk
        record = live[chunk][0].get("recordId")
        groups.setdefault(record if record is not None else "\0" + chunk, []).append(chunk)
    packed: list[list[str]] = []
    current: list[str] = []
    for group in sorted(groups.values(), key=lambda g: g[0]):
        if current and len(current) + len(group) > size:
            packed.append(sorted(current))
            current = []
        if len(group) > size:  # a record larger than a shard is cut in reading order (runs end there)
            view = {chunk: live[chunk][0] for chunk in group}
            group.sort(key=lambda c: (view[c].get("paragraph") or 0, view[c].get("partIndex") or 1, c))
            while len(group) > size:
                packed.append(sorted(group[:size]))
                group = group[size:]
        current.extend(group)
    if current:
        packed.append(sorted(current))
    return packed


def index_home(
    home: Home, *, reshard: bool = False, progress: ProgressFn | None = None
) -> IndexReport:
    """Bring the shards up to the committed chunks; call inside ``ctx.writing()``."""
    with paused_cycle_gc():
        return _index_home(home, reshard=reshard, progress=progress)


def _index_home(home: Home, *, reshard: bool, progress: ProgressFn | None) -> IndexReport:
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
    # chunk id -> (the fields a shard indexes, the chunk's canonical bytes): a million chunks fit
    live: dict[str, tuple[dict[str, Any], bytes]] = {}
    labels: dict[tuple[Any, ...], tuple[str, str, str, str]] = {}  # a document's labels, once
    for chunk_json, raw in iter_chunk_rows(home, chunk_index):
        if chunk_json["id"] not in live:
            live[chunk_json["id"]] = (indexed(chunk_json, labels), raw)
    del labels
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
    )
    resharded = reshard or not compatible
    entries: dict[str, StageEntry] = {}
    infos: dict[str, dict[str, Any]] = {}
    covered: set[str] = set()
    dropped: list[str] = []
    deleted_rows = 0
    # Shard numbers only grow (kept across commits, even --reshard): a name never means two contents.
    ours = previous is not None and indexer_of(previous.meta) == INDEXER
    next_seq: dict[str, int] = dict((previous.meta.get("nextShard") or {}) if ours and previous else {})
    if previous is not None and not resharded:
        old_infos = previous.meta.get("shards") or {}
        for entry in previous.entries:
            info = old_infos[entry.key]
            shard = Shard(stage.object_path(entry), name=entry.key, source=info["source"],
                          size=entry.bytes, header_sha256=info["headerSha256"])
            label = source_label(info["source"])
            seq = int(entry.key.rsplit("-", 1)[1])
            next_seq[label] = max(next_seq.get(label, 1), seq + 1)
            gone = []
            for row in range(shard.rows):
                chunk = shard.chunk_id(row)
                if chunk in live and chunk not in covered:
                    covered.add(chunk)
                else:
                    gone.append(row)
            if len(gone) == shard.rows:
                dropped.append(entry.key)
                continue
            entries[entry.key] = entry
            infos[entry.key] = {**info, "deleted": gone}
            deleted_rows += len(gone)
    fresh: dict[str, list[str]] = {}
    for chunk in sorted(set(live) - covered):
        fresh.setdefault(live[chunk][0]["sourceKind"], []).append(chunk)
    planned = []
    for source in sorted(fresh):
        label = source_label(source)
        for ids in _pack(fresh[source], live, shard_size):
            seq = next_seq.get(label, 1)
            next_seq[label] = seq + 1
            planned.append((f"{label}-{seq:04d}", source, ids))
    built: list[str] = []
    terms = 0
    built_from = {"chunkIndexFingerprint": chunk_index.fingerprint}
    for number, (name, source, ids) in enumerate(planned, start=1):
        data = build_shard([live[i][0] for i in ids], source=source, name=name, params=params,
                           built_from=built_from, row_bytes=[live[i][1] for i in ids],
                           fields=settings.fields, run_chars=settings.run_chars["records"],
                           section_run_chars=settings.run_chars["sections"])
        entry = stage.put_bytes(name, data, suffix=".shard")
        entries[name] = entry
        shard = Shard(stage.object_path(entry), name=name, source=source, size=entry.bytes,
                      header_sha256=header_sha256(data))
        terms += int(shard.meta["terms"])
        infos[name] = {"source": source, "rows": len(ids), "headerSha256": header_sha256(data),
                       "deleted": []}
        built.append(name)
        if progress:
            progress(number, len(planned), name)
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
        "shardSize": shard_size,
        "chunkIndexFingerprint": chunk_index.fingerprint,
        "chunkIndexSha256": chunk_index_sha,
        "logPosition": lines,
        "logBytes": log_bytes,
        "shards": infos,
        "chunks": sum(sources.values()),
        "sources": dict(sorted(sources.items())),
        "nextShard": dict(sorted(next_seq.items())),
    }
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
