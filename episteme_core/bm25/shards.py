"""The bm25 indexer's shards: open the committed set (through ``search.opening``, from a home or an index
bundle), refuse another analyzer's, and rank chunks by BM25.

Scoring adds each query term's precomputed BM25 contributions (CSC postings of bm25s's lucene
scores) in float64, terms in sorted order, so every path gives the same scores to the bit. Small
queries are scored in plain Python over memory-mapped arrays (no numpy import: a cold ``episteme
query`` stays fast); when the postings of all the shards a query reads exceed ``NUMPY_POSTINGS`` (or
``NUMPY_LOADED_POSTINGS`` once numpy is imported, as in a server), numpy ranks over the same map
(scores, filters and the top k vectorised). A shard keeps the vocabulary lookups it made (a term's
postings, the probes of the binary search), so a query looks each term up once and a server's
queries share the top levels of the search.
"""

from __future__ import annotations

import heapq
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from episteme_core.bm25.shardfile import ShardFile
from episteme_core.errors import EpistemeError
from episteme_core.records.hits import Filters, Hit
from episteme_core.search.shardset import ShardSet, bm25_idf
from episteme_core.stages.shards import STAGE, STALE_HINT, StoredShard, check_current, check_indexer, stale
from episteme_core.text.analyzer import analyzer_id, analyzer_params, query_terms_for

if TYPE_CHECKING:
    from episteme_core.bm25.lucene import Collection
    from episteme_core.bm25.rows import RowInflater
    from episteme_core.stages.bundle import IndexBundle
    from episteme_core.store.home import Home

INDEXER = "bm25"
NUMPY_POSTINGS = 200_000
# a term's postings in one shard, how their scores are made: [start, stop), a factor on each score
# (None: 1), and (idf32, average length) when they are scored again under another collection
Span = tuple[int, int, "float | None", "tuple[float, float] | None"]
NUMPY_LOADED_POSTINGS = 100  # the threshold once numpy is imported (a server, a second query): measured
LOOKUPS_CACHED = 65_536  # vocabulary lookups a shard keeps (terms' postings, binary search probes)

__all__ = ["INDEXER", "NUMPY_LOADED_POSTINGS", "NUMPY_POSTINGS", "STAGE", "STALE_HINT", "Bm25ShardSet",
           "Filters", "Hit", "Shard", "ShardSet", "check_analyzer", "check_fresh", "numpy_pays",
           "open_bundle_shards", "open_shard", "open_shards"]


_DECODER: Any = None  # json's default decoder, made on the first row read


def numpy_pays(postings: int) -> bool:
    """Whether numpy should rank a query adding ``postings`` entries: when they are many, or more
    than a few once numpy is imported (a server, a process that ranked before); its import alone
    costs more than plain Python spends on small work. Both paths give the same results to the bit."""
    return postings > (NUMPY_LOADED_POSTINGS if "numpy" in sys.modules else NUMPY_POSTINGS)


@attrs.frozen
class ShardTicket:
    """How a Dask worker opens a bm25 shard itself (``Shard.travel``): its file (the same path on every
    worker), the sha256 of its header and its deleted rows, as the stage index records them."""

    path: str
    name: str
    source: str
    size: int
    header_sha256: str
    deleted: tuple[int, ...]

    def open(self) -> Shard:
        """The shard, memory-mapped and its header verified, in the process that calls it."""
        from pathlib import Path

        return Shard(Path(self.path), name=self.name, source=self.source, size=self.size,
                     header_sha256=self.header_sha256, deleted=self.deleted)


class Shard:
    """One frozen shard: chunks of one source, searchable, each chunk readable by id."""

    def __init__(self, path: Any, *, name: str, source: str, size: int, header_sha256: str,
                 deleted: Iterable[int] = (), data: memoryview | None = None) -> None:
        self.file = ShardFile(path, size=size, header_sha256=header_sha256, data=data)
        self.name = name
        self.source = source
        self.meta = self.file.meta
        if self.meta.get("name") != name or self.meta.get("source") != source:
            raise EpistemeError(
                "INVALID_INPUT", f"shard {path}: is not shard {name} of source {source}",
                details={"path": str(path)},
            )
        self.rows = int(self.meta["rows"])
        self.unit_count = int(self.meta.get("units", self.rows))  # every unit, deleted or not
        self.languages: list[str] = list(self.meta.get("languages") or ["english"])
        self.deleted = frozenset(deleted)
        self._runs = "unitStart" in self.file.arrays
        self.one_row_units = not self._runs  # every unit is one row, numbered as its row
        # a unit is left out when any chunk it holds is gone (a record's chunks go together)
        self.deleted_units = frozenset(
            unit for unit in range(self.unit_count) if not self.deleted.isdisjoint(self.unit_rows(unit))
        ) if self.deleted and self._runs else self.deleted
        self._deleted_sorted = sorted(self.deleted_units)
        # the live units and their tokens: what this shard adds to a query's collection (its idf and
        # average length); a shard built before lengths were stored has no tokens (None)
        self.units = self.unit_count - len(self.deleted_units)
        self._lengths: memoryview | None = None
        self._rescorable = "postingsTf" in self.file.arrays and "unitLengths" in self.file.arrays
        self.unit_tokens: int | None = int(self.meta["unitTokens"]) if self._rescorable else None
        self.tokens: int | None = self.unit_tokens
        if self.unit_tokens is not None and self._deleted_sorted:
            lengths = self.lengths()
            self.tokens = self.unit_tokens - sum(lengths[unit] for unit in self._deleted_sorted)
        self._terms = self.file.count("vocabOffsets") - 1
        self._postings_cache: tuple[tuple[str, ...], list[tuple[str, int, int]]] | None = None
        # Lookups a query repeats (a term's postings for its idf, then for its scores) and that
        # queries share (the top levels of every binary search over the vocabulary), bounded.
        self._span_cache: dict[str, tuple[int, int] | None] = {}
        self._probe_cache: dict[int, bytes] = {}
        self._id_cache: dict[str, int | None] = {}
        # the analysed words of each row's text (``bm25.words``): a shard of one language built with them
        self.words = "rowWords" in self.file.arrays and len(self.languages) == 1
        self.word_bytes = 4 if self.words and self.file.arrays["wordTerms"]["type"] == "u4" else 2
        # rows of a book's non-prose parts (contents, captions), which the rerank weighs less
        self.non_prose_rows = int(self.meta.get("nonProseRows", self.rows))
        # rows compressed against the shard's dictionary (``bm25.rows``, layouts 3 and 4), or as they are
        self._compressed_rows = "rowDict" in self.file.arrays
        self._inflater: RowInflater | None = None  # made on the first row read
        self._norm_cache: tuple[float, Any] | None = None  # (average, every unit's norm): numpy

    def travel(self) -> ShardTicket | None:
        """What a remote worker needs to open this shard from its file; None for a shard held in
        this process's memory (an index file's), which cannot travel that way."""
        import mmap
        import struct

        from episteme_core.bm25.shardfile import MAGIC, header_sha256

        mapped = getattr(self.file, "_map", None)
        if not isinstance(mapped, mmap.mmap):
            return None
        (length,) = struct.unpack_from("<Q", mapped, len(MAGIC))
        return ShardTicket(str(self.file.path), self.name, self.source, len(mapped),
                           header_sha256(mapped[: len(MAGIC) + 8 + length]), tuple(sorted(self.deleted)))

    def lengths(self) -> memoryview:
        """Every unit's length in tokens (the shard's ``unitLengths``, read once)."""
        if self._lengths is None:
            self._lengths = self.file.slice("unitLengths", 0, self.unit_count)
        return self._lengths

    def unit_rows(self, unit: int) -> list[int]:
        """The rows (chunks) of scored unit ``unit``, in reading order."""
        if not self._runs:
            return [unit]
        lo, hi = self.file.slice("unitStart", unit, unit + 2)
        rows = list(self.file.slice("unitRows", int(lo), int(hi)))
        if any(row >= self.rows for row in rows):
            self.file._fail(f"unit {unit} names a row past {self.rows}")
        return rows

    def document_frequency(self, term: str) -> int:
        """How many live scored units hold ``term`` (0 when the vocabulary lacks it): a deleted unit
        counts for no statistic, as in a fresh build without it."""
        span = self.term_span(term)
        return 0 if span is None else span[1] - span[0] - self._deleted_in(span[0], span[1])

    def _deleted_in(self, start: int, stop: int) -> int:
        """How many of postings ``[start, stop)`` (one term's, units ascending) are in deleted units."""
        gone = self._deleted_sorted
        if not gone or stop <= start:
            return 0
        import bisect

        units = self.file.slice("postingsRows", start, stop)
        if len(gone) * 16 < stop - start:  # few deleted units: look each one up
            found = 0
            for unit in gone:
                at = bisect.bisect_left(units, unit)
                found += at < len(units) and units[at] == unit
            return found
        deleted = self.deleted_units
        return sum(1 for unit in units if unit in deleted)

    # vocabulary -----------------------------------------------------------

    def term_span(self, term: str) -> tuple[int, int] | None:
        """``[start, stop)`` of ``term``'s postings, or None when the vocabulary lacks it (cached)."""
        cache = self._span_cache
        if term in cache:
            return cache[term]
        tid = self.known_term(term)
        span = None
        if tid is not None:
            start, stop = self.file.slice("postingsStart", tid, tid + 2)
            span = (int(start), int(stop))
        if len(cache) >= LOOKUPS_CACHED:
            cache.clear()
        cache[term] = span
        return span

    def _term(self, index: int) -> bytes:
        found = self._probe_cache.get(index)
        if found is None:
            lo, hi = self.file.slice("vocabOffsets", index, index + 2)
            found = self.file.raw("vocabBytes", lo, hi)
            if len(self._probe_cache) >= LOOKUPS_CACHED:
                self._probe_cache.clear()
            self._probe_cache[index] = found
        return found

    def known_term(self, term: str) -> int | None:
        """``term_id``, cached: a query looks its terms up for their postings, then for its rerank."""
        cache = self._id_cache
        if term in cache:
            return cache[term]
        tid = self.term_id(term)
        if len(cache) >= LOOKUPS_CACHED:
            cache.clear()
        cache[term] = tid
        return tid

    def term_id(self, term: str) -> int | None:
        """The id of ``term`` in the sorted vocabulary (binary search over the map), or None."""
        key = term.encode("utf-8")
        lo, hi = 0, self._terms
        while lo < hi:
            mid = (lo + hi) // 2
            if self._term(mid) < key:
                lo = mid + 1
            else:
                hi = mid
        return lo if lo < self._terms and self._term(lo) == key else None

    # rows -------------------------------------------------------------------

    def chunk_id(self, row: int) -> str:
        return self.file.raw("ids", 32 * row, 32 * row + 32).hex()

    def row_of(self, chunk_id: str) -> int | None:
        try:
            key = bytes.fromhex(chunk_id)
        except ValueError:
            return None
        lo, hi = 0, self.rows
        while lo < hi:
            mid = (lo + hi) // 2
            if self.file.raw("ids", 32 * mid, 32 * mid + 32) < key:
                lo = mid + 1
            else:
                hi = mid
        if lo < self.rows and self.file.raw("ids", 32 * lo, 32 * lo + 32) == key:
            return lo
        return None

    def row_words(self, row: int) -> tuple[bytes, int, bool]:
        """Row ``row``'s analysed text (``bm25.words``; only where ``words``): the vocabulary id of
        each word's term (little-endian, ``word_bytes`` each), the text's length in characters, and
        whether it is a non-prose part."""
        start, info, stop = self.file.values("rowWords", 2 * row, 2 * row + 3)
        return self.file.raw("wordTerms", start, stop), info >> 1, bool(info & 1)

    def row_json(self, row: int) -> dict[str, Any]:
        """Row ``row``'s stored chunk JSON, parsed (as ``json.loads`` parses UTF-8 bytes)."""
        from json.decoder import JSONDecoder

        global _DECODER
        if _DECODER is None:
            _DECODER = JSONDecoder()
        lo, hi = self.file.slice("rowOffsets", row, row + 2)
        stored = self.file.raw("rowBytes", lo, hi)
        if self._compressed_rows:
            stored = self._inflated(stored, row)
        data = _DECODER.decode(stored.decode("utf-8", "surrogatepass"))
        if not isinstance(data, dict):
            raise EpistemeError("INVALID_INPUT", f"shard {self.file.path}: row {row} is not a chunk")
        return data

    def _inflated(self, stored: bytes, row: int) -> bytes:
        """Row ``row``'s JSON bytes from its compressed ``stored`` bytes (``bm25.rows``: Zstandard,
        or a layout-3 shard's deflate)."""
        from episteme_core.bm25.rows import RowError

        if self._inflater is None:
            from episteme_core.bm25.rows import RowInflater

            self._inflater = RowInflater(self.file.raw("rowDict", 0, self.file.count("rowDict")),
                                         int(self.meta.get("layout", 1)))
        try:
            return self._inflater.inflate(stored)
        except RowError as error:
            return self.file._fail(f"row {row} does not inflate ({error})")  # type: ignore[no-any-return]

    def chunk(self, chunk_id: str) -> Any:
        """The Chunk record ``chunk_id`` (``INVALID_INPUT`` if this shard does not hold it)."""
        from episteme_core.records.evidence import chunk_from_json

        row = self.row_of(chunk_id)
        if row is None or row in self.deleted:
            raise EpistemeError(
                "INVALID_INPUT", f"shard {self.name} holds no chunk {chunk_id}",
                details={"shard": self.name, "chunk": chunk_id},
            )
        return chunk_from_json(self.row_json(row), source=f"shard {self.name} row {row}")

    # search -----------------------------------------------------------------

    def row_filter(self, filters: Filters | None) -> Any:
        """A predicate on rows (chunks) for the facet and time filters, deleted rows refused; None
        when no row can match."""
        filters = filters or Filters()
        checks: list[tuple[memoryview, int]] = []
        facets = self.meta["facets"]
        for field, value in filters.facet_values().items():
            table = facets.get(field, [])
            if value not in table:
                return None
            checks.append((self.file.slice(f"facet.{field}", 0, self.rows), table.index(value)))
        times = None
        since = math.nan
        if filters.since is not None:
            from episteme_core.records.hits import epoch_seconds

            since = epoch_seconds(filters.since)
            times = self.file.slice("times", 0, self.rows)
        deleted = self.deleted

        def allowed(row: int) -> bool:
            if row in deleted:
                return False
            for column, code in checks:
                if column[row] != code:
                    return False
            return times is None or times[row] >= since

        return allowed

    def _allowed(self, filters: Filters) -> Any:
        """A predicate on units: not deleted, and one of its chunks passes the filters; None when
        nothing can match."""
        row_ok = self.row_filter(filters)
        if row_ok is None:
            return None
        if not self._runs:
            return row_ok
        deleted = self.deleted_units
        if not filters.facet_values() and filters.since is None:
            return lambda unit: unit not in deleted
        return lambda unit: unit not in deleted and any(map(row_ok, self.unit_rows(unit)))

    def shown_rows(self, hit: Hit, filters: Filters | None = None) -> list[int]:
        """The rows of a hit's unit that its passage shows: those that pass the filters."""
        rows = self.unit_rows(hit.unit) if hit.unit >= 0 else [hit.row]
        if not self.deleted and (filters is None or (filters.since is None and not filters.facet_values())):
            return rows  # every row passes
        row_ok = self.row_filter(filters)
        shown = [row for row in rows if row_ok is not None and row_ok(row)]
        return shown or rows[:1]

    def postings(self, terms: Sequence[str]) -> list[tuple[int, int]]:
        """``[start, stop)`` of each known term's postings, terms in sorted order (cached for the
        last terms asked: ``ShardSet.search`` sizes the work before it scores)."""
        return [(start, stop) for _, start, stop in self.term_postings(terms)]

    def term_postings(self, terms: Sequence[str]) -> list[tuple[str, int, int]]:
        """``(term, start, stop)`` of each known term's postings, terms in sorted order (cached)."""
        key = tuple(sorted(set(terms)))
        cached = self._postings_cache  # read once: another thread may replace it
        if cached is not None and cached[0] == key:
            return cached[1]
        spans = self._spans(key)
        self._postings_cache = (key, spans)
        return spans

    def _spans(self, terms: Sequence[str]) -> list[tuple[str, int, int]]:
        spans: list[tuple[str, int, int]] = []
        for term in terms:
            span = self.term_span(term)
            if span is not None and span[1] > span[0]:
                spans.append((term, span[0], span[1]))
        return spans

    def idf(self, term: str) -> float:
        """BM25's idf of ``term`` in this shard (as the stored scores hold it: every unit counted)."""
        span = self.term_span(term)
        return bm25_idf(self.unit_count, 0 if span is None else span[1] - span[0])

    def ranked(
        self, terms: Sequence[str], k: int, filters: Filters | None = None, *, vectorized: bool | None = None,
        required: Sequence[str] = (), idf: Mapping[str, float] | None = None, floor: float | None = None,
        collection: Collection | None = None,
    ) -> tuple[list[Hit], int]:
        """The best ``k`` hits for ``terms`` (analyzed, sorted) and how many units matched in all.

        ``required`` terms must all be in a unit for it to match. ``idf`` (term -> idf over several
        shards) rescales each term's stored scores from this shard's idf to that one, so scores of
        different shards compare as if they were one index. ``vectorized`` chooses numpy over plain
        Python (same scores and order to the bit); by default numpy is used when the postings to add
        exceed ``NUMPY_POSTINGS`` (``numpy_pays``). ``floor`` leaves out hits scoring below it (the
        k-th best score other shards already gave: such a hit cannot rank), so only the hits that
        may rank read their chunk ids; the total still counts every match. ``collection`` holds the
        statistics of every shard searched (``Bm25ShardSet.rank_options``; default this shard's live
        units): where they differ from those the shard's scores were stored with, its pairs are scored
        again with them (``lucene``), so a score does not depend on how units were cut into shards.
        """
        filters = filters or Filters()
        if filters.source is not None and self.source not in filters.source:
            return [], 0
        allowed = self._allowed(filters)
        if allowed is None:
            return [], 0
        spans = self._scaled(self.term_postings(terms), idf, collection)
        if not spans:
            return [], 0
        need = sorted(set(required))
        needed = [(start, stop) for _, start, stop in self._spans(need)] if need else []
        if len(needed) < len(need):  # a required term no unit holds
            return [], 0
        if vectorized is None:
            vectorized = numpy_pays(sum(span[1] - span[0] for span in spans))
        if vectorized:
            return self._ranked_numpy(spans, k, filters, needed, floor)
        acc = self._score_python(spans)
        if needed:
            counts: dict[int, int] = {}
            for start, stop in needed:
                for unit in self.file.slice("postingsRows", start, stop):
                    counts[unit] = counts.get(unit, 0) + 1
            acc = {unit: score for unit, score in acc.items() if counts.get(unit, 0) == len(needed)}
        if not self.deleted_units and not filters.facet_values() and filters.since is None:
            matches = acc  # every unit passes
        else:
            matches = {unit: score for unit, score in acc.items() if allowed(unit)}
        total = len(matches)
        if k <= 0 or not matches:
            return [], total
        # the k-th best score (floats compared in C), then the units at or above it, by (-score, unit)
        least = heapq.nlargest(k, matches.values())[-1]
        if floor is not None and floor > least:
            least = floor
        best = sorted(((-score, unit) for unit, score in matches.items() if score >= least))[:k]
        return self._hits([-negative for negative, _ in best], [unit for _, unit in best]), total

    def _scaled(self, spans: list[tuple[str, int, int]], idf: Mapping[str, float] | None,
                collection: Collection | None = None) -> list[Span]:
        """Each span with how its scores are made: as stored, or scored again under ``collection``
        (where its units, tokens or the term's frequency differ from the shard's own), and the factor
        that turns that idf into ``idf[term]`` (a weight, or another idf; None: 1)."""
        from episteme_core.bm25 import lucene

        out: list[Span] = []
        for term, start, stop in spans:
            stored_df = stop - start
            if collection is None:
                units, tokens, df = self.units, self.tokens, stored_df - self._deleted_in(start, stop)
                kind_units, kind_tokens = units, tokens
            else:
                units = collection.units
                given = collection.df.get(term)
                df = stored_df - self._deleted_in(start, stop) if given is None else given
                kind_units, kind_tokens = collection.lengths.get(self.source, (units, collection.tokens))
            again = None
            if (self._rescorable and kind_tokens is not None and units > 0 and kind_units > 0
                    and (units, df, kind_units, kind_tokens)
                    != (self.unit_count, stored_df, self.unit_count, self.unit_tokens)):
                base = lucene.idf(units, df)
                again = (lucene.idf32(units, df), kind_tokens / kind_units)
            else:
                base = bm25_idf(self.unit_count, stored_df)
            factor = None
            if idf is not None and term in idf and base > 0 and idf[term] != base:
                factor = idf[term] / base
            out.append((start, stop, factor, again))
        return out

    def _hits(self, scores: list[float], units: list[int]) -> list[Hit]:
        """The hits of ``units`` scoring ``scores``: each names its unit's first row and chunk."""
        name = self.name
        rows = [self.unit_rows(unit)[0] for unit in units] if self._runs else units
        ids = self.file.records("ids", rows, 32)
        return [Hit(score, chunk.hex(), row, name, unit)
                for score, chunk, row, unit in zip(scores, ids, rows, units, strict=True)]

    def _pair_scores(self, start: int, stop: int, again: tuple[float, float] | None) -> Any:
        """The float32 scores of postings ``[start, stop)``: as stored, or scored again with (idf32,
        average length) ``again``."""
        if again is None:
            return self.file.slice("postingsData", start, stop)
        from episteme_core.bm25 import lucene

        return lucene.scores_python(self.file.slice("postingsTf", start, stop), self.lengths(),
                                    self.file.slice("postingsRows", start, stop), again[0], again[1],
                                    self.meta["bm25"])

    def _pair_scores_numpy(self, start: int, stop: int, rows: Any, again: tuple[float, float] | None) -> Any:
        """``_pair_scores`` as a float32 numpy array (``rows``: the postings' units): the stored scores
        (a view of the map), or those scored again."""
        import numpy as np

        if again is None:
            return self.file.numpy("postingsData", start, stop)
        from episteme_core.bm25 import lucene

        norms = self._norms(again[1])
        tf = self.file.numpy("postingsTf", start, stop)
        return lucene.scores_numpy(tf, norms.take(rows), np.float32(again[0]))

    def _norms(self, average: float) -> Any:
        """Every unit's length normalisation at ``average`` (kept for the last average asked)."""
        cached = self._norm_cache
        if cached is not None and cached[0] == average:
            return cached[1]
        import numpy as np

        from episteme_core.bm25 import lucene

        norms = lucene.norms_numpy(np.asarray(self.lengths(), dtype=np.int64), average, self.meta["bm25"])
        self._norm_cache = (average, norms)
        return norms

    def _ranked_numpy(self, spans: list[Span], k: int, filters: Filters,
                      needed: Sequence[tuple[int, int]] = (),
                      floor: float | None = None) -> tuple[list[Hit], int]:
        """``ranked`` in numpy: scores, filters and the top k by (-score, unit) without a Python loop
        over matches (units are sorted by their first chunk's id)."""
        import numpy as np

        plain = not (needed or self.deleted or filters.facet_values() or filters.since is not None)
        if plain and len(spans) == 1:  # one term, no filter: its postings are the matches, in unit order
            found, values = self._one_term(spans[0])
            return self._top(found, values, k, floor)
        scores, touched = self._score_arrays(spans)
        mask = touched
        if needed:
            counts = np.zeros(self.unit_count, dtype=np.int64)
            for start, stop in needed:
                counts[self.file.numpy("postingsRows", start, stop)] += 1
            mask &= counts == len(needed)
        facets = self.meta["facets"]
        rows_ok = None
        wanted = filters.facet_values()
        if self.deleted or wanted or filters.since is not None:
            rows_ok = np.ones(self.rows, dtype=bool)
            if self.deleted:
                rows_ok[np.fromiter(self.deleted, dtype=np.int64, count=len(self.deleted))] = False
            for field, value in wanted.items():
                rows_ok &= self.file.numpy(f"facet.{field}", 0, self.rows) == facets[field].index(value)
            if filters.since is not None:
                from episteme_core.records.hits import epoch_seconds

                rows_ok &= self.file.numpy("times", 0, self.rows) >= epoch_seconds(filters.since)
        if rows_ok is not None and self._runs:
            members = self.file.numpy("unitRows", 0, self.file.count("unitRows")).astype(np.int64)
            starts = self.file.numpy("unitStart", 0, self.unit_count).astype(np.int64)
            if members.size and int(members.max()) >= self.rows:
                self.file._fail(f"a unit names a row past {self.rows}")
            mask &= np.add.reduceat(rows_ok[members].astype(np.int64), starts) > 0
            if self.deleted_units:
                mask[np.fromiter(self.deleted_units, dtype=np.int64, count=len(self.deleted_units))] = False
        elif rows_ok is not None:
            mask &= rows_ok
        found = np.flatnonzero(mask)
        return self._top(found, scores[found], k, floor)

    def _one_term(self, span: Span) -> tuple[Any, Any]:
        """The units holding one term and their scores, as ``_score_arrays`` would give them (float64,
        the factor applied, added to 0.0), without arrays the size of every unit."""
        import numpy as np

        start, stop, factor, again = span
        rows = self._posting_units(start, stop)
        values = self._pair_scores_numpy(start, stop, rows, again).astype(np.float64)
        return rows, (values if factor is None else values * factor) + 0.0

    def _posting_units(self, start: int, stop: int) -> Any:
        """The units of postings ``[start, stop)`` (one term's, ascending as the builder writes them
        and the block hashes hold them: the last is the largest)."""
        rows = self.file.numpy("postingsRows", start, stop)
        if rows.size and int(rows[-1]) >= self.unit_count:
            self.file._fail(f"posting names a unit past {self.unit_count}")
        return rows

    def _top(self, found: Any, values: Any, k: int, floor: float | None) -> tuple[list[Hit], int]:
        """The best ``k`` of the matching units ``found`` (ascending) scoring ``values``, by (-score,
        unit), and how many matched; ``floor``: as ``ranked`` takes it."""
        import numpy as np

        total = int(found.size)
        if k <= 0 or total == 0:
            return [], total
        if floor is not None:  # hits below the k-th best of other shards cannot rank
            keep = values >= floor
            found, values = found[keep], values[keep]
            if found.size == 0:
                return [], total
        if found.size > k:  # keep the rows scoring at least the k-th best (ties included), then order them
            keep = values >= np.partition(values, found.size - k)[found.size - k]
            found, values = found[keep], values[keep]
        order = np.lexsort((found, -values))[:k]
        return self._hits(values[order].tolist(), found[order].tolist()), total

    def _score_python(self, spans: list[Span]) -> dict[int, float]:
        acc: dict[int, float] = {}
        get = acc.get
        for start, stop, factor, again in spans:
            rows = self.file.slice("postingsRows", start, stop)
            data = self._pair_scores(start, stop, again)
            if factor is None:
                for row, value in zip(rows, data, strict=True):
                    acc[row] = get(row, 0.0) + value
            else:
                for row, value in zip(rows, data, strict=True):
                    acc[row] = get(row, 0.0) + value * factor
        if acc and max(acc) >= self.unit_count:
            self.file._fail(f"posting names unit {max(acc)} of {self.unit_count}")
        return acc

    def _score_arrays(self, spans: list[Span]) -> tuple[Any, Any]:
        """Per-unit scores (float64, terms added in order) and which units any term touched."""
        import numpy as np

        scores = np.zeros(self.unit_count, dtype=np.float64)
        touched = np.zeros(self.unit_count, dtype=bool)
        for start, stop, factor, again in spans:
            rows = self._posting_units(start, stop)
            values = self._pair_scores_numpy(start, stop, rows, again)  # float32: added as float64
            scores[rows] += values if factor is None else values.astype(np.float64) * factor
            touched[rows] = True
        return scores, touched

    def passages(self, question: str, k: int, filters: Filters | None = None, *,
                 idf: Mapping[str, float] | None = None,
                 collection: Collection | None = None) -> list[tuple[float, list[str]]]:
        """The best ``k`` units for ``question`` as (score, chunk ids in reading order); a run's
        chunks that fail the filters are left out (what ``ask`` offers its readers)."""
        hits, _ = self.ranked(query_terms_for(question, self.languages), k, filters, idf=idf,
                              collection=collection)
        return [(hit.score, [self.chunk_id(row) for row in self.shown_rows(hit, filters)]) for hit in hits]

    def search(self, query: str, k: int = 10, filters: Filters | None = None) -> list[tuple[str, float]]:
        """``(chunk id, score)`` of the best ``k`` units for ``query``, sorted (-score, chunk id); a run
        is named by its first chunk (``ranked`` and ``unit_rows`` give all its chunks)."""
        hits, _ = self.ranked(query_terms_for(query, self.languages), k, filters)
        return [(hit.chunk_id, hit.score) for hit in hits]


class Bm25ShardSet(ShardSet):
    """The bm25 indexer's open shards: one search chooses numpy for all of them at once, when the
    postings the query adds over every shard it reads are many (numpy's import costs more than
    small work)."""

    floors = True  # its shards' ranked take floor= (search passes the k-th best score so far)

    def keep_warm(self) -> None:
        """Import numpy now, once, for a holder that answers many queries (the server): from then on
        a query adding more than ``NUMPY_LOADED_POSTINGS`` postings ranks in numpy, which at 20,000
        chunks halves a common query's ranking; a one-query process never pays the import."""
        try:
            import numpy  # noqa: F401
        except ImportError:  # pragma: no cover - numpy comes with bm25s
            pass

    def rank_options(self, terms: Sequence[str], shards: Sequence[Any]) -> dict[str, Any]:
        """numpy or not for all the shards at once, and the ``collection`` they are scored against:
        their live units, tokens and each term's document frequency, summed (a search over shards
        cut one way scores as one over the same units cut another)."""
        postings = sum(stop - start for shard in shards for start, stop in shard.postings(terms))
        return {"vectorized": numpy_pays(postings), "collection": collection_of(terms, shards)}


def collection_of(terms: Sequence[str], shards: Sequence[Any]) -> Collection:
    """The statistics of ``shards`` taken as one index, for ``terms``: live units, their tokens
    (None when a shard does not record its lengths), each term's live document frequency, and the
    live units and tokens of each kind of source (the average length a unit is normalised by)."""
    from episteme_core.bm25.lucene import Collection

    def summed(group: Sequence[Any]) -> tuple[int, int | None]:
        tokens = [getattr(shard, "tokens", None) for shard in group]
        total = None if any(t is None for t in tokens) else sum(t for t in tokens if t is not None)
        return sum(shard.units for shard in group), total

    units, tokens = summed(shards)
    kinds = sorted({str(shard.source) for shard in shards})
    return Collection(
        units=units, tokens=tokens,
        df={term: sum(shard.document_frequency(term) for shard in shards) for term in sorted(set(terms))},
        lengths={kind: summed([s for s in shards if str(s.source) == kind]) for kind in kinds},
    )


def check_analyzer(meta: Mapping[str, Any]) -> None:
    """Refuse (``STALE_INDEX``) shards built by another analyzer (name and version)."""
    built, current = analyzer_id(meta.get("analyzer")), analyzer_id(analyzer_params())
    if built != current:
        raise stale(
            f"the shards were built by analyzer {built}; this episteme uses {current}: rebuild them with "
            "episteme index",
            analyzer=built, expected=current,
        )


def check_fresh(home: Home, meta: dict[str, Any]) -> None:
    """Refuse (``STALE_INDEX``) shards of another indexer or analyzer, of other chunks, or older than
    a capture (whether or not a writer is at work: ``open_shards`` answers from the last commit then)."""
    check_indexer(meta, INDEXER)
    check_analyzer(meta)
    check_current(home, meta)


def open_shard(stored: StoredShard) -> Shard:
    """One committed shard, memory-mapped from its file (or over a bundle's bytes)."""
    return Shard(stored.path or stored.where, name=stored.name, source=stored.source, size=stored.entry.bytes,
                 header_sha256=stored.info["headerSha256"], deleted=stored.info.get("deleted") or (),
                 data=stored.data)


def open_shards(home: Home, *, check: bool = True) -> Bm25ShardSet:
    """The home's committed shards; missing or stale shards are ``STALE_INDEX`` ("run episteme index"),
    except that while a writer is at work the last commit is answered from (``in_flight``)."""
    from episteme_core.search.opening import open_committed

    return open_committed(home, INDEXER, open_shard, check=check_analyzer if check else None, fresh=check,
                          set_type=Bm25ShardSet)


def open_bundle_shards(bundle: IndexBundle) -> Bm25ShardSet:
    """The shards of an index bundle (``episteme index --out``)."""
    from episteme_core.search.opening import open_bundle

    return open_bundle(bundle, INDEXER, open_shard, check=check_analyzer, set_type=Bm25ShardSet)
