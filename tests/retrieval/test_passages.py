"""Passages: runs of a record's paragraphs and of a section's chunks are scored together, overlapping
runs are shown once, scores of different shards compare, and old shards are refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from episteme_core.bm25.shards import open_shards
from episteme_core.search.units import merge_overlapping, plan_units, runs_of
from episteme_core.store.home import Home
from episteme_core.testing import invoke, validate
from episteme_core.text.analyzer import query_terms_for

from .conftest import make_document, ok

FILLER = "The morning passed quietly and nobody in the house said anything worth writing down at all."


def _book(source: str, paragraphs: list[str]) -> object:
    return make_document(source, [("Book", paragraphs)], kind="books", document_type="record",
                         times=[f"2026-01-{n:02d}T00:00:00Z" for n in range(1, len(paragraphs) + 1)])


def test_a_paragraph_is_found_by_the_words_of_its_neighbours(build) -> None:  # type: ignore[no-untyped-def]
    paragraphs = [FILLER] * 6 + ["The captain looked at the ivory leg.", "It was made from a whale's jaw.",
                                 "Nobody asked him about it again."] + [FILLER] * 6
    root = build([_book("book:c/moby", paragraphs)])
    data = ok("--home", str(root), "query", "--term", "captain ivory leg jaw", "--max-chars", "20000")
    best = data["results"][0]
    # one passage holds both paragraphs; each keeps its own record#n and its place in the passage
    refs = [p["ref"] for p in best["paragraphs"]]
    assert "book:c/moby#7" in refs and "book:c/moby#8" in refs
    assert best["snippetStart"] == 0 and len(best["snippet"]) == best["chunkChars"]
    for p in best["paragraphs"]:
        assert best["snippet"][p["start"]:p["end"]] == paragraphs[int(p["ref"].rsplit("#", 1)[1]) - 1]
    assert best["citation"]["link"].startswith("book:c/moby#")
    assert best["citation"]["paragraph"] == int(best["citation"]["link"].rsplit("#", 1)[1])
    validate(data, "query-result")


def test_runs_never_cross_records_and_results_never_repeat_a_paragraph(build) -> None:  # type: ignore[no-untyped-def]
    words = ["whale", "harpoon", "sea", "ship", "line", "boat"]
    paragraphs = [f"{FILLER} {words[i % 6]} {words[(i + 1) % 6]}" for i in range(30)]
    root = build([_book("book:c/a", paragraphs), _book("book:c/b", paragraphs[:10])])
    data = ok("--home", str(root), "query", "--term", "whale harpoon sea", "--limit", "100")
    seen: set[str] = set()
    for result in data["results"]:
        chunks = [p["chunkId"] for p in result["paragraphs"]] if result["paragraphs"] else [result["chunkId"]]
        assert not seen & set(chunks), "a paragraph shown twice"
        seen |= set(chunks)
        if result["paragraphs"]:
            records = {p["ref"].rsplit("#", 1)[0] for p in result["paragraphs"]}
            numbers = [int(p["ref"].rsplit("#", 1)[1]) for p in result["paragraphs"]]
            assert len(records) == 1 and numbers == list(range(numbers[0], numbers[0] + len(numbers)))


def test_run_planning() -> None:
    assert runs_of([0, 1, 2, 3], [600, 600, 600, 600], 1500) == [(0, 1), (1, 2), (2, 3)]
    assert runs_of([0, 1, 2], [2000, 10, 10], 1500) == [(0,), (1, 2)]  # a long paragraph stands alone
    assert runs_of([5, 6], [10, 10], 0) == [(5,), (6,)]  # 0: no runs
    rows = [
        {"id": "a", "recordId": "r", "paragraph": 2, "partIndex": 1, "text": "x" * 10},
        {"id": "b", "recordId": "r", "paragraph": 1, "partIndex": 1, "text": "x" * 10},
        {"id": "c", "recordId": None, "paragraph": None, "partIndex": 1, "source": "d", "sectionId": "s",
         "text": "y"},
        {"id": "d", "recordId": "q", "paragraph": 1, "partIndex": 1, "text": "z"},
    ]
    assert plan_units(rows) == [(1, 0), (2,), (3,)]  # reading order inside, sorted by first row


def test_overlapping_runs_merge_within_the_cap() -> None:
    size = {k: 100 for k in range(20)}.__getitem__
    assert merge_overlapping([[3, 4, 5], [5, 6], [1, 2, 3], [9]], size, 3000) == [
        (0, [1, 2, 3, 4, 5, 6]), (3, [9])]
    # past the cap the later run stands alone with the paragraphs nobody holds
    assert merge_overlapping([[1, 2], [2, 3]], size, 250) == [(0, [1, 2]), (1, [3])]
    assert merge_overlapping([[1, 2], [1, 2]], size, 3000) == [(0, [1, 2])]


def test_scores_of_different_shards_compare(build) -> None:  # type: ignore[no-untyped-def]
    """Units of equal text and length in two shards of two kinds whose units are as long on average
    score alike: the idf is taken over both (a unit's length is normalised by its own kind's
    average, ``bm25.lucene.Collection``)."""
    same = "harpoon line boat oar"
    root = build([
        make_document("book:c/x", [("x", [same])], kind="books", document_type="record"),
        make_document("book:c/y", [("y", ["dune sand wind sun"])], kind="books", document_type="record"),
        make_document("book:c/z", [("z", ["rock moss fern tree"])], kind="books", document_type="record"),
        make_document("book:c/a", [("a", [same])], kind="chats", document_type="record"),
    ])
    shards = open_shards(Home(root))
    hits, _ = shards.search(shards.terms("harpoon"), 10)
    scores = {shards.shard(hit.shard).source: hit.score for hit in hits}
    assert set(scores) == {"books", "chats"} and scores["books"] == scores["chats"]
    # the very same text: query shows it once, the other copy named in it
    (result,) = ok("--home", str(root), "query", "--term", "harpoon")["results"]
    assert [copy["source"] for copy in result["also"]] == [
        ({"book:c/x", "book:c/a"} - {result["source"]}).pop()]


def test_a_section_split_by_a_note_is_one_passage(build) -> None:  # type: ignore[no-untyped-def]
    doc = make_document("https://w3.org/csp", [("The meta element", [
        "A policy may be delivered in a meta element.",
        "Note: changes to its content attribute are ignored."])],
        family="w3c", normativity=["normative", "informative"])
    root = build([doc], "--max-chars", "256", "--overlap-chars", "0")
    shard = open_shards(Home(root)).shards[0]
    assert shard.rows == 2 and shard.units == 1
    data = ok("--home", str(root), "query", "--term", "meta element policy")
    assert "ignored" in data["results"][0]["snippet"] and len(data["results"][0]["paragraphs"]) == 2


def test_shards_of_another_analyzer_are_refused_with_the_rebuild_command(
        build, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    import episteme_core.bm25.shards as shards
    import episteme_core.bm25.writer as indexing

    root = build([_book("book:c/a", ["whale"])])
    newer = {**shards.analyzer_params(), "version": "99"}
    monkeypatch.setattr(shards, "analyzer_params", lambda: newer)
    monkeypatch.setattr(indexing, "analyzer_params", lambda: newer)
    refused = invoke("--home", str(root), "query", "--term", "whale", "--json")
    error = refused.envelope["error"]
    assert refused.exit_code == 3 and error["code"] == "STALE_INDEX"
    assert "episteme-3" in error["message"] and "episteme-99" in error["message"]
    assert "episteme index" in error["message"]
    report = ok("--home", str(root), "index")
    assert report["resharded"] is True
    assert ok("--home", str(root), "query", "--term", "whale")["total"] == 1


@pytest.mark.parametrize(("config", "good"), [
    ({"fields": {"title": 0, "path": 10, "heading": 10, "terms": 0, "body": 1}}, True),
    ({"fields": {"heading": 11}}, False),
    ({"fields": {"body": 0}}, False),
    ({"fields": {"title": -1}}, False),
    ({"fields": {"colour": 1}}, False),
    ({"runs": {"records": 0, "sections": 100_000}}, True),
    ({"runs": {"records": 100_001}}, False),
    ({"runs": {"sections": -1}}, False),
    ({"runs": {"paragraphs": 3}}, False),
    ({"bm25": {"headingWeight": 10}}, True),
    ({"bm25": {"headingWeight": 11}}, False),
])
def test_field_and_run_settings_are_bounded(build, tmp_path: Path, config: dict, good: bool) -> None:  # type: ignore[no-untyped-def,type-arg]
    root = build([_book("book:c/a", ["whale", "sea"])])
    (root / "config.json").write_text(json.dumps(config))
    result = invoke("--home", str(root), "index", "--json")
    if good:
        assert result.exit_code == 0, result.stderr
        meta = json.loads((root / "shards" / "index.json").read_text())["meta"]
        for key, value in config.get("fields", {}).items():
            assert meta["fields"][key] == value
        if "headingWeight" in config.get("bm25", {}):
            assert meta["fields"]["heading"] == 10
        for key, value in config.get("runs", {}).items():
            assert meta["runChars"][key] == value
    else:
        assert result.exit_code == 3 and result.envelope["error"]["code"] == "INVALID_INPUT"


def test_a_chunk_in_another_language_is_stemmed_in_it(build, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A chunk whose ``language`` label names a Snowball language is stemmed with it, and a query is
    analyzed in every language a shard holds (chunks without the label are English)."""
    from episteme_core.bm25.build import BM25_DEFAULTS, build_shard
    from episteme_core.bm25.shardfile import header_sha256
    from episteme_core.bm25.shards import Shard

    root = build([make_document("https://e.org/fr", [("Chats", ["Les chats dormaient."])]),
                  make_document("https://e.org/en", [("Cats", ["The cats are sleeping."])])])
    rows = sorted((open_shards(Home(root)).shards[0].row_json(r) for r in range(2)), key=lambda r: r["id"])
    for row in rows:
        if row["source"].endswith("/fr"):
            row["language"] = "fr"
    data = build_shard(rows, source="http", name="http-0009", params=dict(BM25_DEFAULTS), built_from={})
    (tmp_path / "s.shard").write_bytes(data)
    shard = Shard(tmp_path / "s.shard", name="http-0009", source="http", size=len(data),
                  header_sha256=header_sha256(data))
    assert shard.languages == ["english", "french"]
    assert shard.term_id("dorm") is not None and shard.term_id("chat") is not None  # French stems
    assert shard.term_id("sleep") is not None  # English stems
    hits, _ = shard.ranked(query_terms_for("dormait", shard.languages), 10)  # French: dorm
    assert {shard.row_json(h.row)["source"] for h in hits} == {"https://e.org/fr"}
