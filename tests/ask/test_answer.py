"""Answer assembly: union, dedup, time order, verbatim text, whole paragraphs within the budget."""

from __future__ import annotations

from episteme_core.ask.answer import Named, StoredParagraph, assemble, parse_time


def para(ref: str, text: str, time: str | None, score: float = 1.0,
         chunk: str | None = None) -> StoredParagraph:
    record, _, n = ref.partition("#")
    return StoredParagraph(ref=ref, record_id=record, n=int(n), text=text, time=time, source="books",
                           shard="books-0001", chunk_id=chunk or ref, score=score)


def named(p: StoredParagraph, rank: int = 0, rel: float = 1.0) -> Named:
    return Named(p, "bm25", "p1", rank, rel)


def test_time_order_with_untimed_last() -> None:
    a = para("r:a#1", "late", "2024-01-02T00:00:00+02:00")
    b = para("r:b#1", "early", "2023-12-31")
    c = para("r:c#1", "untimed", None)
    d = para("r:d#1", "utc", "2024-01-01T23:00:00Z")
    out = assemble([named(a), named(c), named(b), named(d)], 1000)
    assert [p.text for p in out.paragraphs] == ["early", "late", "utc", "untimed"]


def test_dedup_by_chunk_ref_and_text() -> None:
    a = para("r:a#1", "same words", "2020-01-01")
    again = para("r:a#1", "same words", "2020-01-01")
    copy = para("r:b#4", "same words", "2021-01-01")
    other = para("r:c#1", "other", "2022-01-01")
    out = assemble([named(a), named(again), named(copy), named(other)], 1000)
    assert [p.ref for p in out.paragraphs] == ["r:a#1", "r:c#1"]
    assert out.paragraphs[0].also_at == ["r:b#4"]
    # the same words laid out otherwise (another rendering of one document) are the same text
    spaced = para("r:d#2", "same\n  words ", "2021-01-01")
    out = assemble([named(a), named(spaced)], 1000)
    assert [p.ref for p in out.paragraphs] == ["r:a#1"] and out.paragraphs[0].also_at == ["r:d#2"]


def test_budget_keeps_whole_paragraphs_best_first_and_lists_the_rest() -> None:
    big = para("r:a#1", "x" * 60, "2020-01-01")
    best = para("r:b#1", "y" * 50, "2021-01-01")
    small = para("r:c#1", "z" * 10, "2019-01-01")
    out = assemble([named(big, rank=1), named(best, rank=0), named(small, rank=2)], 60)
    assert [p.ref for p in out.paragraphs] == ["r:c#1", "r:b#1"]  # time order
    assert out.chars == 60 and out.ranked == ["r:b#1", "r:c#1"]
    assert [(o.ref, o.chars, o.reason) for o in out.omitted] == [("r:a#1", 60, "budget")]


def test_budget_at_and_just_past_the_bound() -> None:
    p = para("r:a#1", "x" * 100, "2020-01-01")
    assert len(assemble([named(p)], 100).paragraphs) == 1
    out = assemble([named(p)], 99)
    assert out.paragraphs == [] and out.omitted[0].chars == 100 and out.chars == 0


def test_rank_interleaves_shards_and_the_score_breaks_ties() -> None:
    """Within a rank the higher score goes first (scores of shards compare: one idf over them all),
    then the higher score relative to its shard's best."""
    a1 = para("r:a#1", "a1", "2020-01-01", score=2.0)
    a2 = para("r:a#2", "a2", "2020-01-01", score=1.8)
    b1 = para("r:b#1", "b1", "2020-01-01", score=5.0)
    out = assemble([named(a1, 0, 1.0), named(a2, 1, 0.9), named(b1, 0, 1.0)], 1000)
    assert out.ranked == ["r:b#1", "r:a#1", "r:a#2"]
    c1 = para("r:c#1", "c1", "2020-01-01", score=2.0)
    out = assemble([named(a1, 0, 0.5), named(c1, 0, 1.0)], 1000)
    assert out.ranked == ["r:c#1", "r:a#1"]


def test_parse_time_forms() -> None:
    assert parse_time("2024-05-01").isoformat() == "2024-05-01T00:00:00+00:00"
    assert parse_time("2024-05-01T12:00:00Z").hour == 12
    assert parse_time("yesterday") is None and parse_time(None) is None


def test_a_time_whose_utc_instant_leaves_the_calendar_counts_as_no_time() -> None:
    # Found by the AnswersInTimeOrder law: astimezone raised OverflowError and failed the whole answer.
    assert parse_time("0001-01-01T00:00:00+05:00") is None
    assert parse_time("9999-12-31T23:59:59-05:00") is None
    assert parse_time("0001-01-01T06:00:00+05:00").isoformat() == "0001-01-01T01:00:00+00:00"


def test_the_first_passage_shows_whole_when_it_fits_two_thirds_of_the_budget_the_rest_what_bears() -> None:
    import attrs

    from episteme_core.ask.answer import FIRST_PASSAGE_SHARE, shown

    passage = [attrs.evolve(para(f"r:a#{n}", "w" * 100, None), bearing=n == 2) for n in (1, 2, 3)]
    assert [p.n for p in shown(passage, 0, 450)] == [2, 1, 3]  # 300 characters fit two thirds of 450
    assert [p.n for p in shown(passage, 0, 449)] == [2]  # past two thirds: what bears, as any other
    assert [p.n for p in shown(passage, 1, 100_000)] == [2]  # not the first: what bears only
    assert FIRST_PASSAGE_SHARE == 2 / 3
    # given what it shows when named first (``candidates.widened``), the first shows that, what bears
    # first
    window = [passage[1], passage[2]]
    assert [p.n for p in shown(passage, 0, 449, window)] == [2, 3]
    assert [p.n for p in shown(passage, 1, 449, window)] == [2]


def test_headings_and_labels_are_named_after_the_full_paragraphs_of_their_passage() -> None:
    """A chapter title or a label bears on the question with its passage, but the first places go to
    the paragraphs that can hold an answer; each group keeps its reading order, and the answer still
    holds every one of them."""
    import attrs

    from episteme_core.ask.answer import LABEL_CHARS, shown

    texts = ["CHAPTER XLIII.", "w" * 200, "Examples:", "x" * LABEL_CHARS, "y" * (LABEL_CHARS - 1)]
    passage = [attrs.evolve(para(f"r:a#{n}", text, None)) for n, text in enumerate(texts, start=1)]
    assert [p.n for p in shown(passage, 1, 3000)] == [2, 4, 1, 3, 5]  # at the limit: a full paragraph
    assert [p.n for p in shown(passage, 0, 3000)] == [2, 4, 1, 3, 5]
    assert [p.n for p in shown(passage, 0, 3000, passage[:2])] == [2, 1]
    answer = assemble([attrs.evolve(named(p), position=i) for i, p in enumerate(shown(passage, 1, 3000))],
                      3000)
    assert [p.n for p in answer.paragraphs] == [1, 2, 3, 4, 5]  # shown in reading (time) order
    assert [p.priority for p in answer.paragraphs] == [3, 1, 4, 2, 5]


def test_the_paragraph_holding_most_of_the_question_leads_its_passage() -> None:
    """The full paragraph that holds the most of the question's terms is named first, the others in
    reading order after it (an answer often lies beside the paragraph that holds the words), labels
    last; equals keep their reading order."""
    import attrs

    from episteme_core.ask.answer import named_order

    held = [0.0, 1.5, 0.0, 3.0, 3.0]
    texts = ["w" * 100, "x" * 100, "Examples:", "y" * 100, "z" * 100]
    passage = [attrs.evolve(para(f"r:a#{n}", text, None), held=weight)
               for n, (text, weight) in enumerate(zip(texts, held, strict=True), start=1)]
    assert [p.n for p in named_order(passage)] == [4, 1, 2, 5, 3]
    assert [p.n for p in named_order(passage[:3])] == [2, 1, 3]
    # a short line that holds the most leads (a line of dialogue can be the answer); of equals, a
    # full paragraph does
    line = [*passage[:2], attrs.evolve(passage[2], held=2.0)]
    assert [p.n for p in named_order(line)] == [3, 1, 2]
    assert [p.n for p in named_order([attrs.evolve(passage[2], held=1.5), passage[1]])] == [2, 3]
    assert [p.n for p in named_order([passage[2]])] == [3]
    assert named_order([]) == []


def test_labels_that_do_not_lead_their_passage_come_after_every_other_paragraph() -> None:
    """A passage's heading is context: the next passage's paragraphs are named before it, and when
    the budget runs short it is the heading that is left out; a label that leads its passage (a
    passage of one line) keeps its place."""
    import attrs

    first = [para("r:a#1", "CHAPTER I.", None, 9.0), para("r:a#2", "f" * 100, None, 9.0)]
    second = [para("r:a#7", "s" * 100, None, 5.0)]
    alone = [para("r:a#9", "A line.", None, 4.0)]
    named = [attrs.evolve(named_for(p, rank), position=i)
             for rank, passage in enumerate((first[::-1], second, alone))
             for i, p in enumerate(passage)]
    answer = assemble(named, 3000)
    assert {p.n: p.priority for p in answer.paragraphs} == {2: 1, 7: 2, 9: 3, 1: 4}
    tight = assemble(named, 207)  # the three that lead their passages fit; the heading does not
    assert [p.n for p in tight.paragraphs] == [2, 7, 9] and [o.n for o in tight.omitted] == [1]


def named_for(p: StoredParagraph, rank: int) -> Named:
    return Named(p, "bm25", f"p{rank + 1}", rank, 1.0)
