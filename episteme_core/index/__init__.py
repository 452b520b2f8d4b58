"""The bm25 indexer: analyzer, shard files, the shards it builds and BM25 search over them.

Commands reach it only through the registered indexer (``episteme_core.indexers``); this package is
the builtin ``bm25`` indexer's implementation (see ``docs/retrieval.md``):

- ``open_shards(home) -> Bm25ShardSet``: the committed shards, refused with ``STALE_INDEX`` ("run
  episteme index") when missing, built by another indexer or analyzer, older than the chunks, or
  older than a capture in the log (while no writer is at work: see ``episteme_core.shardstage``).
  Each ``Shard`` has ``.name``, ``.source``, ``.search(text, k, filters) -> [(chunk_id, score)]``
  sorted (-score, chunk id), ``.ranked(terms, k, filters) -> (hits, total)`` over scored units
  (runs of consecutive chunks), ``.shown_rows(hit)``, ``.passages(text, k, filters) -> [(score,
  chunk ids)]`` and ``.chunk(chunk_id) -> Chunk``. ``ShardSet.search`` scores every shard with one
  idf over them all.
- ``Filters(family=, authority=, document_type=, normativity=, source=, since=)``.
- ``check_fresh(home, meta)`` raises ``STALE_INDEX``; ``index_home(home)`` writes the shards stage.
"""

from __future__ import annotations

from typing import Any

from episteme_core.index.shards import (
    STALE_HINT,
    Bm25ShardSet,
    Filters,
    Hit,
    Shard,
    ShardSet,
    check_fresh,
    open_shards,
)

__all__ = ["STALE_HINT", "Bm25ShardSet", "Filters", "Hit", "Shard", "ShardSet", "check_fresh", "index_home",
           "open_shards"]


def index_home(*args: Any, **kwargs: Any) -> Any:
    """See ``episteme_core.index.indexing.index_home`` (imported lazily: it pulls numpy when building)."""
    from episteme_core.index.indexing import index_home as run

    return run(*args, **kwargs)
