"""The search index: analyzer, shard files, the shards stage and BM25 search over it.

Library API (``ask``, ``serve`` and plugins use these; see ``docs/retrieval.md``):

- ``open_shards(home) -> ShardSet``: the committed shards, refused with ``STALE_INDEX`` ("run
  episteme index") when missing, built by another analyzer, older than the chunks, or older than
  a capture in the log. ``ShardSet.shards``: each ``Shard`` has ``.name``, ``.source``,
  ``.search(text, k, filters) -> [(chunk_id, score)]`` sorted (-score, chunk id), ``.ranked(terms,
  k, filters) -> (hits, total)`` over scored units (runs of consecutive chunks), ``.unit_rows(unit)``,
  ``.passages(text, k, filters) -> [(score, chunk ids)]`` and ``.chunk(chunk_id) -> Chunk``.
  ``ShardSet.search`` scores every shard with one idf over them all.
- ``Filters(family=, authority=, document_type=, normativity=, source=, since=)``.
- ``check_fresh(home, meta)`` raises ``STALE_INDEX``; ``index_home(home)`` writes the shards stage.
"""

from __future__ import annotations

from typing import Any

from episteme_core.index.shards import STALE_HINT, Filters, Hit, Shard, ShardSet, check_fresh, open_shards

__all__ = ["STALE_HINT", "Filters", "Hit", "Shard", "ShardSet", "check_fresh", "index_home", "open_shards"]


def index_home(*args: Any, **kwargs: Any) -> Any:
    """See ``episteme_core.index.indexing.index_home`` (imported lazily: it pulls numpy when building)."""
    from episteme_core.index.indexing import index_home as run

    return run(*args, **kwargs)
