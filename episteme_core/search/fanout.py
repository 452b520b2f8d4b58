"""A query's shards fanned out over a remote executor (Dask): scatter, gather each shard's top k,
merge by (-score, chunk id).

``fanned(shard_set, executor)`` wraps any indexer's ``SearchableShards`` so that ``search`` asks
every shard on the worker that holds it (``Executor.ask_shards``: one actor per worker keeps its
shards open, memory-mapped once) and merges here, exactly as ``search.ShardSet.search`` merges them
in one process: the same analyzed terms, the same idf over every searched shard (read here from the
shards' vocabularies, a few pages), each shard's best ``k`` by its own ``ranked``, then the best
``k`` of those by (-score, chunk id). The shards' ``floor`` (a local speed-up that leaves out hits
that cannot rank) is not passed: it changes neither the hits nor the total. Everything else (chunk
text, snippets) is read from the shards in this process. A local executor gets the set as it is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from episteme_core.executor.base import Executor
    from episteme_core.records.hits import Filters, Hit


def ranked_on_shard(shard: Any, terms: Sequence[str], k: int, filters: Filters | None,
                    required: Sequence[str], idf: Mapping[str, float] | None,
                    options: Mapping[str, Any]) -> tuple[list[Hit], int]:
    """One shard's best ``k`` hits and match count (what a worker runs for each of its shards)."""
    return shard.ranked(terms, k, filters, required=required, idf=idf, **options)  # type: ignore[no-any-return]


class FannedShards:
    """``inner`` (a ``SearchableShards`` set) whose ``search`` runs shard by shard on ``executor``'s
    workers; every other attribute is the inner set's."""

    def __init__(self, inner: Any, executor: Executor) -> None:
        self._inner = inner
        self.executor = executor

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    @property
    def fanned_from(self) -> Any:
        """The set whose shards this one searches on the workers."""
        return self._inner

    def search(self, query: str | Sequence[str], k: int, filters: Filters | None = None, *,
               required: Sequence[str] = (),
               weights: Mapping[str, float] | None = None) -> tuple[list[Hit], int]:
        """The best ``k`` hits over every shard and how many units matched (``ShardSet.search``)."""
        from episteme_core.search.shardset import weighted_idf

        inner = self._inner
        terms = inner.terms(query) if isinstance(query, str) else sorted(set(query))
        sources = None if filters is None else filters.source
        searched = [shard for shard in inner.shards if sources is None or shard.source in sources]
        if not searched:
            return [], 0
        rank_options = getattr(inner, "rank_options", None)
        options = dict(rank_options(terms, searched)) if callable(rank_options) else {}
        options.pop("floor", None)
        idf = weighted_idf(inner.idf, terms, searched, weights)
        answers = self.executor.ask_shards(searched, ranked_on_shard, terms, k, filters, tuple(required),
                                           idf, options)
        merged = [hit for hits, _ in answers for hit in hits]
        merged.sort(key=lambda hit: (-hit.score, hit.chunk_id))
        return merged[:k], sum(count for _, count in answers)


def fanned(shard_set: Any, executor: Executor | None) -> Any:
    """``shard_set`` searched on ``executor``'s workers when it is remote (Dask); else as it is (a
    query is far smaller than starting local workers)."""
    if executor is None or not getattr(executor, "remote", False):
        return shard_set
    return FannedShards(shard_set, executor)


__all__ = ["FannedShards", "fanned", "ranked_on_shard"]
