"""``episteme index``: frozen shards of one source, bounded size, scores equal to bm25s, refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from episteme_core.bm25.shards import Shard, open_shards
from episteme_core.store.home import Home
from episteme_core.testing import invoke, validate
from episteme_core.text.analyzer import query_terms

from .conftest import commit, make_document, ok


def _docs() -> list:  # type: ignore[type-arg]
    return [
        make_document("https://e.org/a", [("Fetch", ["fetch a request", "abort the fetch"])]),
        make_document("https://e.org/b", [("Parse", ["parse a header", "a header value"])]),
        make_document("book:c/x", [("x", ["a fetch in a book", "nothing here"])], kind="books",
                      document_type="record"),
    ]


def _shard_meta(root: Path) -> dict:  # type: ignore[type-arg]
    return json.loads((root / "shards" / "index.json").read_text())["meta"]  # type: ignore[no-any-return]


def test_one_source_per_shard_and_shard_size(build, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "h"
    root.mkdir()
    (root / "config.json").write_text('{"shard_size": 1}')
    build(_docs(), "--max-chars", "256", "--overlap-chars", "0", name="h")
    shards = open_shards(Home(root)).shards
    assert [s.name for s in shards] == ["books-0001", "books-0002", "http-0001", "http-0002"]
    for shard in shards:
        assert shard.rows == 1
        assert shard.row_json(0)["sourceKind"] == shard.source
    meta = _shard_meta(root)
    validate(meta, "shard")
    validate(shards[0].file.header, "shard")
    assert meta["shardSize"] == 1 and meta["sources"] == {"books": 2, "http": 2}


def test_scores_equal_raw_bm25s(build) -> None:  # type: ignore[no-untyped-def]
    """A shard's scores are bm25s's over the same units (runs of a record's paragraphs) and fields."""
    import bm25s
    import numpy as np

    from episteme_core.bm25.fields import indexed, unit_tokens

    texts = [[f"fetch {n} " * (n % 3 + 1), "a header", "header value"] * 3 for n in range(4)]
    docs = [make_document(f"book:c/{n}", [("x", texts[n])], kind="books", document_type="record")
            for n in range(4)]
    root = build(docs, "--max-chars", "256", "--overlap-chars", "0")
    shard = open_shards(Home(root)).shards[0]
    assert shard.rows == 36 and shard.units == 4  # each record's nine short paragraphs are one run
    views = [indexed(shard.row_json(r)) for r in range(shard.rows)]
    tokens = [unit_tokens([views[r] for r in shard.unit_rows(u)], shard.meta["fields"])
              for u in range(shard.units)]
    raw = bm25s.BM25()
    raw.index(tokens, show_progress=False)
    for query in ["fetch", "header value", "a"]:
        expected = raw.get_scores(query_terms(query))
        hits, total = shard.ranked(query_terms(query), 10)
        got = {h.unit: h.score for h in hits}
        assert total == int(np.count_nonzero(expected))
        for unit, score in got.items():
            assert score == pytest.approx(float(expected[unit]), rel=1e-6)


def test_numpy_and_python_scoring_agree(build, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    import episteme_core.bm25.shards as shards_module

    root = build(_docs(), "--max-chars", "256", "--overlap-chars", "0")
    shard_set = open_shards(Home(root))
    plain = shard_set.search("a fetch header", 10)
    monkeypatch.setattr(shards_module, "NUMPY_POSTINGS", 0)
    assert open_shards(Home(root)).search("a fetch header", 10) == plain


def test_shards_stay_frozen_and_removed_chunks_are_never_returned(build, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = build(_docs())
    first = {p.name: p.read_bytes() for p in (root / "shards" / "objects").rglob("*.shard")}
    commit(root, [make_document("https://e.org/c", [("New", ["a brand new fetch"])])], replace=False)
    ok("--home", str(root), "chunk")
    report = ok("--home", str(root), "index")
    assert report["built"] == ["http-0002"] and report["kept"] == 2
    for name, data in first.items():
        assert next((root / "shards" / "objects").rglob(name)).read_bytes() == data
    # replace a document: its old chunks become deleted rows, never results
    commit(root, [make_document("https://e.org/a", [("Fetch", ["completely different words"])])],
           replace=False)
    ok("--home", str(root), "chunk")
    report = ok("--home", str(root), "index")
    assert report["deletedRows"] >= 1
    found = ok("--home", str(root), "query", "--term", "abort")
    assert found["total"] == 0
    again = ok("--home", str(root), "index")
    assert again["changed"] is False
    rebuilt = ok("--home", str(root), "index", "--reshard")
    assert rebuilt["resharded"] is True and rebuilt["deletedRows"] == 0
    assert ok("--home", str(root), "query", "--term", "different")["total"] == 1


def test_index_without_chunks_is_a_clear_error(tmp_path: Path) -> None:
    result = invoke("--home", str(tmp_path / "empty"), "index", "--json")
    assert result.exit_code == 3
    assert result.envelope["error"]["code"] == "INVALID_INPUT"
    assert "episteme chunk" in result.envelope["error"]["hint"]


def test_corrupt_shard_file_is_refused(build) -> None:  # type: ignore[no-untyped-def]
    root = build(_docs())
    path = next((root / "shards" / "objects").rglob("*.shard"))
    data = bytearray(path.read_bytes())
    data[-200] ^= 0xFF  # inside the data region or the hash table
    path.write_bytes(bytes(data))
    result = invoke("--home", str(root), "query", "--term", "fetch header request book", "--json")
    assert result.exit_code == 3
    error = result.envelope["error"]
    assert error["code"] == "INVALID_INPUT" and str(path) in error["message"]


def test_truncated_shard_file_is_refused(build) -> None:  # type: ignore[no-untyped-def]
    root = build(_docs())
    path = next((root / "shards" / "objects").rglob("*.shard"))
    path.write_bytes(path.read_bytes()[:100])
    result = invoke("--home", str(root), "query", "--term", "fetch", "--json")
    assert result.exit_code == 3 and "bytes" in result.envelope["error"]["message"]


def test_shard_rows_round_trip_to_chunks(build) -> None:  # type: ignore[no-untyped-def]
    root = build(_docs())
    shard_set = open_shards(Home(root))
    for shard in shard_set.shards:
        for row in range(shard.rows):
            chunk = shard.chunk(shard.chunk_id(row))
            assert chunk.id == shard.chunk_id(row) and chunk.source_kind == shard.source
    shard = shard_set.shards[0]
    with pytest.raises(Exception, match="holds no chunk"):
        shard.chunk("0" * 64)
    assert isinstance(shard, Shard) and shard.search("fetch", 5)


def test_bad_config_is_invalid_input(build, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = build(_docs())
    (root / "config.json").write_text('{"shard_size": 0}')
    result = invoke("--home", str(root), "index", "--json")
    assert result.exit_code == 3 and "shard_size" in result.envelope["error"]["message"]
    (root / "config.json").write_text('{"bm25": {"k1": 1.2, "b": 0.4}}')
    report = ok("--home", str(root), "index")
    assert report["resharded"] is True  # new parameters rebuild every shard
    assert _shard_meta(root)["bm25"]["k1"] == 1.2


def test_chunkers_and_indexer_are_registered_components() -> None:
    data = ok("plugins")
    found = {
        (kind, name)
        for plugin in data["plugins"]
        for kind, names in plugin["components"].items()
        for name in names
    }
    assert {("chunker", "window"), ("chunker", "paragraph"), ("indexer", "bm25")} <= found
