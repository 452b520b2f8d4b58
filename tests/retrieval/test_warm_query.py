"""A warm query: the rerank reads the shards' stored words (not the candidates' JSON and text), older
shards answer the same from their text, and ``query()`` keeps a home's shards open between calls."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from episteme_core.bm25 import build as build_module
from episteme_core.bm25 import writer as writer_module
from episteme_core.bm25.shardfile import ShardFile
from episteme_core.bm25.shards import Shard, open_shards
from episteme_core.bm25.words import LAYOUT
from episteme_core.bm25.writer import index_home
from episteme_core.search.query import query
from episteme_core.store.home import Home

from .conftest import commit, make_document, ok

WORDS = "whale harpoon sea ship line boat captain mast sail deck".split()


def _docs(count: int = 40) -> list[Any]:
    """One-chunk documents that all hold "whale" and "harpoon", at varying distances."""
    docs = []
    for n in range(count):
        gap = " ".join(WORDS[2 + (n + i) % 8] for i in range(n % 7))
        text = " ".join(part for part in ("the whale", gap, f"harpoon and {n}") if part)
        docs.append(make_document(f"https://e.org/{n}", [(f"Part {n}", [text])]))
    return docs


def _home(build: Any, name: str = "home") -> Home:
    return Home(build(_docs(), name=name))


def _counting(monkeypatch: pytest.MonkeyPatch, cls: type, method: str) -> list[Any]:
    calls: list[Any] = []
    original = getattr(cls, method)

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cls, method, counted)
    return calls


def _plain(result: Any) -> Any:
    data = attrs.asdict(result)
    for item in data["results"]:
        item.pop("shard")  # a rebuilt shard has another name
    return data


def test_the_shards_store_each_rows_analysed_words(build) -> None:  # type: ignore[no-untyped-def]
    shard = open_shards(_home(build)).shards[0]
    assert shard.meta["layout"] == LAYOUT and shard.words and shard.meta["nonProseRows"] == 0
    row = next(r for r in range(shard.rows) if "whale" in shard.row_json(r)["text"])
    terms, chars, non_prose = shard.row_words(row)
    text = shard.row_json(row)["text"]
    assert chars == len(text) and not non_prose
    ids = [int.from_bytes(terms[i : i + shard.word_bytes], "little") for i in range(0, len(terms),
                                                                                  shard.word_bytes)]
    assert len(ids) == len(text.split()) and ids[1] == shard.term_id("whale")


def test_a_warm_query_parses_only_the_rows_it_shows(build, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """30 candidates are reranked by proximity; only the 5 shown are read as JSON."""
    home = _home(build)
    shard_set = open_shards(home)
    expected = query(home, "whale harpoon", limit=5, shard_set=shard_set)
    parsed = _counting(monkeypatch, Shard, "row_json")
    result = query(home, "whale harpoon", limit=5, shard_set=shard_set)
    assert len(parsed) == 5 and result == expected
    assert result.results[0].snippet.startswith("the whale harpoon")  # side by side: the bonus ranked it


def test_shards_without_the_words_answer_the_same_and_index_rebuilds_them(  # type: ignore[no-untyped-def]
        build, monkeypatch: pytest.MonkeyPatch) -> None:
    """Shards of layout 1 (built before the words) are answered from their rows' text, with the same
    results; the next ``index`` rebuilds them with the words."""
    new = _home(build, "new")
    with monkeypatch.context() as patch:
        patch.setattr(build_module, "word_arrays", lambda *args: {})
        patch.setattr(build_module.WordSpans, "arrays", lambda self, views: None)
        patch.setattr(writer_module, "LAYOUT", 1)
        old = _home(build, "old")
    before = open_shards(old)
    assert not before.shards[0].words and before.meta["layout"] == 1
    for term in ("whale harpoon", "harpoon sea", '"the whale"', "whale"):
        assert _plain(query(old, term, limit=10, shard_set=before)) == _plain(
            query(new, term, limit=10, shard_set=open_shards(new)))
    report = index_home(old)
    assert report.resharded and report.built
    after = open_shards(old)
    assert after.shards[0].words and after.meta["layout"] == LAYOUT
    assert _plain(query(old, "whale harpoon", shard_set=after)) == _plain(query(new, "whale harpoon",
                                                                              shard_set=open_shards(new)))


def test_query_keeps_the_shards_open_between_calls(build, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    home = _home(build)
    opened = _counting(monkeypatch, ShardFile, "__init__")
    first = query(home, "whale harpoon")
    assert query(home, "harpoon sea") and query(home, "whale harpoon") == first
    assert len(opened) == 1  # one shard, opened once for the three calls
    # a new commit is opened anew
    commit(home.root, [*_docs(), make_document("https://e.org/new", [("New", ["a whale of a new harpoon"])])])
    ok("--home", str(home.root), "chunk")
    ok("--home", str(home.root), "index")
    assert query(home, "whale harpoon").total == first.total + 1


def test_a_shard_file_written_in_place_is_verified_again(build) -> None:  # type: ignore[no-untyped-def]
    from episteme_core.errors import EpistemeError

    home = _home(build)
    assert query(home, "whale harpoon").results
    path = next((home.root / "shards" / "objects").rglob("*.shard"))
    data = bytearray(path.read_bytes())
    data[-200] ^= 0xFF  # the block hash table
    path.write_bytes(bytes(data))
    with pytest.raises(EpistemeError) as caught:
        query(home, "whale harpoon")
    assert caught.value.code == "INVALID_INPUT" and str(path) in caught.value.message


def test_the_rerank_reads_no_text_of_a_one_term_query(build, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """A query of one term has no two terms to be near: no candidate's words are read for the rerank,
    only those of the passage after the page (is it a copy of one shown?) and of the shown passages
    of its length, to tell it from them."""
    home = _home(build)
    shard_set = open_shards(home)
    shard = shard_set.shards[0]
    rows = [shard.row_of(r.chunk_id) for r in query(home, "harpoon", limit=4, shard_set=shard_set).results]
    read = _counting(monkeypatch, Shard, "row_words")
    assert query(home, "harpoon", limit=3, shard_set=shard_set).results
    assert (rows[3],) in read and {args[0] for args in read} <= set(rows)
    read.clear()
    assert query(home, "harpoon whale", limit=3, shard_set=shard_set).results
    assert 31 <= len(read) <= 34  # the rerank's 30; the passage after the page, the shown of its length
