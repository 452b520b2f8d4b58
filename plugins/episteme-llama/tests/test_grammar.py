"""The generated GBNF grammar, checked with llama.cpp's own grammar engine: every reply it allows
names only offered labels, each at most once, at most K, and every such reply is allowed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from episteme_llama.engine import Model
from episteme_llama.grammar import ids_grammar, literal, max_reply_tokens
from episteme_llama.testing import grammar_accepts


@pytest.fixture(scope="module")
def model(tiny_model: Path) -> Model:
    return Model(tiny_model)


def reply(ids: list[str]) -> str:
    return json.dumps({"ids": ids})


def test_examples_by_hand(model: Model) -> None:
    labels = [f"p{i}" for i in range(1, 13)]
    rules = ids_grammar(labels, 3)
    allowed = [[], ["p1"], ["p12"], ["p1", "p12"], ["p2", "p5", "p11"], ["p10", "p11", "p12"]]
    refused = [["p1", "p1"], ["p3", "p2"], ["p1", "p2", "p3", "p4"], ["p13"], ["p0"], ["q1"], ["p1", "p01"]]
    for ids in allowed:
        assert grammar_accepts(model, rules, reply(ids)), ids
    for ids in refused:
        assert not grammar_accepts(model, rules, reply(ids)), ids
    malformed = ['{"ids": ["p1"]', '{"ids":["p1"]}', '{"ids": ["p1","p2"]}', '{"ids": ["p1"]} ', '["p1"]', ""]
    for text in malformed:
        assert not grammar_accepts(model, rules, text), text


def test_no_labels_or_no_picks_allows_only_the_empty_list(model: Model) -> None:
    for rules in (ids_grammar([], 5), ids_grammar(["p1", "p2"], 0)):
        assert grammar_accepts(model, rules, reply([]))
        assert not grammar_accepts(model, rules, reply(["p1"]))


def test_labels_must_be_distinct() -> None:
    with pytest.raises(ValueError):
        ids_grammar(["p1", "p1"], 2)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(1, 25), most=st.integers(1, 8), data=st.data())
def test_allowed_exactly_when_offered_ordered_unique_and_at_most_k(model: Model, n: int, most: int,
                                                                    data: st.DataObject) -> None:
    labels = [f"p{i}" for i in range(1, n + 1)]
    rules = ids_grammar(labels, most)
    pool = labels + ["p0", f"p{n + 1}", "q1", "p1 "]
    ids = data.draw(st.lists(st.sampled_from(pool), max_size=most + 2))
    positions = [labels.index(x) if x in labels else -1 for x in ids]
    valid = (all(p >= 0 for p in positions) and len(ids) <= most
             and all(a < b for a, b in zip(positions, positions[1:], strict=False)))
    assert grammar_accepts(model, rules, reply(ids)) == valid, (ids, most)


def test_two_hundred_candidates_and_fifty_picks_stay_small_and_fast(model: Model) -> None:
    labels = [f"p{i}" for i in range(1, 201)]
    rules = ids_grammar(labels, 50)
    assert rules.count("::=") == 1 + 200 * 50 + 199 * 49
    assert grammar_accepts(model, rules, reply(["p1", "p100", "p200"]))


def test_literal_escapes_what_gbnf_needs() -> None:
    assert literal('a"b\\c\nd\te\x01') == '"a\\"b\\\\c\\nd\\te\\x01"'


def test_reply_budget_covers_the_longest_reply() -> None:
    labels = [f"p{i}" for i in range(1, 13)]
    longest = reply(["p10", "p11", "p12"])
    assert max_reply_tokens(labels, 3) >= len(longest) + 1
