"""The proximity rerank: the best BM25 passages get a bonus when query terms sit close together."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import episteme_core.search.query as query_module
from episteme_core.search.proximity import (
    ALPHA,
    WEIGHT,
    bonus,
    matched_words,
    min_distance,
    reorder,
    text_bonus,
)
from episteme_core.search.query import query
from episteme_core.search.snippets import best_window
from episteme_core.store.home import Home

from .conftest import make_document, ok

FILLER = "the river runs past old stone walls and quiet fields"


def test_min_distance_counts_words_between_different_terms() -> None:
    text = "Harpoons struck; the whale dove. A whale, then harpoon lines."
    found = matched_words(text, {"whale", "harpoon"})
    assert [term for _, term in found] == ["harpoon", "whale", "whale", "harpoon"]
    assert min_distance(found) == 2  # "whale, then harpoon"
    assert min_distance(matched_words("whale whale whale", {"whale", "ship"})) is None  # one term only
    assert min_distance([]) is None


def test_bonus_is_bounded_decreasing_and_zero_without_two_terms() -> None:
    assert bonus(None) == 0.0
    values = [bonus(d) for d in range(1, 12)]
    assert all(a > b > 0 for a, b in zip(values, values[1:], strict=False))
    assert values[0] == pytest.approx(WEIGHT * math.log((ALPHA + math.exp(-1)) / ALPHA))
    assert values[-1] < 0.001
    assert text_bonus("ship next whale", {"whale", "ship"}) == pytest.approx(bonus(2))


def test_reorder_gives_bonuses_to_the_head_only_and_keeps_ties_in_order() -> None:
    # the third passage would win with a bonus, but lies past the bonuses given
    assert reorder([5.0, 4.0, 3.9], [0.0, 1.5]) == [1, 0, 2]
    assert reorder([5.0, 4.0, 3.9], [0.0, 0.0, 2.0]) == [2, 0, 1]
    assert reorder([1.0, 1.0, 1.0], []) == [0, 1, 2]


def _spread_and_close(build, *, heavier_spread: bool = False) -> Path:  # type: ignore[no-untyped-def]
    # the same words, as often and as long: BM25 scores the two passages alike (or the spread one a
    # little higher, with one "whale" more)
    spread = ("whale " if heavier_spread else "") + f"whale {FILLER} {FILLER} harpoon"
    close = f"{FILLER} whale harpoon {FILLER}"
    return build([make_document("https://e.org/a", [("One", [spread])]),  # type: ignore[no-any-return]
                  make_document("https://e.org/b", [("Two", [close])])])


def test_terms_close_together_outrank_the_same_terms_spread_apart(build) -> None:  # type: ignore[no-untyped-def]
    root = _spread_and_close(build)
    data = ok("--home", str(root), "query", "--term", "whale harpoon")
    first, second = data["results"]
    assert first["source"] == "https://e.org/b" and "whale harpoon" in first["snippet"]
    # BM25 ties them; the close one gains the bonus of two adjacent terms, the other almost nothing
    assert first["score"] - second["score"] == pytest.approx(bonus(1) - bonus(21), abs=2e-6)
    assert ok("--home", str(root), "query", "--term", "whale harpoon") == data  # reproducible


def test_only_the_best_passages_are_reranked(build, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """The close passage is second by BM25: reranked at a depth of 2, not just past it (depth 1)."""
    home = Home(_spread_and_close(build, heavier_spread=True))
    monkeypatch.setattr(query_module, "RERANK_DEPTH", 2)
    assert [r.source for r in query(home, "whale harpoon").results] == ["https://e.org/b", "https://e.org/a"]
    monkeypatch.setattr(query_module, "RERANK_DEPTH", 1)
    past = query(home, "whale harpoon").results
    assert [r.source for r in past] == ["https://e.org/a", "https://e.org/b"]
    assert past[0].score > past[1].score  # still sorted: a bonus is never negative


def test_quoted_phrases_are_reranked_too(build) -> None:  # type: ignore[no-untyped-def]
    root = _spread_and_close(build)
    data = ok("--home", str(root), "query", "--term", 'whale harpoon "stone walls"')
    assert [r["source"] for r in data["results"]] == ["https://e.org/b", "https://e.org/a"]


def test_the_snippet_of_joined_runs_stays_on_the_run_that_ranked() -> None:
    dense = "whale harpoon sperm whale harpoon " * 25  # 850 characters of matches, three terms
    filler = (FILLER + ". ") * 20
    best_run = "the whale took the harpoon and the line ran out. " * 8
    text = dense + filler + best_run
    focus = (len(dense) + len(filler), len(text))
    weights = {"whale": 1.0, "harpoon": 1.0, "sperm": 1.0}
    start, end = best_window(text, weights, 600)
    assert start < len(dense) and "the whale took" not in text[start:end]  # alone, the densest part wins
    start, end = best_window(text, weights, 600, focus=focus)
    assert end - start <= 600 and start >= focus[0] - 600 + (focus[1] - focus[0]) - 1
    assert "the whale took the harpoon" in text[start:end]
    # a focus as large as the budget: the window lies inside it
    start, end = best_window(text, weights, 300, focus=focus)
    assert focus[0] <= start and end <= focus[1]


def test_a_window_kept_near_its_focus_still_uses_the_whole_budget() -> None:
    """The window is chosen within the focus and the room around it; where that slice ends first
    (its window opened at a sentence start near the slice's end) it runs on into the text after,
    so a snippet never shows less than its budget of a passage that goes on."""
    lead = (FILLER + ". ") * 30
    focus_run = "The whale took the harpoon. " * 10
    after = ("Sentence of words. " * 40 + "The whale rose again and the harpoon line ran out at last. "
             + "Closing remark without terms. " * 40)
    text = lead + focus_run + after
    focus = (len(lead), len(lead) + len(focus_run))
    weights = {"whale": 1.0, "harpoon": 1.0, "line": 2.0, "rose": 2.0}
    start, end = best_window(text, weights, 1200, focus=focus)
    assert 1200 - 10 <= end - start <= 1200  # words here are under 10 characters
    assert start < focus[1] and end > focus[1] + (1200 - (focus[1] - focus[0]))  # past the slice
