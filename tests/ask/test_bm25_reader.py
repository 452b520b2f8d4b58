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
    # top 10: every candidate above the floor
    assert default_bm25().read(request).labels == ("p1", "p3", "p4", "p5", "p6", "p7")
    narrow = Bm25Reader(ReaderSpec("b", "bm25", options={"top": 2, "ratio": 0.75}))
    assert narrow.read(request).labels == ("p1", "p5")
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
