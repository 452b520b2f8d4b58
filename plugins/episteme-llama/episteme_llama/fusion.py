"""The fusion rule of ``fuse`` mode: BM25 and the model's relevance mixed, never letting a model that
knows nothing move BM25's choice.

For one read (one shard's candidates):

1. Eligible candidates are those the bm25 reader would consider: BM25 score above ``min_score`` and
   at least ``score_ratio`` of the question's best score, and coverage (the IDF-weighted share of
   the question's terms a paragraph holds) at least ``ratio`` of the question's best coverage.
2. Each gets ``fused = (1 - weight) · bm25 / best_bm25 + weight · p_yes``: the BM25 score relative to
   the read's best (1 for the top) and the model's probability that the answer is "yes" (0..1, from
   its next-token log-probabilities of yes against no).
3. The ``top`` highest fused scores are named, ties broken by BM25 score, then reference.

When the model is uninformative (the same ``p_yes`` for every candidate) the fused order is BM25's
order and the reply is exactly the bm25 reader's. A candidate overtakes one with a higher BM25 score
only when the model's probabilities differ by more than ``(1 - weight) / weight`` times the BM25 gap;
at ``weight`` ≤ 0.5 the BM25 top result is overtaken only by a candidate the model prefers by more
than its whole BM25 shortfall. The probability is used as it is, not stretched per read: a model
that hesitates between 0.50 and 0.51 moves nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs


@attrs.frozen
class Fused:
    """One named candidate: its label, fused score, BM25 part and model part."""

    label: str
    fused: float
    bm25: float
    relevance: float


def eligible(request: Any, *, ratio: float, min_score: float, score_ratio: float) -> list[Any]:
    """The candidates the bm25 reader would consider, in its order: the kernel's own rule, asked
    for every candidate it would name, so fuse can name no worse."""
    from episteme_core.api import Bm25Reader, ReaderSpec

    bm25 = Bm25Reader(ReaderSpec(name="bm25", kind="bm25", options={
        "top": max(1, len(request.candidates)), "ratio": ratio, "min_score": min_score,
        "score_ratio": score_ratio}))
    named = set(bm25.read(request).labels)
    return [c for c in request.candidates if c.label in named]


def fuse(request: Any, relevance: Mapping[str, float], *, weight: float, top: int, ratio: float,
         min_score: float, score_ratio: float) -> list[Fused]:
    """The named candidates of ``request``, best first (see the module docstring for the rule).

    ``relevance`` maps a label to the model's yes-probability; a missing label counts as 0.5."""
    chosen = eligible(request, ratio=ratio, min_score=min_score, score_ratio=score_ratio)
    if not chosen:
        return []
    best = max(c.score for c in request.candidates) or 1.0
    rows = []
    for c in chosen:
        bm25 = c.score / best
        model = float(relevance.get(c.label, 0.5))
        rows.append((-((1.0 - weight) * bm25 + weight * model), -c.score, c.ref, c.label, bm25, model))
    rows.sort()
    return [Fused(label, -negative, bm25, model) for negative, _, _, label, bm25, model in rows[:top]]
