"""The numpy BM25 scorer gives bm25s's own CSC arrays bit for bit (the shard's ``bm25s`` meta claims it)."""

from __future__ import annotations

import random

import pytest

from episteme_core.bm25.build import BM25S_COMPATIBLE, bm25_matrix, bm25_scores
from episteme_core.bm25.fields import document_tokens
from episteme_core.text.analyzer import vocabulary


def _bm25s_arrays(
    token_lists: list[list[str]], vocab: list[str], k1: float, b: float
) -> tuple[bytes, bytes, bytes]:
    """What bm25s itself builds over our sorted vocabulary (its numpy backend)."""
    import bm25s
    import numpy as np

    ids = {term: i for i, term in enumerate(vocab)}
    corpus = [[ids[t] for t in tokens] for tokens in token_lists]
    retriever = bm25s.BM25(k1=k1, b=b, method="lucene", backend="numpy", csc_backend="numpy")
    retriever.index((corpus, ids), create_empty_token=False, show_progress=False)
    scores = retriever.scores
    return tuple(  # type: ignore[return-value]
        np.asarray(scores[key], dtype=kind).tobytes()
        for key, kind in (("data", "<f4"), ("indices", "<u4"), ("indptr", "<u8"))
    )


def _corpus(seed: int, docs: int) -> list[list[str]]:
    rng = random.Random(seed)
    words = ["whale", "sea", "ship", "Straße", "東京都", "café", "हिन्दी", "must", "a", "x", "42"] + [
        f"w{i}" for i in range(300)
    ]
    weights = [1.0 / (rank + 1) for rank in range(len(words))]
    result = []
    for _ in range(docs):
        heading = " ".join(rng.choices(words, weights, k=rng.randint(0, 4)))
        text = " ".join(rng.choices(words, weights, k=rng.randint(0, 120)))
        result.append(document_tokens(heading, text, 2))
    return result


@pytest.mark.parametrize(("seed", "docs", "k1", "b"), [
    (1, 500, 1.5, 0.75), (2, 300, 1.2, 0.4), (3, 200, 2, 1), (4, 50, 0.0, 0.0), (5, 40, 10.0, 10.0),
    (6, 1, 1.5, 0.75),
])
def test_scores_are_bm25s_bit_for_bit(seed: int, docs: int, k1: float, b: float) -> None:
    import bm25s

    token_lists = _corpus(seed, docs)
    token_lists.append([])  # a chunk with no token counts in the average length, as in bm25s
    vocab = vocabulary(token_lists)
    ours = bm25_scores(token_lists, vocab, {"k1": k1, "b": b})
    assert ours == _bm25s_arrays(token_lists, vocab, k1, b)
    assert bm25s.__version__ == BM25S_COMPATIBLE, "bm25s changed: check its formula, then the constant"


def test_no_tokens_gives_an_empty_matrix() -> None:
    vocab, data, rows, starts = bm25_matrix([[], []], {"k1": 1.5, "b": 0.75})
    assert vocab == [] and data.size == 0 and rows.size == 0 and starts.tolist() == [0]


def test_vocabulary_must_match() -> None:
    with pytest.raises(ValueError):
        bm25_scores([["a", "b"]], ["a"], {"k1": 1.5, "b": 0.75})


@pytest.mark.parametrize("stemmed", [False, True])
def test_a_generator_of_token_lists_gives_the_matrix_of_the_stemmed_lists(stemmed: bool) -> None:
    """Token lists may come one at a time (the shard builder tokenises each unit as the matrix takes
    it); with ``term_of`` the matrix is that of the lists mapped token by token."""
    from episteme_core.text.analyzer import stemmer

    rng = random.Random(7)
    words = ["running", "runs", "run", "ran", "cats", "cat", "must", "not", "frame-ancestors", "a"]
    lists = [[rng.choice(words) for _ in range(rng.randint(0, 30))] for _ in range(60)]
    term_of = stemmer("english") if stemmed else None
    mapped = [[term_of(t) for t in tokens] for tokens in lists] if term_of else lists
    expected = bm25_matrix(mapped, {"k1": 1.5, "b": 0.75})
    got = bm25_matrix((tokens for tokens in lists), {"k1": 1.5, "b": 0.75}, term_of)
    assert got[0] == expected[0]
    for ours, theirs in zip(got[1:], expected[1:], strict=True):
        assert ours.dtype == theirs.dtype and ours.tobytes() == theirs.tobytes()
    assert (len(got[0]) < len(set(words))) is stemmed  # stemming did merge words


def test_a_matrix_build_leaves_no_reference_cycles() -> None:
    """Shard builds run with the cycle collector paused: whatever a build makes must go when it ends,
    or every shard's vocabulary would stay in memory until a later collection (a 5M-chunk build in
    one process once crept to 755 MiB that way)."""
    import gc

    lists = _corpus(8, 200)
    gc.collect()
    gc.disable()
    try:
        bm25_matrix((tokens for tokens in lists), {"k1": 1.5, "b": 0.75})
        assert gc.collect() == 0
    finally:
        gc.enable()


@pytest.mark.parametrize("distinct", [65_535, 65_536])
def test_scores_stay_bm25s_where_the_sort_keys_need_eight_bytes(distinct: int) -> None:
    """(term, row) sort keys take four bytes while terms × rows stays below 2^32 and eight past it:
    65,536 one-token chunks over 65,535 terms (the last four-byte case) and 65,536 terms (the first
    eight-byte one) both give bm25s's arrays."""
    rows = 65_536
    token_lists = [[f"t{i % distinct}"] for i in range(rows)]
    vocab = vocabulary(token_lists)
    assert len(vocab) == distinct
    params = {"k1": 1.5, "b": 0.75}
    assert bm25_scores(token_lists, vocab, params) == _bm25s_arrays(token_lists, vocab, 1.5, 0.75)
