"""Search over shards, whoever built them: one set of shards searched as one.

An indexer's ``open(home)`` returns a set of shards (``contracts.SearchableShards``); the kernel's
``ShardSet`` is that set for any shards that keep ``contracts.SearchableShard``: it searches each
shard on its own and merges the hits by (-score, chunk id), with one idf over every shard it reads so
that scores of different shards compare. ``query``, ``ask`` and ``serve`` use only what is here and in
the Protocols, so they work with any registered indexer. Light: attrs only (``episteme --help``).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import attrs

from episteme_core.errors import EpistemeError
from episteme_core.records.hits import Filters, Hit

if TYPE_CHECKING:
    from episteme_core.kernel.contracts import SearchableShard
    from episteme_core.store.home import Home


def weighted_idf(idf: Callable[[Sequence[str], Sequence[Any]], dict[str, float]], terms: Sequence[str],
                 searched: Sequence[Any],
                 weights: Mapping[str, float] | None = None) -> dict[str, float] | None:
    """What a search passes each shard as ``idf``: the terms' idf over every shard searched (``idf``,
    a set's ``ShardSet.idf``) when there are several, each times its weight (``weights``, 1 when
    absent); None when one shard is searched and no weight differs from 1 (scores as stored)."""
    weighted = {term: weight for term, weight in (weights or {}).items() if weight != 1.0 and term in terms}
    if len(searched) <= 1 and not weighted:
        return None
    over = idf(terms, searched)
    return {term: value * weighted.get(term, 1.0) for term, value in over.items()}


def bm25_idf(units: int, df: int) -> float:
    """BM25's (lucene) idf of a term held by ``df`` of ``units`` scored units."""
    return math.log(1 + (units - df + 0.5) / (df + 0.5))


@attrs.define
class ShardSet:
    """Committed shards opened by an indexer (``contracts.SearchableShards``), searched as one.

    ``meta`` is the shards stage's commit meta (``meta["indexer"]`` names who built them);
    ``in_flight`` is set when the shards no longer cover the chunks or the log but a writer is at
    work on the home: they are the last commit, answered from as they are (``INDEX_UPDATING``).
    """

    home: Home | None
    shards: list[Any]  # SearchableShard
    meta: dict[str, Any]
    indexer: str = "bm25"
    in_flight: dict[str, Any] | None = None
    # whether the shards' ``ranked`` take ``floor=``: a score below which they may leave hits out
    floors: ClassVar[bool] = False

    @property
    def sources(self) -> list[str]:
        return sorted({shard.source for shard in self.shards})

    @property
    def languages(self) -> list[str]:
        """The stemming languages of the shards (a query is analyzed in each)."""
        return sorted({language for shard in self.shards for language in shard.languages}) or ["english"]

    def shard(self, name: str) -> SearchableShard:
        for shard in self.shards:
            if shard.name == name:
                return shard  # type: ignore[no-any-return]
        raise EpistemeError("INVALID_INPUT", f"no shard {name}", details={"shard": name})

    def terms(self, text: str) -> list[str]:
        """``text`` as the shards' analyzer makes query terms (stemmed in each of their languages)."""
        from episteme_core.text.analyzer import query_terms_for

        return query_terms_for(text, self.languages)

    def rank_options(self, terms: Sequence[str], shards: Sequence[Any]) -> dict[str, Any]:
        """Extra keyword arguments for each shard's ``ranked`` in one search (none here; the bm25
        indexer's set chooses numpy for all its shards at once)."""
        return {}

    def search(
        self, query: str | Sequence[str], k: int, filters: Filters | None = None, *,
        required: Sequence[str] = (), weights: Mapping[str, float] | None = None,
    ) -> tuple[list[Hit], int]:
        """The best ``k`` hits over every shard (``filters.source`` selects shards), each shard
        searched on its own and the hits merged by (-score, chunk id), and how many units matched;
        ``required`` terms must all be in a hit; ``weights`` (term -> factor, 1 when absent) scale
        each term's scores (``weighted_idf``). Where the shards take ``floor`` (``floors``), each
        is given the k-th best score of the shards before it: a hit below it cannot rank, so the
        shard need not build it (the hits and the total are the same)."""
        terms = self.terms(query) if isinstance(query, str) else sorted(set(query))
        sources = None if filters is None else filters.source
        searched = [shard for shard in self.shards if sources is None or shard.source in sources]
        options = self.rank_options(terms, searched)
        idf = weighted_idf(self.idf, terms, searched, weights)
        merged: list[Hit] = []
        total = 0
        best: list[float] = []  # the k best scores so far, a heap
        for shard in searched:
            if self.floors:
                options["floor"] = best[0] if k > 0 and len(best) >= k else None
            hits, count = shard.ranked(terms, k, filters, required=required, idf=idf, **options)
            merged.extend(hits)
            total += count
            if len(searched) == 1:
                continue  # no shard after it to give a floor
            for hit in hits:
                if len(best) < k:
                    heapq.heappush(best, hit.score)
                elif hit.score > best[0]:
                    heapq.heapreplace(best, hit.score)
        merged.sort(key=lambda hit: (-hit.score, hit.chunk_id))
        return merged[:k], total

    def idf(self, terms: Sequence[str], shards: Sequence[Any] | None = None) -> dict[str, float]:
        """Each term's BM25 idf over ``shards`` (default all) taken as one index: units and document
        frequencies summed. Scores rescaled to it compare across shards."""
        shards = self.shards if shards is None else shards
        units = sum(shard.units for shard in shards)
        return {term: bm25_idf(units, sum(shard.document_frequency(term) for shard in shards))
                for term in terms}

    def chunk(self, hit: Hit) -> Any:
        return self.shard(hit.shard).chunk(hit.chunk_id)
