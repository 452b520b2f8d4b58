"""The human rendering of query hits: a run of a record's paragraphs says which paragraphs its snippet
shows (consecutive numbers joined, each its own citation); a run of a document's chunks adds no line
that repeats its source."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from episteme_core.search.query import paragraph_spans
from episteme_core.testing import invoke

from .conftest import make_document

FILLER = "The morning passed quietly and nobody in the house said anything worth writing down at all."


def _query(root: Path, *args: str) -> list[str]:
    result = invoke("--home", str(root), "query", *args)
    assert result.exit_code == 0, result.stderr
    return result.stdout.splitlines()


def test_a_run_of_paragraphs_names_the_paragraphs_its_snippet_shows(build: Callable[..., Path]) -> None:
    paragraphs = [FILLER] * 6 + ["The captain looked at the ivory leg.", "It was made from a whale's jaw.",
                                 "Nobody asked him about it again."] + [FILLER] * 6
    book = make_document("book:c/moby", [("Book", paragraphs)], kind="books", document_type="record",
                         times=[f"2026-01-{n:02d}T00:00:00Z" for n in range(1, len(paragraphs) + 1)])
    lines = _query(build([book]), "--term", "captain ivory leg jaw", "--limit", "1")
    [shown] = [line for line in lines if line.startswith("   paragraphs shown: ")]
    assert shown.startswith("   paragraphs shown: book:c/moby#")
    assert "(each its own citation; episteme show REF prints one)" in shown
    spans = shown.split(": ", 1)[1].split(" (", 1)[0]
    assert "–#" in spans and spans.count("book:c/moby") == 1  # one record, its run joined
    assert "paragraphs: " not in "\n".join(lines)  # the old unexplained list is gone


def test_a_run_of_chunks_of_a_document_adds_no_line(build: Callable[..., Path]) -> None:
    text = " ".join(["the percent-encoded byte is written as three characters"] + [FILLER] * 80)
    document = make_document("https://example.org/spec", [("Encoding", [text, FILLER * 10, text])])
    root = build([document], "--max-chars", "1000", "--overlap-chars", "100")
    data = invoke("--home", str(root), "query", "--term", "percent-encoded byte", "--limit", "3",
                  "--json").envelope["data"]
    assert all(r["paragraphs"] for r in data["results"])  # runs of several chunks, listed in the JSON
    lines = _query(root, "--term", "percent-encoded byte", "--limit", "3")
    assert any(line.startswith("   https://example.org/spec") for line in lines)
    assert not any("paragraphs" in line for line in lines)


def test_paragraph_spans_joins_consecutive_numbers_and_names_each_record_once() -> None:
    assert paragraph_spans(["r#3", "r#4", "r#5", "r#9"], "r") == "r#3–#5, #9"
    assert paragraph_spans(["r#3"], "r") == "r#3"
    assert paragraph_spans(["a#1", "a#2", "b#3"], "a") == "a#1–#2, b#3"
    assert paragraph_spans(["https://x/", "https://x/"], "https://x/") == ""
    assert paragraph_spans([], "r") == ""

