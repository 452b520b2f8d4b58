"""``ask`` over runs: a reader names a passage (a run of a record's paragraphs); the answer holds each of
its paragraphs verbatim, with its own ``record#n``, deduplicated, in time order, within the budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from episteme_core.ask.candidates import candidates_of
from episteme_core.ask.memory import MemoryChunk, MemoryShard
from episteme_core.ask.run import AskOptions, ask
from episteme_core.kernel.loader import load_plugins
from episteme_core.records.convert import unstructure
from episteme_core.store.home import Home
from episteme_core.testing import invoke, validate

from .conftest import Warnings

PLUGINS = load_plugins()
FILLER = "The afternoon went by and the weather stayed much the same as it had been all week."


def _book(folder: Path, paragraphs: list[str]) -> Path:
    corpus = folder / "shelf"
    corpus.mkdir(parents=True)
    (corpus / "voyage.txt").write_text("\n\n".join(paragraphs), "utf-8")
    return corpus


def test_the_answer_holds_the_named_runs_paragraphs_each_cited(tmp_path: Path) -> None:
    paragraphs = [FILLER] * 8 + ["The captain stood on deck.", "His leg was carved from ivory.",
                                 "It tapped on the planks at night."] + [FILLER] * 8
    home = tmp_path / "home"
    result = invoke("--home", str(home), "ingest", "books", str(_book(tmp_path, paragraphs)), "--json")
    assert result.exit_code == 0, result.stderr
    answer = invoke("--home", str(home), "ask", "captain ivory leg", "--json")
    assert answer.exit_code == 0, answer.stderr
    data = answer.envelope["data"]
    validate(data, "ask-result")
    refs = [p["ref"] for p in data["paragraphs"]]
    # the words sit in two neighbouring paragraphs: one run names both, each with its own number
    assert {"book:shelf/voyage#9", "book:shelf/voyage#10"} <= set(refs)
    assert len(refs) == len(set(refs)), "a paragraph of overlapping runs is shown once"
    for p in data["paragraphs"]:
        shown = invoke("--home", str(home), "show", p["ref"], "--json").envelope["data"]["paragraph"]
        assert shown["text"] == p["text"] == paragraphs[int(p["ref"].rsplit("#", 1)[1]) - 1]
    assert data["chars"] == sum(len(p["text"]) for p in data["paragraphs"]) <= data["budget"]
    numbers = [int(r.rsplit("#", 1)[1]) for r in refs]
    assert numbers == sorted(numbers)  # one record, one time: record order


def test_a_run_is_one_candidate_and_marked_paragraphs_leave_it(tmp_path: Path) -> None:
    record = "chat:claude/p/s"
    chunks = [
        MemoryChunk(f"{record}#1", "Which port does the dev server use?", record, 1, "2024-01-01T00:00:01Z",
                    "claude"),
        MemoryChunk(f"{record}#2", "ss -ltn output: the dev server listens on port 4000", record, 2,
                    "2024-01-01T00:00:02Z", "claude", {"marked": True}),
        MemoryChunk(f"{record}#3", "It uses port 4000.", record, 3, "2024-01-01T00:00:03Z", "claude"),
    ]
    shard = MemoryShard("claude-0001", "claude", chunks)
    plain = candidates_of(shard, "dev server port", 10, since=None, include_marked=False)
    assert len(plain) == 1 and [p.ref for p in plain[0].paragraphs] == [f"{record}#1", f"{record}#3"]
    assert plain[0].text == "Which port does the dev server use?\n\nIt uses port 4000."
    marked = candidates_of(shard, "dev server port", 10, since=None, include_marked=True)
    assert [p.ref for p in marked[0].paragraphs] == [f"{record}#1", f"{record}#2", f"{record}#3"]
    since = candidates_of(shard, "dev server port", 10, since="2024-01-01T00:00:03Z", include_marked=True)
    assert [p.ref for p in since[0].paragraphs] == [f"{record}#3"]


def test_budget_takes_whole_paragraphs_of_runs_in_priority_order(tmp_path: Path) -> None:
    record = "book:c/x"
    chunks = [MemoryChunk(f"{record}#{n}", f"whale {n} " + "x" * 40, record, n, None, "books")
              for n in range(1, 6)]
    shard = MemoryShard("books-0001", "books", chunks)
    warnings = Warnings()
    result = ask(Home(tmp_path / "absent"), AskOptions(question="whale", budget=100, reader="bm25"),
                 plugins=PLUGINS, warn=warnings, shards=[shard])
    data = unstructure(result)
    validate(data, "ask-result")
    assert result.chars <= 100 and len(result.paragraphs) == 2
    assert [p.ref for p in result.paragraphs] == [f"{record}#1", f"{record}#2"]  # the run's reading order
    assert {o.ref for o in result.omitted} == {f"{record}#{n}" for n in (3, 4, 5)}


def test_candidates_are_reranked_by_proximity_as_query_ranks() -> None:
    """Two passages with the same words score alike; the one where they sit together comes first,
    its score raised by the proximity bonus (``index.proximity``)."""
    from episteme_core.search.proximity import bonus
    from episteme_core.text.analyzer import words

    spread = MemoryChunk("chat:claude/p/a#1", f"harpoon {FILLER} whale", "chat:claude/p/a", 1, None, "claude")
    close = MemoryChunk("chat:claude/p/b#1", f"{FILLER} harpoon whale", "chat:claude/p/b", 1, None, "claude")
    shard = MemoryShard("claude-0001", "claude", [spread, close])
    found = candidates_of(shard, "whale harpoon", 10, since=None, include_marked=True)
    assert [c.ref for c in found] == ["chat:claude/p/b#1", "chat:claude/p/a#1"]
    apart = len(words(FILLER)) + 1
    assert found[0].score - found[1].score == pytest.approx(bonus(1) - bonus(apart))


def test_a_run_shows_the_paragraphs_that_hold_the_question_and_their_neighbours() -> None:
    """A run scored as a whole keeps, in the answer, each paragraph holding a term of the question
    and the paragraphs beside it; a list of contents that holds none stays out of the budget. A
    passage none of whose paragraphs holds a term is kept whole."""
    from episteme_core.ask.answer import StoredParagraph
    from episteme_core.ask.candidates import focused

    def run(texts: list[str]) -> list[StoredParagraph]:
        return [StoredParagraph(ref=f"book:x/y#{n}", record_id="book:x/y", n=n, text=text, time=None,
                                source="books", shard="books", chunk_id=f"c{n}", score=1.0, citation={})
                for n, text in enumerate(texts, start=1)]

    paragraphs = run(["Contents", "Chapter I", "Chapter II", "Chapter III", "Heading to Chapter I.",
                      "A single man of good fortune must be in want of a wife.", "Everybody knew it.",
                      "Mrs. Bennet spoke.", "The end of the chapter."])
    kept = focused(paragraphs, {"fortun", "wife"}, ["english"])
    assert [p.n for p in kept] == [5, 6, 7]
    assert focused(paragraphs, {"whale"}, ["english"]) == paragraphs
    assert focused(paragraphs[:2], {"fortun"}, ["english"]) == paragraphs[:2]
