"""A book's non-prose paragraphs (contents, lists of illustrations, captions) are marked kinds at ingest:
``show`` prints them, ``ask`` leaves them out, ``query`` ranks them below prose."""

from __future__ import annotations

from pathlib import Path

from episteme_core.personal import frontmatter
from episteme_core.personal.books import read_book
from episteme_core.testing import invoke

CONTENTS = ["CONTENTS", "CHAPTER 1. The Harbour.", "CHAPTER 2. The Whale Road.", "EPILOGUE."]
ILLUSTRATIONS = ["[Illustration: List of Illustrations.]", "PAGE",
                 "The captain on his deck                     iv",
                 "“A single man of fortune”                    12",
                 "Heading to Chapter II.  ......  27"]
BODY = ["CHAPTER 1. The Harbour.",
        "It is a truth widely known that a single man of good fortune must be in want of a wife.",
        "[Illustration]", "[Illustration:", "A ship, drawn at sea", "]",
        "CHAPTER 2. The Whale Road.", "The captain of the ship stood on the deck at dawn; page 12 was torn.",
        "He counted: 1", "EPILOGUE.", "They sailed home."]


def test_the_shapes_of_front_matter() -> None:
    kinds = frontmatter.kinds(CONTENTS + ILLUSTRATIONS + BODY)
    assert kinds[: len(CONTENTS)] == ["contents"] * len(CONTENTS)
    assert kinds[len(CONTENTS) : len(CONTENTS) + len(ILLUSTRATIONS)] == ["caption"] + ["contents"] * 4
    body = kinds[len(CONTENTS) + len(ILLUSTRATIONS) :]
    # the headings the contents listed, prose, and a line ending in one number stay text
    assert body == ["text", "text", *["caption"] * 4, *["text"] * 5]


def test_entries_only_after_a_contents_heading_and_only_when_they_come_again() -> None:
    assert frontmatter.kinds(["CHAPTER 1. The Harbour.", "CHAPTER 1. The Harbour."]) == ["text", "text"]
    assert frontmatter.kinds(["Contents", "A line never seen again.", "Prose."]) == [
        "contents", "text", "text"]
    # a caption never closed within its bound stays text
    assert frontmatter.kinds(["[Illustration:"] + ["words"] * 20) == ["text"] + ["text"] * 20
    assert frontmatter.kinds(["Read the Project Gutenberg License before you copy this."]) == ["boilerplate"]
    assert frontmatter.kinds([]) == []


def _book(tmp_path: Path) -> Path:
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    filler = [f"Day {n} passed at sea with nothing to note but the weather and the wind." for n in range(80)]
    (shelf / "voyage.txt").write_text("\n\n".join(CONTENTS + ILLUSTRATIONS + filler + BODY) + "\n", "utf-8")
    return shelf


def test_marked_at_ingest_shown_left_out_of_ask_and_ranked_below_prose(tmp_path: Path) -> None:
    shelf = _book(tmp_path)
    record = read_book(shelf / "voyage.txt", "shelf", "voyage")
    assert [p.n for p in record.paragraphs if p.marked] == [*range(1, 10), 92, 93, 94, 95]
    home = tmp_path / "home"
    assert invoke("--home", str(home), "ingest", "books", str(shelf), "--json").exit_code == 0
    shown = invoke("--home", str(home), "show", "book:shelf/voyage#8", "--json").envelope["data"]["paragraph"]
    assert shown["text"] == ILLUSTRATIONS[3] and shown["marked"] is True
    answer = invoke("--home", str(home), "ask", "single man of fortune", "--json").envelope["data"]
    refs = [p["ref"] for p in answer["paragraphs"]]
    marked_refs = {f"book:shelf/voyage#{n}" for n in [*range(1, 10), 92, 93, 94, 95]}
    assert "book:shelf/voyage#91" in refs and not marked_refs & set(refs), refs
    everything = invoke("--home", str(home), "ask", "single man of fortune", "--include-marked", "--json")
    marked = {p["ref"]: p["markedAs"] for p in everything.envelope["data"]["paragraphs"]}
    assert marked.get("book:shelf/voyage#8") == "contents" and marked["book:shelf/voyage#91"] is None
    results = invoke("--home", str(home), "query", "--term", "captain deck", "--max-chars", "20000",
                     "--json").envelope["data"]["results"]
    first = results[0]["snippet"]
    assert "The captain of the ship stood on the deck" in first, [r["snippet"][:40] for r in results]
