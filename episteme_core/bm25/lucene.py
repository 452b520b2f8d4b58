"""BM25's lucene score of one (term, unit) pair, the one formula the shard builder and the ranker share.

A shard stores each pair's score under the shard's own statistics; a query over shards whose
collection (live units, their tokens, a term's live document frequency) differs from a shard's own
scores that shard's pairs again from their term counts and unit lengths, with these same operations
on the same float64 values, so a score never depends on how the units were cut into shards. Light:
numpy is imported only by the functions over arrays.
"""

from __future__ import annotations

import array
import math
from collections.abc import Mapping, Sequence
from typing import Any

import attrs


def idf(units: int, df: int) -> float:
    """BM25's (lucene) idf, float64, of a term held by ``df`` of ``units`` scored units."""
    return math.log(1 + (units - df + 0.5) / (df + 0.5))


def idf32(units: int, df: int) -> float:
    """``idf`` rounded to float32 (as bm25s stores it, and every stored score is made with)."""
    return array.array("f", (idf(units, df),))[0]


def scores_python(tfs: Sequence[int], lengths: Sequence[int], rows: Sequence[int], term_idf32: float,
                  average: float, params: Mapping[str, Any]) -> array.array[float]:
    """The float32 scores of one term's pairs (``tfs[i]`` times in unit ``rows[i]`` of ``lengths[rows[i]]``
    tokens), in plain Python: ``tf / (norm + tf) * idf32`` in float64 with the unit's norm ``k1 * ((1
    - b) + b * length / average)``, rounded to float32, as ``norms_numpy`` and ``scores_numpy``
    compute them. ``average`` is tokens / units: numpy's mean of the lengths, their sum being exact.
    Only the pairs' own units are normalised: a query of a few postings in a shard of many units
    does not pay for every unit's norm."""
    k1, b = params["k1"], params["b"]
    rest = 1 - b
    return array.array("f", [tf / (k1 * (rest + b * lengths[row] / average) + tf) * term_idf32
                             for row, tf in zip(rows, tfs, strict=True)])


def norms_numpy(lengths: Any, average: float, params: Mapping[str, Any]) -> Any:
    """``k1 * ((1 - b) + b * length / average)`` of every unit (an int array of lengths), float64,
    with numpy (the norms ``scores_python`` computes for its pairs' units)."""
    import numpy as np

    k1, b = params["k1"], params["b"]
    return k1 * ((1 - b) + b * np.asarray(lengths).astype(np.float64) / average)


def scores_numpy(tf: Any, norms: Any, term_idf32: Any) -> Any:
    """Float32 scores of pairs with counts ``tf`` (any integer type) in units of norms ``norms`` (one
    per pair, float64: a fresh array, ``norm[rows]``, which this computes in and so overwrites) and
    idf ``term_idf32`` (a float32 scalar or one per pair): ``tf / (norm + tf) * idf32`` in float64."""
    import numpy as np

    part = norms
    part += tf
    np.divide(tf, part, out=part)
    part *= term_idf32
    return part.astype(np.float32)


@attrs.frozen
class Collection:
    """The statistics a query scores against: the live units of the shards it searches, their tokens
    (length), and each query term's live document frequency. ``tokens`` is None when a shard does
    not record its units' lengths (built before they were stored).

    ``lengths`` holds the live units and tokens of each kind of source (a shard's ``source``: files,
    books, claude, ...): a unit's length is normalised against the average of its own kind (a chat
    turn is not a spec section), the idf against every unit. Both are sums over the shards, so they
    do not depend on how a kind's units were cut into shards."""

    units: int
    tokens: int | None
    df: Mapping[str, int]
    lengths: Mapping[str, tuple[int, int | None]] = attrs.field(factory=dict)
