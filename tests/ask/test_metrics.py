"""Eval metrics: hit, recall, precision, MRR and nDCG@10 on hand-computed cases."""

from __future__ import annotations

import math

import pytest

from episteme_core.ask import metrics as ev


def test_perfect_and_empty() -> None:
    assert ev.score(["a", "b"], ["a", "b"]) == {"hit": 1.0, "recall": 1.0, "precision": 1.0, "mrr": 1.0,
                                                "ndcg10": 1.0}
    assert ev.score([], ["a"]) == {"hit": 0.0, "recall": 0.0, "precision": 0.0, "mrr": 0.0, "ndcg10": 0.0}
    assert ev.score([], []) == {"hit": 1.0, "recall": 1.0, "precision": 1.0, "mrr": 0.0, "ndcg10": 1.0}


def test_hand_computed() -> None:
    ranked, expected = ["x", "a", "y", "b"], ["a", "b", "c"]
    assert ev.hit(ranked, expected) == 1.0 and ev.hit(["x", "y"], expected) == 0.0
    assert ev.recall(ranked, expected) == pytest.approx(2 / 3)
    assert ev.precision(ranked, expected) == pytest.approx(2 / 4)
    assert ev.mrr(ranked, expected) == pytest.approx(1 / 2)
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert ev.ndcg(ranked, expected) == pytest.approx(dcg / ideal)


def test_ndcg_cuts_at_10_and_counts_repeats_once() -> None:
    ranked = [f"x{i}" for i in range(10)] + ["a"]
    assert ev.ndcg(ranked, ["a"]) == 0.0
    assert ev.ndcg(["a", "a"], ["a"]) == 1.0


def test_mean() -> None:
    assert ev.mean([{"m": 1.0}, {"m": 0.0}], "m") == 0.5 and ev.mean([], "m") == 0.0
