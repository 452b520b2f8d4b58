"""The shards stage writer: pack committed chunks into frozen shards, one source per shard.

A shard, once written, never changes (its file is named by its sha256). A run keeps every shard
whose analyzer and BM25 parameters still hold, records the rows whose chunks are gone as deleted
(in the stage index: they are never returned), drops shards left with no live row, and packs the
chunks no shard holds into new shards of at most ``shard_size`` chunks per source. ``reshard``
rebuilds everything. The commit records the chunk index (fingerprint and sha256 of its bytes) and
the log position it covers; readers refuse anything else as stale.
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
from episteme_core.index.analyzer import ANALYZER_VERSION, analyzer_params
from episteme_core.index.build import BM25_DEFAULTS, INDEXED_FIELDS, build_shard
from episteme_core.index.shardfile import header_sha256
from episteme_core.index.shards import STAGE, Shard
from episteme_core.records import StageEntry
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


def shard_settings(home: Home) -> tuple[int, dict[str, Any]]:
    """``shard_size`` and ``bm25`` parameters from config.json (defaults when absent)."""
    config = home.config()
    size = config.get("shard_size", DEFAULT_SHARD_SIZE)
    if isinstance(size, bool) or not isinstance(size, int) or not (
        MIN_SHARD_SIZE <= size <= MAX_SHARD_SIZE
    ):
        raise EpistemeError(
            "INVALID_INPUT",
            f"{home.config_path}: shard_size must be an integer in {MIN_SHARD_SIZE}–{MAX_SHARD_SIZE}",
            details={"path": str(home.config_path)},
        )
    params = dict(BM25_DEFAULTS)
    custom = config.get("bm25", {})
    if not isinstance(custom, dict) or set(custom) - {"k1", "b", "headingWeight"}:
        raise EpistemeError(
            "INVALID_INPUT", f"{home.config_path}: bm25 takes only k1, b and headingWeight",
            details={"path": str(home.config_path)},
        )
    for key, value in custom.items():
        low, high = (1, 10) if key == "headingWeight" else (0.0, 10.0)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
            raise EpistemeError(
                "INVALID_INPUT", f"{home.config_path}: bm25.{key} must be a number in {low}–{high}",
                details={"path": str(home.config_path)},
            )
        if key == "headingWeight" and not isinstance(value, int):
            raise EpistemeError(
                "INVALID_INPUT", f"{home.config_path}: bm25.headingWeight must be an integer",
                details={"path": str(home.config_path)},
            )
        params[key] = value
    return size, params


def source_label(source: str) -> str:
    """A shard-name-safe label for a source kind (odd names are hashed, never used as paths)."""
    if _SAFE.match(source):
        return source
    return "src-" + hashlib.sha256(source.encode("utf-8")).hexdigest()[:12]


def _same_but_log_mark(home: Home, old: dict[str, Any], new: dict[str, Any]) -> bool:
    """True when only the log mark moved and the log gained no capture past the old mark."""
    from episteme_core.index.shards import _log_tail_has_captures

    marks = ("logPosition", "logBytes")
    if any(k not in old for k in marks):
        return False
    if {k: v for k, v in old.items() if k not in marks} != {k: v for k, v in new.items() if k not in marks}:
        return False
    return not _log_tail_has_captures(home, int(old.get("logBytes") or 0))


def _log_mark(home: Home) -> tuple[int, int]:
    """(whole lines, bytes up to the last newline) of the log."""
    try:
        data = home.log_path.read_bytes()
    except FileNotFoundError:
        return 0, 0
    end = data.rfind(b"\n") + 1
    return data.count(b"\n", 0, end), end


def index_home(
    home: Home, *, reshard: bool = False, progress: ProgressFn | None = None
) -> IndexReport:
    """Bring the shards up to the committed chunks; call inside ``ctx.writing()``."""
    with paused_cycle_gc():
        return _index_home(home, reshard=reshard, progress=progress)


def _index_home(home: Home, *, reshard: bool, progress: ProgressFn | None) -> IndexReport:
    shard_size, params = shard_settings(home)
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
    for chunk_json, raw in iter_chunk_rows(home, chunk_index):
        if chunk_json["id"] not in live:
            live[chunk_json["id"]] = ({key: chunk_json.get(key) for key in INDEXED_FIELDS}, raw)
    stage = Stage(home, STAGE)
    previous = stage.read_index()
    analyzer = analyzer_params()
    compatible = (
        previous is not None
        and (previous.meta.get("analyzer") or {}).get("version") == ANALYZER_VERSION
        and previous.meta.get("bm25") == params
    )
    resharded = reshard or not compatible
    entries: dict[str, StageEntry] = {}
    infos: dict[str, dict[str, Any]] = {}
    covered: set[str] = set()
    dropped: list[str] = []
    deleted_rows = 0
    # Shard numbers only grow (kept across commits, even --reshard): a name never means two contents.
    next_seq: dict[str, int] = dict((previous.meta.get("nextShard") or {}) if previous else {})
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
        ids = fresh[source]
        label = source_label(source)
        for start in range(0, len(ids), shard_size):
            seq = next_seq.get(label, 1)
            next_seq[label] = seq + 1
            planned.append((f"{label}-{seq:04d}", source, ids[start : start + shard_size]))
    built: list[str] = []
    terms = 0
    built_from = {"chunkIndexFingerprint": chunk_index.fingerprint}
    for number, (name, source, ids) in enumerate(planned, start=1):
        data = build_shard([live[i][0] for i in ids], source=source, name=name, params=params,
                           built_from=built_from, row_bytes=[live[i][1] for i in ids])
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
    lines, log_bytes = _log_mark(home)
    sources: dict[str, int] = {}
    for info in infos.values():
        sources[info["source"]] = sources.get(info["source"], 0) + info["rows"] - len(info["deleted"])
    meta: dict[str, Any] = {
        "analyzer": analyzer,
        "bm25": params,
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
