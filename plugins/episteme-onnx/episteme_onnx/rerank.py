"""``rerank``: the onnx reader's rule for any list of passages, for ``query --rerank onnx``; and
``passage_similarities``, the one place a passage's cosine with a question is computed.

``rerank(question, passages, bm25_scores, model=DIR)`` returns one fused score per passage,
``(1 - weight) · bm25 / max(bm25) + weight · cosine(question, passage)`` (``weight`` 0.2 by default,
the weight measured for query's results), in the order given; the
caller sorts (ties by its own order, e.g. BM25's). It stores nothing and returns the same scores for
the same inputs and options; the loaded model is kept per process (``model.shared_embedder``), so
repeated calls pay one load. It raises ``LoadError`` when the model directory cannot be used,
``ValueError`` when the lists differ in length, ``DeadlineExceeded`` past ``deadline``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from episteme_onnx.defaults import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_MAX_TOKENS,
    DEFAULT_RERANK_WEIGHT,
    DEFAULT_THREADS,
    DEFAULT_WINDOWS,
)

if TYPE_CHECKING:
    from episteme_onnx.model import Embedder

BLANK_LINE = re.compile(r"\n\s*\n")


def windows_of(text: str, windows: str) -> list[str]:
    """What the model reads of one passage: its paragraphs (split at blank lines, as ``ask`` joins a
    run's paragraphs), or the passage whole (``"passage"``). Never empty."""
    if windows == "passage":
        return [text]
    parts = [part for part in BLANK_LINE.split(text) if part.strip()]
    return parts or [text]


def passage_similarities(embedder: Embedder, question: str, passages: Sequence[str], *, max_tokens: int,
                         batch_size: int, windows: str = DEFAULT_WINDOWS, query_prefix: str = "",
                         passage_prefix: str = "", deadline: float | None = None) -> list[float]:
    """The cosine of each passage with the question: the best of its windows' cosines, each window
    cut to ``max_tokens`` tokens. All windows of all passages go through the model in one ``embed``."""
    from episteme_onnx.model import cosines

    if not passages:
        return []
    texts: list[str] = []
    owners: list[int] = []
    for index, passage in enumerate(passages):
        for window in windows_of(passage, windows):
            texts.append(passage_prefix + window)
            owners.append(index)
    asked = embedder.embed([query_prefix + question], max_tokens=max_tokens, batch_size=1, deadline=deadline)
    found = cosines(asked[0], embedder.embed(texts, max_tokens=max_tokens, batch_size=batch_size,
                                             deadline=deadline))
    best = [-1.0] * len(passages)
    for owner, value in zip(owners, found, strict=True):
        best[owner] = max(best[owner], value)
    return best


def similarities(question: str, passages: Sequence[str], *, model: str, threads: int = DEFAULT_THREADS,
                 max_tokens: int = DEFAULT_MAX_TOKENS, batch_size: int = DEFAULT_BATCH_SIZE,
                 windows: str = DEFAULT_WINDOWS, query_prefix: str = "", passage_prefix: str = "",
                 deadline: float | None = None) -> list[float]:
    """``passage_similarities`` with the process's loaded model of directory ``model``."""
    from episteme_onnx.model import shared_embedder

    if not passages:
        return []
    return passage_similarities(shared_embedder(model, threads), question, passages, max_tokens=max_tokens,
                                batch_size=batch_size, windows=windows, query_prefix=query_prefix,
                                passage_prefix=passage_prefix, deadline=deadline)


def rerank(question: str, passages: list[str], bm25_scores: list[float], *, model: str,
           weight: float = DEFAULT_RERANK_WEIGHT, threads: int = DEFAULT_THREADS,
           max_tokens: int = DEFAULT_MAX_TOKENS, batch_size: int = DEFAULT_BATCH_SIZE,
           windows: str = DEFAULT_WINDOWS, query_prefix: str = "", passage_prefix: str = "",
           deadline: float | None = None) -> list[float]:
    """One fused score per passage (see the module docstring): higher is better."""
    from episteme_onnx.fusion import fused_scores

    if len(passages) != len(bm25_scores):
        raise ValueError(f"{len(passages)} passages for {len(bm25_scores)} BM25 scores")
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"weight must be between 0 and 1, got {weight:g}")
    found = similarities(question, passages, model=model, threads=threads, max_tokens=max_tokens,
                         batch_size=batch_size, windows=windows, query_prefix=query_prefix,
                         passage_prefix=passage_prefix, deadline=deadline)
    return fused_scores(bm25_scores, found, weight=weight)
