"""``query --rerank NAME``: a reader kind's optional ``rerank`` reorders query's first results, opt in.

The kinds come from a real plugin distribution (``tests/fixtures/plugins/site-rerank``) loaded through
its entry point; the kernel gets them from the registry only."""

from __future__ import annotations

import json
from pathlib import Path

from episteme_core.testing import invoke, validate

BOOK = ([f"The whale {'whale ' * n}swam past the ship on day {n}, and the sailors watched the sea."
         for n in range(6)]
        + [f"The ship sailed on through the sea, day {n}, with no sign of it at all." for n in range(6)])


def _home(tmp_path: Path, readers: list[dict[str, object]] | None = None) -> Path:
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    filler = "\n\n".join(f"Nothing happened on the morning of day {n} but wind and rain." for n in range(60))
    (shelf / "log.txt").write_text("\n\n".join(f"{p}\n\n{filler}" for p in BOOK), "utf-8")
    home = tmp_path / "home"
    assert invoke("--home", str(home), "ingest", "books", str(shelf), "--json").exit_code == 0
    if readers is not None:
        (home / "config.json").write_text(json.dumps({"readers": readers}), "utf-8")
    return home


def _query(home: Path, *extra: str) -> dict:  # type: ignore[type-arg]
    result = invoke("--home", str(home), "query", "--term", "ship sea", "--limit", "5", *extra, "--json")
    assert result.exit_code == 0, result.stderr
    validate(result.envelope["data"], "query-result")
    return result.envelope["data"]  # type: ignore[no-any-return]


def test_rerank_reorders_by_the_kinds_scores_ties_in_query_order(plugin_site, tmp_path: Path) -> None:
    plugin_site("rerank")
    home = _home(tmp_path, [{"name": "whales", "kind": "counter", "word": "whale"}])
    plain = _query(home)
    assert plain["rerank"] is None and all(r["rerankScore"] is None for r in plain["results"])
    by_config = _query(home, "--rerank", "whales")
    by_kind = _query(home, "--rerank", "counter")  # a kind with no entry: its defaults (word whale)
    assert by_config["rerank"] == "whales" and by_kind["rerank"] == "counter"
    for data in (by_config, by_kind):
        counts = [r["snippet"].lower().count("whale") for r in data["results"]]
        assert counts == sorted(counts, reverse=True) and counts[0] >= 5
        assert [r["rerankScore"] for r in data["results"]] == [float(c) for c in counts]
        assert [r["rank"] for r in data["results"]] == [1, 2, 3, 4, 5]
    assert [r["chunkId"] for r in by_config["results"]] == [r["chunkId"] for r in by_kind["results"]]
    # it reorders the first 20 results: the passages the counter likes were further down for BM25
    assert [r["chunkId"] for r in by_config["results"]] != [r["chunkId"] for r in plain["results"]]
    # ties (a passage without the word scores 0) keep query's order
    zero = [r["chunkId"] for r in _query(home, "--rerank", "whales", "--limit", "20")["results"]
            if r["rerankScore"] == 0.0]
    order = [r["chunkId"] for r in _query(home, "--limit", "20")["results"]]
    assert zero == [c for c in order if c in zero]
    page = _query(home, "--rerank", "whales", "--offset", "2", "--limit", "2")
    assert [r["chunkId"] for r in page["results"]] == [r["chunkId"] for r in by_config["results"][2:4]]
    assert page["nextOffset"] == 4


def test_a_kind_without_rerank_and_an_unknown_name_are_refused(plugin_site, tmp_path: Path) -> None:
    plugin_site("rerank")
    home = _home(tmp_path, [{"name": "flat", "kind": "plain"}])
    for name, kind in (("flat", "plain"), ("bm25", "bm25")):
        refused = invoke("--home", str(home), "query", "--term", "ship", "--rerank", name, "--json")
        assert refused.exit_code == 2, refused.stderr
        error = refused.envelope["error"]
        assert error["code"] == "INVALID_USAGE" and f"reader kind {kind!r} has no rerank" in error["message"]
        assert error["details"]["rerankKinds"] == ["counter", "miscount"]
    unknown = invoke("--home", str(home), "query", "--term", "ship", "--rerank", "nope", "--json")
    assert unknown.exit_code == 2 and "neither a configured reader nor a reader kind" in \
        unknown.envelope["error"]["message"]
    wrong = invoke("--home", str(home), "query", "--term", "ship", "--rerank", "miscount", "--json")
    assert wrong.exit_code == 6 and wrong.envelope["error"]["code"] == "PROCESSING_FAILED"


def test_pages_of_one_size_show_each_result_once_and_past_the_window_keep_querys_order(
        plugin_site, tmp_path: Path) -> None:
    """The second stage reorders the first max(limit, 20) results whatever the offset: following
    nextOffset shows every result once (a window that grew with the offset let a passage it
    reordered into an earlier place show twice and another never), and results past it are in
    query's order, unscored by the stage."""
    plugin_site("rerank")
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    filler = "\n\n".join(f"Nothing happened on the morning of day {n} but wind and rain." for n in range(60))
    # the more whales a passage holds the longer it is, so BM25 ranks it lower and the counter higher
    lines = [f"The ship sailed the sea on day {n}, {'and a whale ' * (n % 9)}the crew slept."
             for n in range(36)]
    (shelf / "log.txt").write_text("\n\n".join(f"{line}\n\n{filler}" for line in lines), "utf-8")
    home = tmp_path / "home"
    assert invoke("--home", str(home), "ingest", "books", str(shelf), "--json").exit_code == 0
    everything = _query(home, "--limit", "100")["results"]
    assert len(everything) == 36
    shown: list[dict] = []  # type: ignore[type-arg]
    offset: int | None = 0
    while offset is not None:
        page = _query(home, "--rerank", "counter", "--offset", str(offset))
        shown += page["results"]
        offset = page["nextOffset"]
    assert sorted(r["chunkId"] for r in shown) == sorted(r["chunkId"] for r in everything)
    assert [r["rank"] for r in shown] == list(range(1, 37))
    window = shown[:20]
    assert [r["rerankScore"] for r in window] == sorted((r["rerankScore"] for r in window), reverse=True)
    first_twenty = {r["chunkId"] for r in everything[:20]}
    assert {r["chunkId"] for r in window} == first_twenty
    assert [r["chunkId"] for r in shown[20:]] == [r["chunkId"] for r in everything[20:]]
    assert all(r["rerankScore"] is None for r in shown[20:])
