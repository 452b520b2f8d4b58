"""Retrieval metrics for ``episteme eval``: hit, recall, precision, MRR and nDCG@10 with binary relevance.

``ranked`` is the answer's paragraphs in priority order (what the readers named first comes
first), ``expected`` the references a question file lists as relevant. Pure functions, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

NDCG_K = 10
METRICS = ("hit", "recall", "precision", "mrr", "ndcg10")


def hit(ranked: Sequence[str], expected: Sequence[str]) -> float:
    """1.0 when the answer holds an expected reference (or nothing is expected), else 0.0."""
    wanted = set(expected)
    return 1.0 if not wanted or wanted & set(ranked) else 0.0


def recall(ranked: Sequence[str], expected: Sequence[str]) -> float:
    """Share of the expected references that the answer holds (1.0 when nothing is expected)."""
    wanted = set(expected)
    if not wanted:
        return 1.0
    return len(wanted & set(ranked)) / len(wanted)


def precision(ranked: Sequence[str], expected: Sequence[str]) -> float:
    """Share of the answer that was expected (1.0 for an empty answer to an empty expectation)."""
    got = set(ranked)
    if not got:
        return 1.0 if not expected else 0.0
    return len(got & set(expected)) / len(got)


def mrr(ranked: Sequence[str], expected: Sequence[str]) -> float:
    """Reciprocal rank of the first expected reference, 0.0 when none is found."""
    wanted = set(expected)
    for rank, ref in enumerate(ranked, start=1):
        if ref in wanted:
            return 1.0 / rank
    return 0.0


def ndcg(ranked: Sequence[str], expected: Sequence[str], k: int = NDCG_K) -> float:
    """Normalised discounted cumulative gain at ``k`` (binary gains; each reference counted once)."""
    wanted = set(expected)
    if not wanted:
        return 1.0
    seen: set[str] = set()
    dcg = 0.0
    for rank, ref in enumerate(ranked[:k], start=1):
        if ref in wanted and ref not in seen:
            seen.add(ref)
            dcg += 1.0 / math.log2(rank + 1)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(k, len(wanted)) + 1))
    return dcg / ideal


def score(ranked: Sequence[str], expected: Sequence[str]) -> dict[str, float]:
    """All five metrics for one question, rounded to 6 places so reports are stable bytes."""
    return {
        "hit": hit(ranked, expected),
        "recall": round(recall(ranked, expected), 6),
        "precision": round(precision(ranked, expected), 6),
        "mrr": round(mrr(ranked, expected), 6),
        "ndcg10": round(ndcg(ranked, expected), 6),
    }


def mean(rows: Sequence[Mapping[str, float]], key: str) -> float:
    return round(sum(r[key] for r in rows) / len(rows), 6) if rows else 0.0
