"""Shards kept open between calls: opened once, reopened when a commit changes them, never two
commits mixed; the server's set (``ShardCache``) and a process's (``warm_shards``, what ``query``
uses when it is given no set).

The shards are opened by the home's indexer (``config.json``'s ``indexer``, else bm25) through
``episteme_core.search.indexers``, and kept under the indexer's generation token: for indexers that commit
to the shards stage, the identity of the shards index, the chunks index, the log and the writer lock
(and whether the lock's holder lives). When the token changes, the next call opens the committed set
anew, with the CLI's checks: stale shards are refused as the CLI refuses them, and while a writer is
at work the last commit is answered from. A call holds one set from start to end; shard files a later
commit removes stay mapped for it.

A process's ``query`` calls keep the sets of its last ``WARM_HOMES`` homes, each also keyed by its
``config.json`` (which names the indexer) and by the identity of every shard file it mapped (a file
written in place is opened, and so verified, again): a warm query neither reads the commit nor hashes
blocks it verified before.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

from episteme_core.errors import EpistemeError

if TYPE_CHECKING:
    from episteme_core.kernel.contracts import SearchableShards
    from episteme_core.kernel.registry import Plugins
    from episteme_core.store.home import Home

OPEN_ATTEMPTS = 3


class ShardCache:
    """The home's fresh shards, shared by concurrent calls (thread-safe)."""

    def __init__(self, home: Home, plugins: Plugins | None = None, indexer: str | None = None, *,
                 long_lived: bool = False) -> None:
        """``long_lived``: the holder answers many queries (the server): each set opened is asked to
        ``keep_warm`` (``SearchableShards``), where it has that method."""
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
        self.long_lived = long_lived

    def forget(self) -> None:
        """Open the shards anew on the next ``get``."""
        with self._lock:
            self._set = self._key = None

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
                keep_warm = getattr(opened, "keep_warm", None) if self.long_lived else None
                if callable(keep_warm):
                    keep_warm()
                self._set, self._key = opened, key
                self.opened += 1
                return opened
        raise AssertionError("unreachable")  # pragma: no cover


WARM_HOMES = 4  # homes whose shards a process keeps open for its query calls
# (home, indexer, id of plugins) -> [config.json's identity, its cache, the set last given, its files'
# identity, the plugins (held: an id is only unique while its object lives)]
_WARM: OrderedDict[tuple[str, str | None, int], list[Any]] = OrderedDict()
_WARM_LOCK = threading.Lock()


def _files(shard_set: Any) -> tuple[Any, ...]:
    """The identity (inode, size, mtime, ctime) of each file the set's shards mapped (none for
    shards held in memory, or an indexer whose shards name no file)."""
    keys = []
    for shard in getattr(shard_set, "shards", ()):
        path = getattr(getattr(shard, "file", None), "path", None)
        if path is not None:
            try:
                st = os.stat(path)
            except OSError:
                return (None,)
            keys.append((st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return tuple(keys)


def warm_shards(home: Home, plugins: Plugins, indexer: str | None = None) -> SearchableShards:
    """The home's fresh shards, kept open for the process's next calls (``ShardCache.get``'s
    answer, and errors), reopened when the commit, ``config.json`` or a shard file changed."""
    from episteme_core.stages.shards import file_key

    key = (str(home.root), indexer, id(plugins))
    config = file_key(home.config_path)
    with _WARM_LOCK:
        entry = _WARM.get(key)
        if entry is None or entry[0] != config or entry[4] is not plugins:
            entry = _WARM[key] = [config, ShardCache(home, plugins, indexer), None, None, plugins]
        _WARM.move_to_end(key)
        while len(_WARM) > WARM_HOMES:
            _WARM.popitem(last=False)
    cache: ShardCache = entry[1]
    shard_set = cache.get()
    files = _files(shard_set)
    if shard_set is entry[2] and files != entry[3]:  # a shard file changed under the set: open it anew
        cache.forget()
        shard_set = cache.get()
        files = _files(shard_set)
    entry[2], entry[3] = shard_set, files
    return shard_set
