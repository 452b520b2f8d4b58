"""``rerank``, the helper for the kernel's ``query --rerank onnx``: the reader's rule over any passages,
as a pure function, and through the registered kind with a config entry's options."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from episteme_core.api import EpistemeError, ReaderSpec
from episteme_onnx.fusion import fused_scores
from episteme_onnx.kind import OnnxKind
from episteme_onnx.model import LoadError
from episteme_onnx.rerank import rerank, similarities

QUESTION = "the white whale and the captain"
PASSAGES = ["python json report", "water and land", "the captain saw the white whale", ""]


def test_rerank_is_the_documented_rule(tiny_model: Path) -> None:
    bm25 = [4.0, 3.0, 1.0, 0.5]
    scores = rerank(QUESTION, PASSAGES, bm25, model=str(tiny_model))
    found = similarities(QUESTION, PASSAGES, model=str(tiny_model))
    assert scores == pytest.approx([0.8 * s / 4.0 + 0.2 * c for s, c in zip(bm25, found, strict=True)])
    assert max(found) == found[2]  # the passage sharing the most words
    at_one = rerank(QUESTION, PASSAGES, bm25, model=str(tiny_model), weight=1.0)
    assert max(range(4), key=at_one.__getitem__) == 2  # the model's own choice
    assert rerank(QUESTION, PASSAGES, bm25, model=str(tiny_model), weight=0.0) == [1.0, 0.75, 0.25, 0.125]


def test_rerank_is_pure(tiny_model: Path) -> None:
    passages, bm25 = list(PASSAGES), [4.0, 3.0, 1.0, 0.5]
    first = rerank(QUESTION, passages, bm25, model=str(tiny_model))
    assert rerank(QUESTION, passages, bm25, model=str(tiny_model)) == first
    assert (passages, bm25) == (PASSAGES, [4.0, 3.0, 1.0, 0.5])  # its arguments are left as they were


def test_a_model_that_knows_nothing_keeps_the_bm25_order(constant_model: Path) -> None:
    bm25 = [1.0, 7.0, 3.0, 3.0]
    scores = rerank(QUESTION, PASSAGES, bm25, model=str(constant_model), weight=0.9)
    assert sorted(range(4), key=lambda i: (-scores[i], i)) == sorted(range(4), key=lambda i: (-bm25[i], i))


def test_rerank_refuses_what_it_cannot_score(tiny_model: Path, tmp_path: Path) -> None:
    assert rerank(QUESTION, [], [], model=str(tiny_model)) == []
    with pytest.raises(ValueError, match="2 passages for 1 BM25 scores"):
        rerank(QUESTION, ["a", "b"], [1.0], model=str(tiny_model))
    with pytest.raises(ValueError, match="weight must be between 0 and 1"):
        rerank(QUESTION, ["a"], [1.0], model=str(tiny_model), weight=2.0)
    with pytest.raises(LoadError, match="does not exist"):
        rerank(QUESTION, ["a"], [1.0], model=str(tmp_path / "none"))


def test_the_kind_reranks_with_a_config_entrys_options(tiny_model: Path, tmp_path: Path) -> None:
    """It uses the entry's rerank_weight (query's), not its weight (ask's)."""
    options = {"model": str(tiny_model), "weight": 0.0, "rerank_weight": 1.0, "max_tokens": 64}
    spec = ReaderSpec("semantic", "onnx", options=options)
    bm25 = [4.0, 3.0, 1.0, 0.5]
    scores = OnnxKind().rerank(spec, QUESTION, PASSAGES, bm25)
    assert scores == rerank(QUESTION, PASSAGES, bm25, model=str(tiny_model), weight=1.0, max_tokens=64)
    assert scores == similarities(QUESTION, PASSAGES, model=str(tiny_model), max_tokens=64)
    with pytest.raises(EpistemeError, match="does not exist") as caught:
        missing = ReaderSpec("semantic", "onnx", options={"model": str(tmp_path / "x")})
        OnnxKind().rerank(missing, "q", ["a"], [1.0])
    assert caught.value.code == "INVALID_INPUT"
    with pytest.raises(EpistemeError, match="unknown key"):
        OnnxKind().rerank(ReaderSpec("semantic", "onnx", options={"model": "m", "x": 1}), "q", ["a"], [1.0])


@settings(max_examples=300, deadline=None)
@given(bm25=st.lists(st.floats(0.0, 50.0), max_size=12), flat=st.floats(-1.0, 1.0),
       weight=st.floats(0.0, 1.0))
def test_flat_similarities_keep_the_bm25_order(bm25: list[float], flat: float, weight: float) -> None:
    fused = fused_scores(bm25, [flat] * len(bm25), weight=weight)
    for i in range(len(bm25)):
        for j in range(len(bm25)):
            if bm25[i] > bm25[j]:
                assert fused[i] >= fused[j]


@settings(max_examples=300, deadline=None)
@given(data=st.data(), weight=st.floats(0.01, 0.5))
def test_the_bm25_top_is_overtaken_only_by_a_lead_larger_than_its_shortfall(data: st.DataObject,
                                                                           weight: float) -> None:
    bm25 = data.draw(st.lists(st.floats(0.0, 50.0), min_size=1, max_size=12))
    cos = [data.draw(st.floats(-1.0, 1.0)) for _ in bm25]
    fused = fused_scores(bm25, cos, weight=weight)
    top = max(range(len(bm25)), key=lambda i: (bm25[i], -i))
    winner = max(range(len(bm25)), key=fused.__getitem__)
    if fused[winner] > fused[top]:
        best = max(bm25) or 1.0
        assert weight * (cos[winner] - cos[top]) >= (1 - weight) * (bm25[top] - bm25[winner]) / best - 1e-12
