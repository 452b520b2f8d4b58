"""Query term weights: a term that only an identifier adds (its parts, or a joined run's whole) weighs
half of a word, so one query word such as ``JavaScript`` does not count three times."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import episteme_core.text.analyzer as analyzer
from episteme_core.bm25.shards import open_shards
from episteme_core.search.query import query
from episteme_core.search.shardset import weighted_idf
from episteme_core.store.home import Home
from episteme_core.text.analyzer import (
    IDENTIFIER_TERM_WEIGHT,
    QUERY_STOPWORDS,
    query_term_weights,
    query_terms_for,
    stem_words,
    words,
)

from .conftest import make_document

HALF = IDENTIFIER_TERM_WEIGHT
FILLER = "the river runs past old stone walls and quiet fields"


def test_identifier_parts_and_wholes_weigh_half_of_a_word() -> None:
    assert IDENTIFIER_TERM_WEIGHT == 0.5
    assert query_term_weights("JavaScript", ["english"]) == {"javascript": 1.0, "java": HALF, "script": HALF}
    assert query_term_weights("64-bit integers", ["english"]) == {"64": 1.0, "bit": 1.0, "integ": 1.0,
                                                                  "64bit": HALF}
    assert query_term_weights("max_idle_timeout", ["english"]) == {
        "max": 1.0, "idl": 1.0, "timeout": 1.0, "maxidletimeout": HALF}
    assert query_term_weights("binary64", ["english"]) == {"binary64": 1.0, "binari": HALF, "64": HALF}


def test_words_and_sigil_words_keep_their_full_weight() -> None:
    assert set(query_term_weights("whale harpoon lines", ["english"]).values()) == {1.0}
    assert query_term_weights("@type", ["english"]) == {"@type": 1.0, "type": 1.0}  # a keyword, not a part
    # a part the query also says as a word is a word
    assert query_term_weights("Java script for JavaScript", ["english"]) == {
        "java": 1.0, "script": 1.0, "javascript": 1.0}
    assert query_term_weights("", ["english"]) == {}


@pytest.mark.parametrize("text", ["JavaScript and 64-bit", "maxIdleTimeout @vocab", "to be or not",
                                  "dormaient frame-ancestors", "東京都 HTTPServer"])
def test_the_weights_cover_exactly_the_query_terms(text: str) -> None:
    for languages in (["english"], ["english", "french"], ["none"]):
        weights = query_term_weights(text, languages)
        assert sorted(weights) == query_terms_for(text, languages)
        assert set(weights.values()) <= {1.0, HALF}


_PIECES = st.sampled_from(["Java", "Script", "java", "max", "Idle", "timeout", "64", "bit", "binary",
                           "RFC", "2119", "the", "what", "é", "東京"])
_JOINS = st.sampled_from(["", " ", "-", "_", " @", " #", ". ", "'s "])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_PIECES, _JOINS), max_size=8))
def test_every_query_word_weighs_one_and_only_identifier_terms_less(pieces: list[tuple[str, str]]) -> None:
    text = "".join(piece + join for piece, join in pieces)
    weights = query_term_weights(text, ["english"])
    assert sorted(weights) == query_terms_for(text, ["english"])
    plain = [word for word in words(text) if word not in QUERY_STOPWORDS]
    for term in stem_words(plain, "english"):
        assert weights[term] == 1.0
    assert all(value in (1.0, HALF) for value in weights.values())


def test_weighted_idf_is_none_only_when_nothing_changes() -> None:
    def idf(terms, shards):  # type: ignore[no-untyped-def]
        return dict.fromkeys(terms, 2.0)

    assert weighted_idf(idf, ["a", "b"], ["one shard"]) is None
    assert weighted_idf(idf, ["a", "b"], ["one shard"], {"a": 1.0, "c": 0.5}) is None  # c is no term
    assert weighted_idf(idf, ["a", "b"], ["one shard"], {"a": 0.5}) == {"a": 1.0, "b": 2.0}
    assert weighted_idf(idf, ["a", "b"], ["x", "y"]) == {"a": 2.0, "b": 2.0}
    assert weighted_idf(idf, ["a", "b"], ["x", "y"], {"b": 0.25}) == {"a": 2.0, "b": 0.5}


@pytest.mark.parametrize("kinds", [("http", "http"), ("http", "file")])  # one shard, two shards
def test_search_scales_each_weighted_terms_scores(build, kinds: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    root = build([make_document("https://e.org/js", [("One", [f"JavaScript {FILLER}"])], kind=kinds[0]),
                  make_document("https://e.org/other", [("Two", [f"{FILLER} and more"])], kind=kinds[1])])
    shard_set = open_shards(Home(root))
    assert len(shard_set.shards) == len(set(kinds))
    terms = shard_set.terms("JavaScript")
    plain, total = shard_set.search(terms, 10)
    assert shard_set.search(terms, 10, weights=dict.fromkeys(terms, 1.0)) == (plain, total)  # to the bit
    weights = query_term_weights("JavaScript", ["english"])
    weighted, weighted_total = shard_set.search(terms, 10, weights=weights)
    assert weighted_total == total == 1 and weighted[0].chunk_id == plain[0].chunk_id
    # javascript, java and script: one posting each in the same passage, so equal scores; two weigh half
    assert weighted[0].score == pytest.approx(plain[0].score * (1 + HALF + HALF) / 3, rel=1e-6)


def test_a_query_ranks_by_words_not_by_identifier_parts(build, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """One "JavaScript" outranked a passage holding the query's two other words apart, only because
    the identifier counted three times; weighed as one word and two halves, the other passage wins."""
    root = build([
        make_document("https://e.org/js", [("One", [f"JavaScript {FILLER} {FILLER}"])]),
        make_document("https://e.org/num", [("Two", [f"integers {FILLER} precision {FILLER} integers"])]),
        make_document("https://e.org/x", [("Three", [f"{FILLER} {FILLER} {FILLER}"])]),
    ])
    home = Home(root)
    question = "JavaScript integers precision"
    assert [r.source for r in query(home, question).results] == ["https://e.org/num", "https://e.org/js"]
    monkeypatch.setattr(analyzer, "IDENTIFIER_TERM_WEIGHT", 1.0)  # every term a word: the old ranking
    assert [r.source for r in query(home, question).results] == ["https://e.org/js", "https://e.org/num"]


def test_ask_weighs_the_question_as_query_does(build, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """``ask`` ranks its candidates with the question's terms weighed as ``query`` weighs them, so
    the passage that answers in the question's words leads the answer, not the one that says
    ``JavaScript`` once (the same home as the test above; one shard, whose idf is then scaled)."""
    from episteme_core.ask.run import AskOptions, ask
    from episteme_core.kernel.loader import load_plugins

    root = build([
        make_document("https://e.org/js", [("One", [f"JavaScript {FILLER} {FILLER}"])]),
        make_document("https://e.org/num", [("Two", [f"integers {FILLER} precision {FILLER} integers"])]),
        make_document("https://e.org/x", [("Three", [f"{FILLER} {FILLER} {FILLER}"])]),
    ])
    home, plugins = Home(root), load_plugins()

    def named_first() -> str:
        result = ask(home, AskOptions(question="JavaScript integers precision"), plugins=plugins,
                     warn=lambda *args, **kwargs: None)
        return str(min(result.paragraphs, key=lambda p: p.priority).citation["url"])

    assert named_first() == "https://e.org/num"
    monkeypatch.setattr(analyzer, "IDENTIFIER_TERM_WEIGHT", 1.0)  # every term a word: the old ranking
    assert named_first() == "https://e.org/js"
