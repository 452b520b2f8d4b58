"""The bm25 reader and coverage: deterministic choices that compare across shards."""

from __future__ import annotations

from episteme_core.ask.bm25_reader import Bm25Reader, default_bm25
from episteme_core.ask.memory import MemoryChunk, MemoryShard
from episteme_core.ask.run import coverage_function
from episteme_core.records.reading import Candidate, ReaderSpec, ReadRequest


def test_top_and_ratio() -> None:
    request = ReadRequest("q", "s", "books", tuple(
        Candidate(f"p{i}", "t", float(10 - i), f"r#{i}", coverage=c)
        for i, c in enumerate([1.0, 0.2, 0.6, 0.5, 0.9, 0.7, 0.8], start=1)
    ))
    # top 10: every candidate above the coverage floor (0.4 of the best) scoring at least half the best
    assert default_bm25().read(request).labels == ("p1", "p3", "p4", "p5")
    every = Bm25Reader(ReaderSpec("b", "bm25", options={"score_ratio": 0.0}))
    assert every.read(request).labels == ("p1", "p3", "p4", "p5", "p6", "p7")
    narrow = Bm25Reader(ReaderSpec("b", "bm25", options={"top": 2, "ratio": 0.75, "score_ratio": 0.0}))
    assert narrow.read(request).labels == ("p1", "p5")


def test_a_passage_scoring_under_half_the_best_of_any_shard_is_not_named() -> None:
    """The score floor is a share of the best score of the question's candidates in any shard
    (``best_score``; scores compare across shards), at the bound kept, just under it left out."""
    request = ReadRequest("q", "s", "books", (
        Candidate("p1", "t", 5.0, "r#1", coverage=1.0), Candidate("p2", "t", 4.999, "r#2", coverage=1.0)))
    assert default_bm25().read(request).labels == ("p1", "p2")  # this shard's best is 5.0
    elsewhere = ReadRequest("q", "s", "books", request.candidates, best_score=10.0)
    assert default_bm25().read(elsewhere).labels == ("p1",)  # 5.0 is half of 10.0; 4.999 is under
    assert Bm25Reader(ReaderSpec("b", "bm25", options={"score_ratio": 0.0})).read(elsewhere).labels == (
        "p1", "p2")
    assert default_bm25().read(ReadRequest("q", "s", "books", ())).labels == ()


def test_a_shard_grazing_common_words_names_nothing() -> None:
    request = ReadRequest("q", "s", "books", (Candidate("p1", "t", 9.0, "r#1", coverage=0.1),),
                          best_coverage=0.9)
    assert default_bm25().read(request).labels == ()


def test_coverage_weighs_rare_terms_across_shards() -> None:
    big = MemoryShard("books-0001", "books", [
        MemoryChunk(f"b#{i}", "it does not start here" if i % 2 else "nothing", "b", i, None, "books")
        for i in range(1, 200)
    ])
    small = MemoryShard("claude-0001", "claude", [
        MemoryChunk("c#1", "mix phx.server does not start", "c", 1, None, "claude"),
    ])
    cover = coverage_function([big, small], "phx.server does not start")
    assert cover("mix phx.server does not start") == 1.0
    assert cover("it does not start here") < 0.5 * cover("phx server")
    assert cover("unrelated") == 0.0
