"""The server's open shards (``search.warm.ShardCache``): opened once, reopened when a commit changes
them, never two commits mixed."""

from __future__ import annotations

from episteme_core.search.warm import OPEN_ATTEMPTS, ShardCache

__all__ = ["OPEN_ATTEMPTS", "ShardCache"]
