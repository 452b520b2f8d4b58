"""Shard status per source, for ``sources`` and ``show``: how many shards, and are they behind?

Reads only ``shards/index.json`` (its meta names each shard's source, the chunk index it was built
from and the log position it covers) and the log past that position; never a shard file.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from episteme_core.snapshots import SnapshotCatalog
    from episteme_core.store.home import Home


@attrs.frozen
class ShardStatus:
    """``by_source[kind]`` = {shards, shardBytes, shardStatus, behind}; the log position they cover."""

    by_source: dict[str, dict[str, Any]]
    log_position: int | None


def _captured_kinds_after(home: Home, offset: int) -> set[str] | None:
    """Capture kinds the log records past byte ``offset``; None when the log was cut short."""
    try:
        with open(home.log_path, "rb") as handle:
            size = handle.seek(0, 2)
            if size < offset:
                return None
            handle.seek(offset)
            tail = handle.read()
    except FileNotFoundError:
        return None if offset > 0 else set()
    kinds: set[str] = set()
    for line in tail.split(b"\n")[:-1]:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and entry.get("status") == "captured":
            kinds.add(str(entry.get("source")))
    return kinds


def shard_status(home: Home, catalog: SnapshotCatalog | None = None) -> ShardStatus:
    """Per source: its shards and whether the log has captures of it newer than they are."""
    from episteme_core.store.stage import Stage

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
    kinds = _captured_kinds_after(home, int(meta.get("logBytes") or 0))
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
