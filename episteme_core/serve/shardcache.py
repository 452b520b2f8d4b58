"""The server's open shards: opened once, reopened when a commit changes them, never two commits mixed.

A set of shards is keyed by the identity of the three files its freshness depends on: the shards
index, the chunks index and the log. When any of them changes, the next call opens the committed set
anew (with the CLI's freshness check). A call holds one set from start to end; shard files a later
commit removes stay mapped for it.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from episteme_core.errors import EpistemeError

if TYPE_CHECKING:
    from episteme_core.index.shards import ShardSet
    from episteme_core.store.home import Home

FileKey = tuple[int, int, int, int] | None
OPEN_ATTEMPTS = 3


def file_key(path: Path) -> FileKey:
    """(inode, size, mtime ns, ctime ns) of ``path``, or None when it does not exist."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


class ShardCache:
    """The home's fresh shards, shared by concurrent calls (thread-safe)."""

    def __init__(self, home: Home) -> None:
        from episteme_core.store.stage import Stage

        self.home = home
        self._paths = (Stage(home, "shards").index_path, Stage(home, "chunks").index_path, home.log_path)
        self._lock = threading.Lock()
        self._key: tuple[FileKey, ...] | None = None
        self._set: ShardSet | None = None
        self.opened = 0  # how many times a set was opened (for tests and the benchmark)

    def _key_now(self) -> tuple[FileKey, ...]:
        return tuple(file_key(path) for path in self._paths)

    def get(self) -> ShardSet:
        """The committed shards, fresh; ``STALE_INDEX`` (or the open's error) as ``open_shards`` gives."""
        from episteme_core.index.shards import open_shards

        key = self._key_now()
        with self._lock:
            if self._set is not None and key == self._key:
                return self._set
            self._set = self._key = None
            for attempt in range(OPEN_ATTEMPTS):
                try:
                    opened = open_shards(self.home)
                except EpistemeError:
                    # A commit that lands while the set is opened can remove files the old index
                    # named; open again what is committed now.
                    latest = self._key_now()
                    if attempt + 1 < OPEN_ATTEMPTS and latest != key:
                        key = latest
                        continue
                    raise
                # The set is at least as new as ``key``: a later change to any file reopens it.
                self._set, self._key = opened, key
                self.opened += 1
                return opened
        raise AssertionError("unreachable")  # pragma: no cover
