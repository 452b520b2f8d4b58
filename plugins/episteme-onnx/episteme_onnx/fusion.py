"""The fusion rule: BM25 and the model's cosine mixed per question, so that a model that knows
nothing leaves BM25's choice as it is.

For one read (one shard's candidates):

1. Eligible candidates are those the bm25 reader would name (BM25 score above ``min_score`` and at
   least ``score_ratio`` of the question's best, coverage at least ``ratio`` of the question's
   best): the kernel's own rule, asked for all of them.
2. Each gets ``fused = (1 - weight) · bm25 / best_bm25 + weight · cosine``: its BM25 score relative
   to the read's best (1 for the top) and the cosine of its embedding with the question's (-1..1).
3. The ``top`` highest fused scores are named; ties by BM25 score, then reference, then the order
   offered (never by anything that varies between runs, such as a set's or a dict's hash order).

When every cosine is the same (constant embeddings, or a model that sees every text alike) the
fused order is BM25's and the reply names exactly what the bm25 reader names. A candidate
overtakes one with a higher BM25 score only when its cosine is higher by more than
``(1 - weight) / weight`` times the BM25 gap (relative to the best): at the default weight 0.15,
5.7 times. Pure functions of their inputs: no model here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from episteme_core.api import Bm25Reader, Candidate, ReaderSpec, ReadRequest


@attrs.frozen
class Fused:
    """One named candidate: its label, fused score, BM25 part (relative) and cosine."""

    label: str
    fused: float
    bm25: float
    cosine: float


def eligible(request: ReadRequest, *, ratio: float, min_score: float, score_ratio: float) -> list[Candidate]:
    """The candidates the bm25 reader would name, in the request's order: only these are embedded,
    and fusion reorders them, so the onnx reader names no candidate bm25 would have left out."""
    bm25 = Bm25Reader(ReaderSpec(name="bm25", kind="bm25", options={
        "top": max(1, len(request.candidates)), "ratio": ratio, "min_score": min_score,
        "score_ratio": score_ratio}))
    named = set(bm25.read(request).labels)
    return [c for c in request.candidates if c.label in named]


def fused_scores(bm25_scores: Sequence[float], similarities: Sequence[float], *, weight: float,
                 best: float | None = None) -> list[float]:
    """``(1 - weight) · s / best + weight · cosine`` for each pair; ``best`` defaults to the largest
    BM25 score (a best of 0 or less counts as 1, so no score is divided by zero)."""
    if len(bm25_scores) != len(similarities):
        raise ValueError(f"{len(bm25_scores)} BM25 scores for {len(similarities)} similarities")
    top = max(bm25_scores, default=0.0) if best is None else best
    scale = top if top > 0 else 1.0
    return [(1.0 - weight) * (s / scale) + weight * c for s, c in zip(bm25_scores, similarities, strict=True)]


def fuse(request: ReadRequest, similarity: Mapping[str, float], *, weight: float, top: int, ratio: float,
         min_score: float, score_ratio: float) -> list[Fused]:
    """The named candidates of ``request``, best first (see the module docstring for the rule).

    ``similarity`` maps a label to its cosine with the question; a missing label counts as 0."""
    chosen = eligible(request, ratio=ratio, min_score=min_score, score_ratio=score_ratio)
    if not chosen:
        return []
    best = max(c.score for c in request.candidates)
    cosines = [float(similarity.get(c.label, 0.0)) for c in chosen]
    scores = fused_scores([c.score for c in chosen], cosines, weight=weight, best=best)
    scale = best if best > 0 else 1.0
    order = sorted(range(len(chosen)), key=lambda i: (-scores[i], -chosen[i].score, chosen[i].ref, i))
    return [Fused(chosen[i].label, scores[i], chosen[i].score / scale, cosines[i]) for i in order[:top]]
