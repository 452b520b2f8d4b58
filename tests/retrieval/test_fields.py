"""The labelled fields BM25 weighs: headings count by their words, not by their section numbers."""

from __future__ import annotations

import pytest

from episteme_core.bm25.fields import heading_words, indexed, unit_tokens
from episteme_core.bm25.shards import open_shards
from episteme_core.store.home import Home

from .conftest import make_document, ok


@pytest.mark.parametrize(("heading", "words"), [
    ("10.2.3.\u00a0Retry-After", "Retry-After"),
    ("15.5.5. 404 Not Found", "404 Not Found"),
    ("404 Not Found", "404 Not Found"),  # a bare number is part of the heading
    ("1. Introduction", "Introduction"),
    ("1 Introduction", "1 Introduction"),
    ("A.1 Collected ABNF", "Collected ABNF"),
    ("Appendix B. Changes", "Changes"),
    ("B.4.\u00a0Changes from RFC 7232", "Changes from RFC 7232"),
    ("A Note on Terms", "A Note on Terms"),
    ("3.3", "3.3"),  # a number alone is not taken for a prefix
    ("", ""),
])
def test_heading_words_leave_out_the_section_number(heading: str, words: str) -> None:
    assert heading_words(heading) == words


def _row(heading: str, path: list[str]) -> dict[str, object]:
    return {"id": "c1", "text": "Servers send Retry-After to say how long to wait.", "heading": heading,
            "sectionPath": path, "title": "HTTP Semantics", "url": "https://e.org/http"}


def test_a_document_numbering_its_headings_gets_the_same_terms_as_one_that_does_not() -> None:
    weights = {"title": 1, "url": 2, "path": 1, "heading": 3, "terms": 2, "body": 1}
    numbered = indexed(_row("10.2.3.\u00a0Retry-After",
                            ["10.\u00a0Message Context", "10.2.3.\u00a0Retry-After"]))
    plain = indexed(_row("Retry-After", ["Message Context", "Retry-After"]))
    assert numbered["heading"] == "Retry-After" and numbered["path"] == "Message Context"
    assert unit_tokens([numbered], weights) == unit_tokens([plain], weights)


def test_twin_sections_score_alike_whether_or_not_headings_carry_numbers(build) -> None:  # type: ignore[no-untyped-def]
    body = ["Servers send the Retry-After header field to indicate how long the user agent ought to wait."]
    docs = [make_document("https://e.org/numbered", [("10.2.3. Retry-After", body)]),
            make_document("https://e.org/plain", [("Retry-After", body)])]
    root = build(docs)
    shards = open_shards(Home(root))
    hits, _ = shards.search(shards.terms("retry after header"), 10)
    assert len(hits) == 2 and hits[0].score == hits[1].score
    # the very same text: query shows it once, naming the other document's copy
    (result,) = ok("--home", str(root), "query", "--term", "retry after header")["results"]
    assert [copy["source"] for copy in result["also"]] == [
        ({"https://e.org/numbered", "https://e.org/plain"} - {result["source"]}).pop()]
