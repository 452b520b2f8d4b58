"""The analyzer: Unicode cases end to end (query finds chunk), and the token rules they rest on."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from episteme_core.index.analyzer import ANALYZER_VERSION, query_terms, tokenize

from .conftest import ok


@pytest.mark.parametrize(
    ("term", "needle"),
    [
        ("strasse", "Straße"),
        ("cafe", "café"),
        ("हिन्दी", "हिन्दी भाषा"),
        ("東京", "東京都庁"),
        ("fullwidth", "ＦＵＬＬＷＩＤＴＨ"),
        ("ＣＡＦＥ", "café"),
        ("STRASSE", "Straße"),
    ],
)
def test_query_finds_the_unicode_form(corpus: Path, term: str, needle: str) -> None:
    data = ok("--home", str(corpus), "query", "--term", term, "--max-chars", "200")
    assert data["total"] >= 1
    assert needle in data["results"][0]["snippet"]


def test_hindi_word_is_one_token() -> None:
    assert tokenize("हिन्दी भाषा") == ["हिन्दी", "भाषा"]


def test_cjk_runs_become_overlapping_bigrams() -> None:
    assert tokenize("東京都") == ["東京", "京都"]
    assert query_terms("東京") == ["東京"]
    assert tokenize("東") == ["東"]
    assert tokenize("東京abc") == ["東京", "abc"]


def test_folding_rules() -> None:
    assert tokenize("Straße") == ["strasse"]
    assert tokenize("Café NAÏVE") == ["cafe", "naive"]
    assert tokenize("ＦＵＬＬＷＩＤＴＨ") == ["fullwidth"]
    assert tokenize("snake_case x²") == ["snake", "case", "x2"]
    assert tokenize("a b") == ["a", "b"]  # one-letter tokens are kept (spec identifiers)
    assert tokenize("...!!") == []


def test_thai_stays_one_run_and_hangul_is_bigrammed() -> None:
    assert tokenize("ภาษาไทย") == ["ภาษาไทย"]
    assert tokenize("한국어") == ["한국", "국어"]


def test_tokens_are_bounded() -> None:
    assert [len(t) for t in tokenize("x" * 250)] == [100, 100, 50]


def test_version_is_named() -> None:
    assert ANALYZER_VERSION == "unicode-v1"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=400)
       | st.lists(st.sampled_from(["a" * 99, "b" * 100, "c" * 101, "Z" * 250, "_", " ", "x1", "\t"]))
       .map("".join))
def test_ascii_fast_path_cuts_as_the_regex(text: str) -> None:
    """ASCII text takes translate + split; it must give exactly the regex's tokens (runs cut at 100)."""
    import re

    assert tokenize(text) == re.findall("[a-z0-9]{1,100}", text.lower())
