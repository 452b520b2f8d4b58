"""Ranking in numpy and in plain Python agree exactly: scores, order (ties by chunk id), totals, filters,
deleted rows; and a query over many shards sizes the work once for all of them."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

import episteme_core.bm25.shards as shards_module
from episteme_core.bm25.shards import collection_of, open_shards
from episteme_core.records.hits import Filters
from episteme_core.store.home import Home
from episteme_core.text.analyzer import query_terms

from .conftest import commit, make_document, ok

_TEXTS = ["whale sea", "whale whale ship", "sea", "whale", "ship sea whale", "whale", "a whale in the sea"]


def _docs() -> list:  # type: ignore[type-arg]
    docs = []
    for d in range(4):
        paragraphs = [f"{_TEXTS[(d + i) % len(_TEXTS)]} p{d}{i}" for i in range(6)]
        docs.append(make_document(
            f"https://e.org/{d}", [("Ocean" if d % 2 else "Harbour", paragraphs)],
            family="whatwg" if d % 2 else "generic", authority="normative" if d < 2 else "informative",
            normativity=["normative", "example"] * 3,
            times=[f"2026-0{1 + (i % 5)}-01T00:00:00Z" for i in range(6)],
        ))
    return docs


@pytest.fixture
def home(tmp_path: Path) -> Path:
    root = tmp_path / "h"
    commit(root, _docs())
    ok("--home", str(root), "chunk", "--max-chars", "256", "--overlap-chars", "0")
    ok("--home", str(root), "index")
    # one document replaced: its old rows stay in the frozen shard as deleted rows
    commit(root, [make_document("https://e.org/0", [("Harbour", ["whale gone"])])], replace=False)
    ok("--home", str(root), "chunk", "--max-chars", "256", "--overlap-chars", "0")
    report = ok("--home", str(root), "index")
    assert report["deletedRows"] > 0
    return root


@pytest.mark.parametrize("filters", [
    Filters(), Filters(family="whatwg"), Filters(authority="informative"), Filters(normativity="example"),
    Filters(since="2026-03-01"), Filters(family="generic", normativity="normative", since="2026-02-01"),
    Filters(family="nothing"), Filters(since="not a date"),
])
@pytest.mark.parametrize("k", [0, 1, 3, 100])
def test_numpy_and_python_rank_alike(home: Path, filters: Filters, k: int) -> None:
    shard_set = open_shards(Home(home))
    for query in ("whale", "sea ship", "whale sea ship a", "p01 p12", "absent"):
        terms = query_terms(query)
        # scored as stored, or again under the statistics of all the shards (deleted rows, more units)
        for collection in (None, collection_of(terms, shard_set.shards)):
            for shard in shard_set.shards:
                plain = shard.ranked(terms, k, filters, vectorized=False, collection=collection)
                vector = shard.ranked(terms, k, filters, vectorized=True, collection=collection)
                assert vector == plain, (query, shard.name)
                assert all(type(hit.score) is float and type(hit.row) is int for hit in vector[0])


def test_shard_set_chooses_numpy_from_all_postings(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shard_set = open_shards(Home(home))
    plain = shard_set.search("whale sea", 5)
    calls: list[bool | None] = []
    original = shards_module.Shard.ranked

    def spy(self, terms, k, filters=None, *, vectorized=None, **options):  # type: ignore[no-untyped-def]
        calls.append(vectorized)
        return original(self, terms, k, filters, vectorized=vectorized, **options)

    monkeypatch.setattr(shards_module.Shard, "ranked", spy)
    postings = sum(b - a for s in shard_set.shards for a, b in s.postings(query_terms("whale sea")))
    # numpy is imported here (the test above used it): the lower threshold applies
    assert "numpy" in sys.modules
    monkeypatch.setattr(shards_module, "NUMPY_POSTINGS", postings)
    monkeypatch.setattr(shards_module, "NUMPY_LOADED_POSTINGS", postings - 1)
    assert shard_set.search("whale sea", 5) == plain
    assert calls == [True] * len(shard_set.shards)
    calls.clear()
    monkeypatch.setattr(shards_module, "NUMPY_LOADED_POSTINGS", postings)
    assert shard_set.search("whale sea", 5) == plain
    assert calls == [False] * len(shard_set.shards)
    # without numpy imported, the higher threshold
    monkeypatch.setattr(shards_module, "sys", types.SimpleNamespace(modules={}))
    assert not shards_module.numpy_pays(postings) and shards_module.numpy_pays(postings + 1)


def test_vocabulary_lookups_are_cached_bounded_and_exact(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A shard keeps its lookups (a term's postings, binary-search probes) up to LOOKUPS_CACHED each;
    at the bound the cache starts again, and every answer equals a fresh shard's."""
    fresh = open_shards(Home(home)).shards
    monkeypatch.setattr(shards_module, "LOOKUPS_CACHED", 3)
    cached = open_shards(Home(home)).shards
    terms = ["whale", "sea", "ship", "p01", "absent", "a", "whale"]
    for shard, check in zip(cached, fresh, strict=True):
        for term in terms * 2:
            assert shard.term_span(term) == check.term_span(term)
            assert shard.document_frequency(term) == check.document_frequency(term)
            assert len(shard._span_cache) <= 3 and len(shard._probe_cache) <= 3
        assert shard.term_span("absent") is None and shard.document_frequency("absent") == 0
    first = open_shards(Home(home))
    assert first.search("whale sea", 5) == first.search("whale sea", 5) == open_shards(Home(home)).search(
        "whale sea", 5)


@pytest.mark.parametrize("vectorized", [False, True])
def test_a_floor_leaves_out_only_hits_below_it(home: Path, vectorized: bool) -> None:
    """``floor`` (the k-th best score other shards gave) drops the hits scoring below it, keeps those
    at it (ties are decided by chunk id later), and never changes the total."""
    for shard in open_shards(Home(home)).shards:
        terms = query_terms("whale sea ship")
        hits, total = shard.ranked(terms, 100, vectorized=vectorized)
        assert hits, shard.name
        for cut in {hits[0].score, hits[len(hits) // 2].score, hits[-1].score, hits[0].score + 1}:
            kept, count = shard.ranked(terms, 100, vectorized=vectorized, floor=cut)
            assert count == total and kept == [hit for hit in hits if hit.score >= cut]
            assert shard.ranked(terms, 2, vectorized=vectorized, floor=cut)[0] == kept[:2]


def test_search_over_shards_with_floors_equals_merging_everything(home: Path) -> None:
    shard_set = open_shards(Home(home))
    for query in ("whale", "sea ship", "whale sea ship a", "p01 p12", "absent"):
        terms = query_terms(query)
        collection = collection_of(terms, shard_set.shards)
        everything = sorted((hit for shard in shard_set.shards
                             for hit in shard.ranked(terms, 1000, idf=shard_set.idf(terms),
                                                     collection=collection)[0]),
                            key=lambda hit: (-hit.score, hit.chunk_id))
        for k in (1, 2, 3, 5, 50):
            hits, total = shard_set.search(terms, k)
            assert hits == everything[:k] and total >= len(everything)


def test_a_one_term_query_ranked_from_its_postings_alone_matches_plain_python(tmp_path: Path) -> None:
    """Without filters or deleted rows, numpy ranks one term from its postings (no array of every
    unit): the same hits, scores and totals as plain Python, with floors, another idf and another
    collection's statistics (pairs scored again)."""
    root = tmp_path / "fresh"
    commit(root, _docs())
    ok("--home", str(root), "chunk", "--max-chars", "256", "--overlap-chars", "0")
    ok("--home", str(root), "index")
    shard_set = open_shards(Home(root))
    for shard in shard_set.shards:
        assert not shard.deleted
        for query in ("whale", "sea", "p01", "absent"):
            terms = query_terms(query)
            options: list[dict[str, object]] = [
                {}, {"floor": 0.5}, {"floor": 100.0}, {"idf": {terms[0]: 2.5}},
                {"collection": collection_of(terms, [*shard_set.shards, shard])},
            ]
            for k in (0, 1, 3, 100):
                for option in options:
                    plain = shard.ranked(terms, k, vectorized=False, **option)  # type: ignore[arg-type]
                    vector = shard.ranked(terms, k, vectorized=True, **option)  # type: ignore[arg-type]
                    assert vector == plain, (query, k, option)
                    assert all(type(hit.score) is float and type(hit.row) is int for hit in vector[0])
