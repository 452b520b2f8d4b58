"""The analyzer: Unicode cases end to end (query finds chunk), and the word, stemming and identifier
rules they rest on."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from episteme_core.text.analyzer import (
    ANALYZER_NAME,
    ANALYZER_VERSION,
    identifier_words,
    language_of,
    query_terms,
    tokenize,
    word_spans,
    words,
)

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
    assert words("हिन्दी भाषा") == ["हिन्दी", "भाषा"]


def test_cjk_runs_become_overlapping_bigrams() -> None:
    assert tokenize("東京都") == ["東京", "京都"]
    assert query_terms("東京") == ["東京"]
    assert tokenize("東") == ["東"]
    assert tokenize("東京abc") == ["東京", "abc"]


def test_folding_rules() -> None:
    assert words("Straße") == ["strasse"]
    assert words("Café NAÏVE") == ["cafe", "naive"]
    assert words("ＦＵＬＬＷＩＤＴＨ") == ["fullwidth"]
    assert words("snake_case x²") == ["snake", "case", "x2"]
    assert words("a b") == ["a", "b"]  # one-letter words are kept (spec identifiers)
    assert words("...!!") == []


def test_english_snowball_stems_meet() -> None:
    assert tokenize("running runs") == ["run", "run"]
    assert query_terms("policies") == query_terms("policy") == ["polici"]
    assert tokenize("Café") == ["cafe"] and tokenize("42 2119") == ["42", "2119"]  # numbers as written


def test_identifiers_whole_and_by_parts() -> None:
    assert identifier_words("frame-ancestors max_idle_timeout") == ["frameancestors", "maxidletimeout"]
    assert set(tokenize("frame-ancestors")) == {"frame", "ancestor", "frameancestor"}
    assert set(tokenize("maxIdleTimeout")) == {"maxidletimeout", "max", "idl", "timeout"}
    # one identifier, two spellings
    assert set(tokenize("max_idle_timeout")) == set(tokenize("maxIdleTimeout"))
    assert set(tokenize("HTTPServer")) == {"httpserver", "http", "server"}
    assert tokenize("URLs") == ["url"]
    assert identifier_words("URLs and 2FA") == []  # an acronym's plural and digits before capitals are words
    assert identifier_words("@vocab #1343 $HOME a@b") == ["@vocab", "#1343", "$home"]


def test_words_where_digits_follow_letters_add_their_parts() -> None:
    assert identifier_words("binary64 RFC2119 utf8") == ["binary", "64", "rfc", "2119", "utf", "8"]
    assert set(tokenize("IEEE 754 binary64")) >= {"binary64", "binari", "64"}
    assert identifier_words("sha256sum") == ["sha", "256", "sum"]
    assert identifier_words("a5641cd2ad8b 2FA 5ms 10th") == []  # a hash; digits before letters
    # a camelCase word with digits is split once, by its case
    assert identifier_words("Base64Encode") == ["base", "64", "encode"]
    assert identifier_words("maxIdle2Timeout") == ["max", "idle", "2", "timeout"]
    # "RFC 2119" finds "[RFC2119]", and the whole still finds the whole
    assert set(query_terms("RFC 2119")) <= set(tokenize("as in [RFC2119]"))
    assert "rfc2119" in tokenize("as in [RFC2119]")


def test_query_leaves_out_stop_words_unless_nothing_else() -> None:
    assert query_terms("What does the @vocab keyword do?") == ["@vocab", "keyword", "vocab"]
    assert query_terms("to be or not to be") == ["be", "not", "or", "to"]


def test_languages_name_snowball_stemmers() -> None:
    assert language_of(None) == "english" and language_of("en-GB") == "english"
    assert language_of("fr") == "french" and language_of("German") == "german"
    assert language_of("ja") == "none"  # no stemmer: words as written
    assert tokenize("les chats", "french") == ["le", "chat"]
    assert tokenize("running", "none") == ["running"]


def test_word_spans_point_into_the_original_text() -> None:
    text = "Hello ＦＵＬＬ Straße, frame-ancestors"
    spans = word_spans(text)
    assert [w for _, _, w in spans] == ["hello", "full", "strasse", "frame", "ancestors"]
    assert [text[a:b] for a, b, _ in spans] == ["Hello", "ＦＵＬＬ", "Straße", "frame", "ancestors"]


def test_thai_stays_one_run_and_hangul_is_bigrammed() -> None:
    assert tokenize("ภาษาไทย") == ["ภาษาไทย"]
    assert tokenize("한국어") == ["한국", "국어"]


def test_tokens_are_bounded() -> None:
    assert [len(t) for t in words("x" * 250)] == [100, 100, 50]
    assert [(a, b) for a, b, _ in word_spans("x" * 250)] == [(0, 100), (100, 200), (200, 250)]


def test_version_is_named() -> None:
    assert (ANALYZER_NAME, ANALYZER_VERSION) == ("episteme", "3")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=400)
       | st.lists(st.sampled_from(["a" * 99, "b" * 100, "c" * 101, "Z" * 250, "_", " ", "x1", "\t"]))
       .map("".join))
def test_ascii_fast_path_cuts_as_the_regex(text: str) -> None:
    """ASCII text takes translate + split; it must give exactly the regex's words (runs cut at 100)."""
    import re

    assert words(text) == re.findall("[a-z0-9]{1,100}", text.lower())
    assert [w for _, _, w in word_spans(text)] == words(text)
