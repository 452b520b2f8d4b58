"""Shard status per source, for ``sources`` and ``show``: how many shards, and are they behind?

Reads only ``shards/index.json`` (its meta names each shard's source, the chunk index it was built
from and the log position it covers) and the log past that position; never a shard file.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

import attrs

from episteme_core.store.log import Log

if TYPE_CHECKING:
    from episteme_core.stages.snapshots import SnapshotCatalog
    from episteme_core.store.home import Home


@attrs.frozen
class ShardStatus:
    """``by_source[kind]`` = {shards, shardBytes, shardStatus, behind}; the log position they cover."""

    by_source: dict[str, dict[str, Any]]
    log_position: int | None


def shard_status(home: Home, catalog: SnapshotCatalog | None = None) -> ShardStatus:
    """Per source: its shards and whether the log has captures of it newer than they are."""
    from episteme_core.store.commits import Stage

    index = Stage(home, "shards").read_index()
    if index is None:
        return ShardStatus({}, None)
    meta = index.meta
    infos = meta.get("shards") or {}
    rows: dict[str, dict[str, Any]] = {}
    for entry in index.entries:
        info = infos.get(entry.key) or {}
        source = str(info.get("source", "?"))
        row = rows.setdefault(
            source, {"shards": 0, "shardBytes": 0, "shardRows": 0, "shardStatus": "current", "behind": False}
        )
        row["shards"] += 1
        row["shardBytes"] += entry.bytes
        row["shardRows"] += int(info.get("rows", 0)) - len(info.get("deleted") or [])
    chunk_index = Stage(home, "chunks").index_path
    try:
        chunks_changed = hashlib.sha256(chunk_index.read_bytes()).hexdigest() != meta.get("chunkIndexSha256")
    except FileNotFoundError:
        chunks_changed = True
    kinds = Log(home.log_path).captured_kinds_after(int(meta.get("logBytes") or 0))
    for source, row in rows.items():
        if chunks_changed or kinds is None or source in kinds:
            row["shardStatus"] = "behind"
            row["behind"] = True
    for kind in kinds or ():
        if kind not in rows:
            rows[kind] = {"shards": 0, "shardBytes": 0, "shardRows": 0, "shardStatus": "missing",
                          "behind": True}
    position = meta.get("logPosition")
    return ShardStatus(rows, int(position) if isinstance(position, int) else None)
