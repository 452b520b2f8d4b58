"""The server's open shards: opened once, reopened when a commit changes them, never two commits mixed.

The shards are opened by the home's indexer (``config.json``'s ``indexer``, else bm25) through
``episteme_core.search.indexers``, and kept under the indexer's generation token: for indexers that commit
to the shards stage, the identity of the shards index, the chunks index, the log and the writer lock
(and whether the lock's holder lives). When the token changes, the next call opens the committed set
anew, with the CLI's checks: stale shards are refused as the CLI refuses them, and while a writer is
at work the last commit is answered from. A call holds one set from start to end; shard files a later
commit removes stay mapped for it.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import TYPE_CHECKING

from episteme_core.errors import EpistemeError

if TYPE_CHECKING:
    from episteme_core.kernel.contracts import SearchableShards
    from episteme_core.kernel.registry import Plugins
    from episteme_core.store.home import Home

OPEN_ATTEMPTS = 3


class ShardCache:
    """The home's fresh shards, shared by concurrent calls (thread-safe)."""

    def __init__(self, home: Home, plugins: Plugins | None = None, indexer: str | None = None) -> None:
        from episteme_core.search.indexers import opener

        if plugins is None:
            from episteme_core.kernel.loader import get_plugins

            plugins = get_plugins()
        self.home = home
        self._open, self._generation = opener(home, plugins, indexer)
        self._lock = threading.Lock()
        self._key: Hashable | None = None
        self._set: SearchableShards | None = None
        self.opened = 0  # how many times a set was opened (for tests and the benchmark)

    def get(self) -> SearchableShards:
        """The committed shards, fresh; ``STALE_INDEX`` (or the open's error) as the CLI gives it."""
        key = self._generation()
        with self._lock:
            if self._set is not None and key == self._key:
                return self._set
            self._set = self._key = None
            for attempt in range(OPEN_ATTEMPTS):
                try:
                    opened = self._open()
                except EpistemeError:
                    # A commit that lands while the set is opened can remove files the old index
                    # named; open again what is committed now.
                    latest = self._generation()
                    if attempt + 1 < OPEN_ATTEMPTS and latest != key:
                        key = latest
                        continue
                    raise
                # The set is at least as new as ``key``: a later change to any file reopens it.
                self._set, self._key = opened, key
                self.opened += 1
                return opened
        raise AssertionError("unreachable")  # pragma: no cover
