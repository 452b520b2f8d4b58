"""Law: a model that rates every candidate alike leaves fuse naming exactly what bm25 names.

Whatever the weight, the threshold and the budget. Two companions: at weight 0.5 or less the BM25 top
is overtaken only by a model lead larger than its BM25 shortfall, and more relevance never ranks lower.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from episteme_core.api import Bm25Reader, Candidate, ReaderSpec, ReadRequest
from episteme_llama.fusion import fuse

scores = st.floats(0.0, 50.0, allow_nan=False)
coverages = st.floats(0.0, 1.0, allow_nan=False)


@st.composite
def requests(draw: st.DrawFn) -> ReadRequest:
    n = draw(st.integers(0, 12))
    rows = [(draw(scores), draw(coverages)) for _ in range(n)]
    best = draw(st.floats(0.0, 1.0)) if rows else 0.0
    return ReadRequest("q", "s", "books", tuple(
        Candidate(label=f"p{i + 1}", text="t", score=s, ref=f"r#{i + 1:03d}", coverage=c)
        for i, (s, c) in enumerate(rows)), best_coverage=best)


def bm25(top: int, ratio: float, min_score: float, score_ratio: float) -> Bm25Reader:
    options = {"top": top, "ratio": ratio, "min_score": min_score, "score_ratio": score_ratio}
    return Bm25Reader(ReaderSpec("bm25", "bm25", options=options))


@settings(max_examples=400, deadline=None)
@given(request=requests(), flat=st.floats(0.0, 1.0), weight=st.floats(0.0, 1.0), top=st.integers(1, 8),
       ratio=st.floats(0.0, 1.0), min_score=st.floats(0.0, 10.0), score_ratio=st.floats(0.0, 1.0))
def test_a_flat_model_leaves_the_bm25_reply(request: ReadRequest, flat: float, weight: float, top: int,
                                            ratio: float, min_score: float, score_ratio: float) -> None:
    relevance = {c.label: flat for c in request.candidates}
    named = fuse(request, relevance, weight=weight, top=top, ratio=ratio, min_score=min_score,
                 score_ratio=score_ratio)
    assert tuple(f.label for f in named) == bm25(top, ratio, min_score, score_ratio).read(request).labels


@settings(max_examples=300, deadline=None)
@given(request=requests(), data=st.data(), weight=st.floats(0.0, 0.5), top=st.integers(1, 8))
def test_at_weight_half_or_less_the_bm25_top_is_overtaken_only_by_a_clear_model_preference(
        request: ReadRequest, data: st.DataObject, weight: float, top: int) -> None:
    relevance = {c.label: data.draw(st.floats(0.0, 1.0)) for c in request.candidates}
    named = fuse(request, relevance, weight=weight, top=top, ratio=0.5, min_score=0.0, score_ratio=0.5)
    expected = bm25(top, 0.5, 0.0, 0.5).read(request).labels
    if not named:
        assert expected == ()
        return
    first = next(c for c in request.candidates if c.label == expected[0])
    winner = next(c for c in request.candidates if c.label == named[0].label)
    best = max(c.score for c in request.candidates)
    if winner.label != first.label:
        # the winner's model lead covers its BM25 shortfall: w·Δp ≥ (1-w)·Δbm25
        gain = weight * (relevance[winner.label] - relevance[first.label])
        loss = (1 - weight) * (first.score - winner.score) / best
        assert gain >= loss - 1e-12


@settings(max_examples=300, deadline=None)
@given(request=requests(), data=st.data(), weight=st.floats(0.01, 1.0))
def test_raising_a_candidates_relevance_never_lowers_its_rank(request: ReadRequest, data: st.DataObject,
                                                               weight: float) -> None:
    if not request.candidates:
        return
    relevance = {c.label: data.draw(st.floats(0.0, 0.9)) for c in request.candidates}
    label = data.draw(st.sampled_from([c.label for c in request.candidates]))
    kwargs = {"weight": weight, "top": 50, "ratio": 0.0, "min_score": 0.0, "score_ratio": 0.0}
    before = [f.label for f in fuse(request, relevance, **kwargs)]
    after = [f.label for f in fuse(request, {**relevance, label: relevance[label] + 0.1}, **kwargs)]
    if label in before:
        assert after.index(label) <= before.index(label)


def test_the_fuse_defaults_are_the_bm25_readers() -> None:
    """With its default options, fuse gates and bounds candidates exactly as the builtin bm25 reader's
    defaults do (the kernel's defaults may move; the plugin must move with them)."""
    from episteme_llama.options import LlamaOptions

    kernel = Bm25Reader(ReaderSpec(name="bm25", kind="bm25"))
    ours = LlamaOptions(model="unused.gguf")
    assert (ours.top, ours.ratio, ours.min_score, ours.score_ratio) == (
        kernel.top, kernel.ratio, kernel.min_score, kernel.score_ratio)
