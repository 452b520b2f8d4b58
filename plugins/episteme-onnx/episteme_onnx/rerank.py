"""``rerank``: the onnx reader's rule for any list of passages, for ``query --rerank onnx``.

``rerank(question, passages, bm25_scores, model=DIR)`` returns one fused score per passage,
``(1 - weight) · bm25 / max(bm25) + weight · cosine(question, passage)``, in the order given; the
caller sorts (ties by its own order, e.g. BM25's). It stores nothing and returns the same scores for
the same inputs and options; the loaded model is kept per process (``model.shared_embedder``), so
repeated calls pay one load. It raises ``LoadError`` when the model directory cannot be used,
``ValueError`` when the lists differ in length, ``DeadlineExceeded`` past ``deadline``.
"""

from __future__ import annotations

from collections.abc import Sequence

from episteme_onnx.defaults import DEFAULT_BATCH_SIZE, DEFAULT_MAX_TOKENS, DEFAULT_THREADS, DEFAULT_WEIGHT


def similarities(question: str, passages: Sequence[str], *, model: str, threads: int = DEFAULT_THREADS,
                 max_tokens: int = DEFAULT_MAX_TOKENS, batch_size: int = DEFAULT_BATCH_SIZE,
                 query_prefix: str = "", passage_prefix: str = "",
                 deadline: float | None = None) -> list[float]:
    """The cosine of each passage's embedding with the question's (each text cut to ``max_tokens``)."""
    from episteme_onnx.model import cosines, shared_embedder

    if not passages:
        return []
    embedder = shared_embedder(model, threads)
    asked = embedder.embed([query_prefix + question], max_tokens=max_tokens, batch_size=1, deadline=deadline)
    vectors = embedder.embed([passage_prefix + p for p in passages], max_tokens=max_tokens,
                             batch_size=batch_size, deadline=deadline)
    return cosines(asked[0], vectors)


def rerank(question: str, passages: list[str], bm25_scores: list[float], *, model: str,
           weight: float = DEFAULT_WEIGHT, threads: int = DEFAULT_THREADS,
           max_tokens: int = DEFAULT_MAX_TOKENS, batch_size: int = DEFAULT_BATCH_SIZE,
           query_prefix: str = "", passage_prefix: str = "", deadline: float | None = None) -> list[float]:
    """One fused score per passage (see the module docstring): higher is better."""
    from episteme_onnx.fusion import fused_scores

    if len(passages) != len(bm25_scores):
        raise ValueError(f"{len(passages)} passages for {len(bm25_scores)} BM25 scores")
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"weight must be between 0 and 1, got {weight:g}")
    found = similarities(question, passages, model=model, threads=threads, max_tokens=max_tokens,
                         batch_size=batch_size, query_prefix=query_prefix, passage_prefix=passage_prefix,
                         deadline=deadline)
    return fused_scores(bm25_scores, found, weight=weight)
