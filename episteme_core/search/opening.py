"""Opening the committed shards, fresh, as one searchable set: from a home or from an index bundle.

What an indexer's ``open(home)`` and ``open_artifact(bundle)`` do with the shards stage
(``stages.shards``): read its commit, refuse shards of another indexer or behind the chunks and the
log (``STALE_INDEX``) unless a writer is at work, open each stored shard with the indexer's own
``opener``, and hand them over as a ``ShardSet``. A commit landing while a reader opens the stage is
opened anew, so a reader sees the old commit or the new one, never a mix.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from episteme_core.errors import EpistemeError
from episteme_core.search.shardset import ShardSet
from episteme_core.stages.shards import (
    OPEN_ATTEMPTS,
    STAGE,
    Check,
    Opener,
    StoredShard,
    check_current,
    check_indexer,
    file_key,
    stale,
    writer_at_work,
)

if TYPE_CHECKING:
    from episteme_core.records.stage_index import StageEntry, StageIndex
    from episteme_core.stages.bundle import IndexBundle
    from episteme_core.store.commits import Stage
    from episteme_core.store.home import Home

S = TypeVar("S", bound=ShardSet)


def _stored(index: StageIndex, *, place: Callable[[StageEntry], tuple[Path | None, memoryview | None, str]],
            index_label: str) -> list[StoredShard]:
    infos = index.meta.get("shards") or {}
    out = []
    for entry in index.entries:
        info = infos.get(entry.key)
        if not isinstance(info, dict) or not isinstance(info.get("source"), str):
            raise EpistemeError("INVALID_INPUT", f"{index_label}: shard {entry.key} has no metadata",
                                details={"path": index_label})
        path, data, where = place(entry)
        out.append(StoredShard(entry.key, info["source"], info, entry, path, data, where))
    return out


def open_committed(home: Home, indexer: str, opener: Opener, *, check: Check | None = None,
                   fresh: bool = True, set_type: type[S] = ShardSet) -> S:  # type: ignore[assignment]
    """The home's committed shards, opened by ``opener`` (one ``StoredShard`` -> a searchable shard).

    Refused (``STALE_INDEX``) when missing, built by another indexer, refused by ``check`` (the
    indexer's own rules, e.g. its analyzer's version), or, with ``fresh``, not covering the chunks
    and the log while no writer is at work. A commit landing meanwhile is opened anew."""
    from episteme_core.store.commits import Stage

    stage = Stage(home, STAGE)
    error: EpistemeError | None = None
    for _ in range(OPEN_ATTEMPTS):
        before = file_key(stage.index_path)
        try:
            return _open_once(home, stage, indexer, opener, check, fresh, set_type)
        except EpistemeError as exc:
            if file_key(stage.index_path) == before:  # no commit landed: the refusal is the answer
                raise
            error = exc  # a commit landed meanwhile (files pruned, freshness moved): open it
    assert error is not None
    raise error


def _open_once(home: Home, stage: Stage, indexer: str, opener: Opener, check: Check | None, fresh: bool,
               set_type: type[S]) -> S:
    index = stage.read_index()
    if index is None:
        at_work = writer_at_work(home)
        details: dict[str, Any] = {"path": str(stage.dir), **({"writer": at_work} if at_work else {})}
        raise stale(f"no index in {stage.dir}" + (
            f" yet ({at_work['command']}, pid {at_work['pid']}, is writing the home)" if at_work else ""),
            **details)
    check_indexer(index.meta, indexer)
    if check is not None:
        check(index.meta)
    in_flight = None
    if fresh:
        try:
            check_current(home, index.meta)
        except EpistemeError as exc:
            at_work = writer_at_work(home)
            if at_work is None:
                raise
            in_flight = {**at_work, "reason": exc.message}
    stored = _stored(index, place=lambda e: (stage.object_path(e), None, str(stage.object_path(e))),
                     index_label=str(stage.index_path))
    shards = [opener(shard) for shard in stored]
    return set_type(home=home, shards=shards, meta=dict(index.meta), indexer=indexer, in_flight=in_flight)


def open_bundle(bundle: IndexBundle, indexer: str, opener: Opener, *, check: Check | None = None,
                set_type: type[S] = ShardSet) -> S:  # type: ignore[assignment]
    """The shards an index bundle holds (``episteme index --out``), opened by ``opener``; refused
    when another indexer built them or ``check`` refuses them. A bundle is answered as it is: it
    holds its chunks' rows and names the chunk index it was built from; no home is consulted."""
    index = bundle.index
    check_indexer(index.meta, indexer)
    if check is not None:
        check(index.meta)
    stored = _stored(index, place=lambda e: (None, bundle.member(e), f"{bundle.label}!{e.path}"),
                     index_label=f"{bundle.label}!index.json")
    return set_type(home=None, shards=[opener(shard) for shard in stored], meta=dict(index.meta),
                    indexer=indexer, in_flight=None)
