"""``ask`` over runs: a reader names a passage (a run of a record's paragraphs); the answer holds each of
its paragraphs verbatim, with its own ``record#n``, deduplicated, in time order, within the budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from episteme_core.ask.answer import StoredParagraph, shown
from episteme_core.ask.candidates import (
    EXCERPT_CHARS,
    EXCERPT_FROM,
    bearing,
    candidates_of,
    continued,
    excerpted,
    weighed,
    widened,
)
from episteme_core.ask.memory import MemoryChunk, MemoryShard
from episteme_core.ask.run import AskOptions, ask
from episteme_core.errors import EpistemeError
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


def test_tool_output_is_offered_labelled_and_the_policy_says_what_else() -> None:
    """Tool output is a candidate like any paragraph (an agent's answers are often there), labelled in
    the answer; a model's thinking is left out unless every marked kind is asked for; prose only leaves
    the tool output out too."""
    record = "chat:claude/p/s"
    kinds = [("text", None), ("tool_result", True), ("thinking", True), ("text", None)]
    texts = ["Which port does the dev server use?", "ss -ltn output: the dev server listens on port 4000",
             "I think the dev server port is in the config.", "It uses port 4000."]
    chunks = [MemoryChunk(f"{record}#{n}", text, record, n, f"2024-01-01T00:00:0{n}Z", "claude",
                          {"paragraphKind": kind, **({"marked": True} if marked else {})})
              for n, (text, (kind, marked)) in enumerate(zip(texts, kinds, strict=True), start=1)]
    shard = MemoryShard("claude-0001", "claude", chunks)

    def refs(marked: str) -> list[str]:
        found = candidates_of(shard, "dev server port", 10, since=None, marked=marked)
        assert len(found) == 1
        return [p.ref.rsplit("#", 1)[1] for p in found[0].paragraphs]

    assert refs("offer") == ["1", "2", "4"]
    assert refs("exclude") == ["1", "4"]
    assert refs("include") == ["1", "2", "3", "4"]
    since = candidates_of(shard, "dev server port", 10, since="2024-01-01T00:00:03Z", marked="include")
    assert [p.ref for p in since[0].paragraphs] == [f"{record}#3", f"{record}#4"]
    result = ask(Home(Path("/nonexistent-home")), AskOptions(question="dev server port", reader="bm25"),
                 plugins=PLUGINS, warn=Warnings(), shards=[shard])
    validate(unstructure(result), "ask-result")
    assert [(p.ref, p.marked_as) for p in result.paragraphs] == [
        (f"{record}#1", None), (f"{record}#2", "tool output"), (f"{record}#4", None)]
    prose = ask(Home(Path("/nonexistent-home")),
                AskOptions(question="dev server port", reader="bm25", exclude_marked=True),
                plugins=PLUGINS, warn=Warnings(), shards=[shard])
    assert [p.ref for p in prose.paragraphs] == [f"{record}#1", f"{record}#4"]
    with pytest.raises(EpistemeError) as refused:
        ask(Home(Path("/nonexistent-home")),
            AskOptions(question="port", include_marked=True, exclude_marked=True), plugins=PLUGINS,
            warn=Warnings(), shards=[shard])
    assert refused.value.code == "INVALID_USAGE"


def test_budget_takes_whole_paragraphs_best_passage_first(tmp_path: Path) -> None:
    """Passages are taken best first across shards (scores compare: one idf over them all); a
    paragraph that does not fit is omitted, and a smaller one after it may still fit."""
    # 66 characters each: full paragraphs, not labels (which would be taken after the others)
    strong = [MemoryChunk(f"book:c/x#{n}", f"whale whale {n}. " + "x" * 50 + ".", "book:c/x", n, None,
                          "books") for n in (1, 2)]
    # each weak passage scores half the strong one's: at the reader's score floor, so still named
    weak = [MemoryChunk("book:c/y#1", "the whale whale. " + "y" * 64 + ".", "book:c/y", 1, None, "books"),
            MemoryChunk("book:c/z#1", "whale whale.", "book:c/z", 1, None, "books")]
    shards = [MemoryShard("books-0001", "books", strong), MemoryShard("books-0002", "books", weak)]
    result = ask(Home(tmp_path / "absent"), AskOptions(question="whale", budget=150, reader="bm25"),
                 plugins=PLUGINS, warn=Warnings(), shards=shards)
    validate(unstructure(result), "ask-result")
    assert result.chars == 144 <= 150
    assert [p.ref for p in sorted(result.paragraphs, key=lambda p: p.priority)] == [
        "book:c/x#1", "book:c/x#2", "book:c/z#1"]
    assert [o.ref for o in result.omitted] == ["book:c/y#1"]


def test_candidates_are_reranked_by_proximity_as_query_ranks() -> None:
    """Two passages with the same words score alike; the one where they sit together comes first,
    its score raised by the proximity bonus (``index.proximity``)."""
    from episteme_core.search.proximity import bonus
    from episteme_core.text.analyzer import words

    spread = MemoryChunk("chat:claude/p/a#1", f"harpoon {FILLER} whale", "chat:claude/p/a", 1, None, "claude")
    close = MemoryChunk("chat:claude/p/b#1", f"{FILLER} harpoon whale", "chat:claude/p/b", 1, None, "claude")
    shard = MemoryShard("claude-0001", "claude", [spread, close])
    found = candidates_of(shard, "whale harpoon", 10, since=None, marked="include")
    assert [c.ref for c in found] == ["chat:claude/p/b#1", "chat:claude/p/a#1"]
    apart = len(words(FILLER)) + 1
    assert found[0].score - found[1].score == pytest.approx(bonus(1) - bonus(apart))


def _run(texts: list[str]) -> list[StoredParagraph]:
    return [StoredParagraph(ref=f"book:x/y#{n}", record_id="book:x/y", n=n, text=text, time=None,
                            source="books", shard="books", chunk_id=f"c{n}", score=1.0, citation={})
            for n, text in enumerate(texts, start=1)]


def test_a_passage_shows_the_paragraphs_that_bear_on_the_question() -> None:
    """A run is scored whole, but an answer shows the paragraphs holding its best run of question
    terms, and a neighbour only where it continues one of them (the same sentence); a list of contents
    beside them stays out of the budget. A passage holding no term shows its first paragraph."""
    paragraphs = _run(["Contents", "Chapter I", "Chapter II", "Heading to Chapter I.",
                       "A single man of good fortune must be in want of a wife,", "so everybody said.",
                       "The day went by. " * 30, "Mrs. Bennet spoke of fortune.", "The end of the chapter."])
    weights = {"fortun": 2.0, "wife": 3.0}
    # the best run (fortune, wife) wins over a lone term 500 characters on; the next paragraph ends
    # the sentence the run is in
    assert [p.n for p in bearing(paragraphs, weights, ["english"])] == [5, 6]
    near = _run(["A man of good fortune wants a wife.", "Nothing here.", "Her fortune was small."])
    assert [p.n for p in bearing(near, {"fortun": 1.0}, ["english"])] == [1, 2, 3]  # all the run touches
    assert [p.n for p in bearing(paragraphs, {"whale": 1.0}, ["english"])] == [1]
    assert bearing(paragraphs[:1], weights, ["english"]) == paragraphs[:1]
    # a paragraph that starts mid-sentence brings the one it continues
    split = _run(["The sentence began here and", "went on about a wife.", "Another one."])
    assert [p.n for p in bearing(split, {"wife": 1.0}, ["english"])] == [1, 2]
    assert continued(split, {2}) == {2}


def test_a_long_paragraph_shows_its_best_window_verbatim() -> None:
    """A paragraph over EXCERPT_FROM characters is shown as its best window of EXCERPT_CHARS, a slice
    of the stored text with its span; one at the bound is shown whole."""
    filler = "Nothing to see in this sentence at all. "
    at = "x" * (EXCERPT_FROM - 1) + "."
    assert excerpted(_run([at])[0], {"whale": 1.0}, ["english"]).span is None
    text = filler * 40 + "The white whale took his leg off. " + filler * 10
    assert len(text) > EXCERPT_FROM
    shown = excerpted(_run([text])[0], {"whale": 2.0, "leg": 1.0}, ["english"])
    assert shown.span is not None and shown.stored_chars == len(text)
    assert text[shown.span[0] : shown.span[1]] == shown.text and len(shown.text) <= EXCERPT_CHARS
    assert "The white whale took his leg off." in shown.text
    past = "x" * EXCERPT_FROM + "."
    assert excerpted(_run([past])[0], {"x": 1.0}, ["english"]).span == (0, EXCERPT_CHARS)


def test_the_passage_named_first_is_shown_whole_or_its_long_paragraph_widened() -> None:
    """``widened``: a passage that fits the width is shown whole, its long paragraphs too; one that
    does not shows what bears, a long bearing paragraph's window widened around what it showed into
    the room left (a verbatim slice, from the sentence it began in); nothing that does not bear is
    added."""
    filler = "Nothing to see in this sentence at all. "
    long = filler * 40 + "The white whale took his leg off. It sank at noon. " + filler * 80
    paragraphs = _run(["A whale!", long, filler * 3, "The end."])
    weights = {"whale": 2.0, "leg": 1.0}
    kept = weighed(paragraphs, weights, ["english"])
    assert [p.held > 0 for p in kept] == [True, True, False, False]
    compact = [excerpted(p, weights, ["english"]) for p in kept]
    assert [p.n for p in compact if p.bearing] == [2] and compact[1].span is not None
    assert len(compact[1].text) <= EXCERPT_CHARS
    wide = widened(kept, compact, 2000)
    assert [p.n for p in wide] == [2]  # what bears only
    shown = wide[0]
    assert shown.span is not None and long[shown.span[0] : shown.span[1]] == shown.text
    assert compact[1].text in shown.text and len(compact[1].text) < len(shown.text) <= 2000
    assert shown.span[0] == compact[1].span[0]  # from the sentence the compact window began in
    whole = widened(kept, compact, 100_000)
    assert whole == tuple(kept) and whole[1].text == long  # it fits: all of it, whole
    assert widened(kept, compact, 10) == tuple(c for c in compact if c.bearing)  # no room: as offered


def test_the_first_passage_also_shows_the_paragraph_that_holds_the_most_of_the_question() -> None:
    """``widened``: the best run of question terms can span the ends of two short paragraphs while
    another paragraph holds more of the question's terms, spread wider than a run; the passage named
    first shows that paragraph too (a passage named later shows only its best run's)."""
    filler = "Nothing to see in this sentence at all. "
    spread = "A whale. " + filler * 12 + "A harpoon. " + filler * 12 + "A leg at sea."
    paragraphs = _run(["He held the harpoon.", "The whale took his leg.", filler * 14, spread])
    weights = {"whale": 2.0, "harpoon": 2.0, "leg": 1.0, "sea": 1.0}
    kept = weighed(paragraphs, weights, ["english"])
    assert [p.bearing for p in kept] == [True, True, False, False]
    assert max(kept, key=lambda p: p.held).n == 4
    compact = [excerpted(p, weights, ["english"]) for p in kept]
    assert [p.n for p in widened(kept, compact, 1500)] == [1, 2, 4]


def test_the_first_passage_shows_the_paragraphs_between_what_it_shows_when_they_fit() -> None:
    """``widened``: between the paragraph that bears and the one that holds the most lies a line that
    holds no question term (a dialogue's reply, often the answer); the passage named first shows it
    when the stretch fits the room its others leave, and leaves it out (whole, never cut) when not.
    The most-held paragraph is still named before it."""
    filler = "Nothing to see in this sentence at all. "
    spread = "A whale. " + filler * 12 + "A harpoon. " + filler * 12 + "A leg at sea."
    between = "Yes, or I will never see her again, said she. " * 11
    paragraphs = _run(["He held the harpoon by the whale.", between, spread, filler * 14])
    weights = {"whale": 2.0, "harpoon": 2.0, "leg": 1.0, "sea": 1.0}
    kept = weighed(paragraphs, weights, ["english"])
    assert [p.bearing for p in kept] == [True, False, False, False]
    assert max(kept, key=lambda p: p.held).n == 3
    compact = [excerpted(p, weights, ["english"]) for p in kept]
    wide = widened(kept, compact, 2000)
    assert [p.n for p in wide] == [1, 2, 3] and wide[1].text == between  # the stretch 1-3, whole
    assert [p.n for p in widened(kept, compact, 1400)] == [1, 3]  # 506 characters do not fit 374
    assert [p.n for p in shown(kept, 0, 3000, wide)] == [1, 3, 2]  # what bears, the most-held, the rest


def test_the_first_passage_of_an_answer_widens_its_long_paragraph_the_next_do_not() -> None:
    """Through ``ask``: the passage named first shows its long bearing paragraph's window widened to
    two thirds of the budget (the answer often lies just past the question's words); a long paragraph
    of a passage named later shows its window of ``EXCERPT_CHARS``."""
    filler = "Nothing to see in this sentence at all. "
    first = MemoryChunk("book:c/x#1", f"{filler * 30}The whale, the whale and the harpoon met. {filler * 30}",
                        "book:c/x", 1, None, "books")
    later = MemoryChunk("book:c/y#1", f"{filler * 30}A harpoon missed a whale. {filler * 30}",
                        "book:c/y", 1, None, "books")
    shards = [MemoryShard("books-0001", "books", [first, later])]
    result = ask(Home(Path("/nonexistent-home")), AskOptions(question="whale harpoon", budget=3000,
                                                              reader="bm25"),
                 plugins=PLUGINS, warn=Warnings(), shards=shards)
    validate(unstructure(result), "ask-result")
    by_ref = {p.ref: p for p in result.paragraphs}
    assert EXCERPT_CHARS < by_ref["book:c/x#1"].chars <= 2000
    assert by_ref["book:c/y#1"].chars <= EXCERPT_CHARS
    for p in result.paragraphs:
        stored = shards[0].chunk(p.chunk_id).text
        assert p.excerpt is not None and p.excerpt.chars == len(stored)
        assert stored[p.excerpt.start : p.excerpt.end] == p.text
