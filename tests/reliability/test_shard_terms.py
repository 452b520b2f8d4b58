"""A shard build holds a bounded vocabulary: rows whose distinct tokens pass ``MAX_SHARD_TERMS`` are
split, in chunk id order, into shards ``NAME``, ``NAME.2``, ... (issue 12: one document of three
million distinct words took 1.24 GB to index). The split is deterministic, every chunk stays in
exactly one shard and is found, later runs keep and rebuild parts like any shard, and a build that
stays within the bound makes the very bytes it made before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from episteme_core.bm25 import writer as indexing
from episteme_core.bm25.build import BM25_DEFAULTS, RowLimit, build_shard, split_rows
from episteme_core.bm25.fields import indexed
from episteme_core.bm25.writer import index_home, part_name, shard_seq
from episteme_core.store.home import Home
from episteme_core.testing.crashmatrix import episteme


def _corpus(folder: Path, documents: int = 40, paragraphs: int = 3) -> Path:
    """Documents of paragraphs made of words no other paragraph holds."""
    folder.mkdir(parents=True, exist_ok=True)
    entries = []
    for d in range(documents):
        text = "\n\n".join(" ".join(f"w{d}p{p}x{k}" for k in range(12)) + "." for p in range(paragraphs))
        (folder / f"d{d}.txt").write_text(text, "utf-8")
        entries.append({"sourceUrl": f"https://example.org/d{d}", "localPath": f"d{d}.txt",
                        "contentType": "text/plain"})
    (folder / "map.json").write_text(json.dumps(entries), "utf-8")
    return folder / "map.json"


def _shards(home: Path) -> dict[str, bytes]:
    index = json.loads((home / "shards" / "index.json").read_text("utf-8"))
    return {entry["key"]: (home / "shards" / entry["path"]).read_bytes() for entry in index["entries"]}


def _chunk_ids(home: Path) -> list[str]:
    from episteme_core.stages.chunks import chunks_stage, object_rows

    stage = chunks_stage(Home(home))
    index = stage.read_index()
    assert index is not None
    return sorted(row["id"] for entry in index.entries for row, _ in object_rows(stage, entry))


def _hits(home: Path, term: str) -> list[str]:
    proc = episteme(home, ["query", "--term", term, "--limit", "5", "--json"])
    assert proc.returncode == 0, proc.stderr.decode()
    return [hit["chunkId"] for hit in json.loads(proc.stdout)["data"]["results"]]


def test_a_vocabulary_past_the_bound_is_split_into_parts(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    map_path = _corpus(tmp_path / "files")
    home = tmp_path / "home"
    assert episteme(home, ["pipeline", "--map", str(map_path)]).returncode == 0
    whole = _shards(home)
    assert list(whole) == ["file-0001"]  # one shard within the default bound
    monkeypatch.setattr(indexing, "MAX_SHARD_TERMS", 200)
    report = index_home(Home(home), reshard=True)
    parts = _shards(home)
    assert len(parts) > 2 and report.built == list(parts)
    assert list(parts) == [part_name("file-0002", n) for n in range(len(parts))]  # file-0002, file-0002.2
    assert all(shard_seq(name) == 2 for name in parts)
    from episteme_core.bm25.shards import open_shards

    opened = open_shards(Home(home))
    assert all(shard.file.header["meta"]["terms"] <= 200 for shard in opened.shards)
    assert sum(shard.rows for shard in opened.shards) == len(_chunk_ids(home)) == report.chunks
    for term in ("w0p0x3", "w17p1x0", "w39p2x11"):  # a word of the first, a middle and the last chunk
        [hit] = _hits(home, term)
        assert hit  # each found once: every chunk is in exactly one part
    again = index_home(Home(home), reshard=True)  # deterministic: the same parts, the same bytes
    assert [part.replace("0003", "0002") for part in again.built] == list(parts)
    rebuilt = {name.replace("0003", "0002"): data.replace(b"file-0003", b"file-0002")
               for name, data in _shards(home).items()}
    assert rebuilt == parts
    assert index_home(Home(home)).changed is False  # an unchanged re-run keeps the parts
    monkeypatch.setattr(indexing, "MAX_SHARD_TERMS", 400_000)
    index_home(Home(home), reshard=True)
    [(name, data)] = _shards(home).items()  # back within the bound: one shard again ...
    assert data.replace(name.encode(), b"file-0001") == whole["file-0001"]  # ... with the bytes it had


def test_a_changed_document_rebuilds_only_its_part(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    map_path = _corpus(tmp_path / "files", documents=12)
    home = tmp_path / "home"
    assert episteme(home, ["pipeline", "--map", str(map_path)]).returncode == 0
    monkeypatch.setattr(indexing, "MAX_SHARD_TERMS", 150)
    index_home(Home(home), reshard=True)
    before = _shards(home)
    assert len(before) > 1
    changed = tmp_path / "files" / "d11.txt"
    changed.write_text(changed.read_text("utf-8") + "\n\nnewword appended.\n", "utf-8")
    assert episteme(home, ["manual-ingest", "--map", str(map_path)]).returncode == 0
    assert episteme(home, ["extract"]).returncode == 0
    assert episteme(home, ["chunk"]).returncode == 0
    report = index_home(Home(home))
    after = _shards(home)
    assert report.kept >= 1 and set(before) & set(after)  # parts without the changed document stay
    assert all(after[name] == before[name] for name in set(before) & set(after))
    assert _hits(home, "newword") and _hits(home, "w0p0x1") and _hits(home, "w11p0x1")


def test_split_rows_builds_rows_within_the_bound_once() -> None:
    calls: list[tuple[int, int, int | None]] = []

    def build(part: int, start: int, stop: int, limit: int | None) -> tuple[int, int]:
        calls.append((start, stop, limit))
        if limit is not None and stop - start > 3:
            raise RowLimit(3)
        return start, stop

    assert split_rows(2, build, 10) == [(0, 2)] and calls == [(0, 2, 10)]
    calls.clear()
    assert split_rows(8, build, 10) == [(0, 3), (3, 6), (6, 8)]
    calls.clear()

    def never(part: int, start: int, stop: int, limit: int | None) -> tuple[int, int]:
        if limit is not None:
            raise RowLimit(0)  # even the first unit passes the bound: one row at a time, unbounded
        return start, stop

    assert split_rows(3, never, 1) == [(0, 1), (1, 2), (2, 3)]


def test_a_bound_that_is_not_reached_changes_no_byte() -> None:
    rows = [indexed({"id": f"{n:064x}", "sourceKind": "file", "source": "https://example.org/a",
                     "text": f"word{n} shared text", "sectionId": "s", "partIndex": n, "language": "en"})
            for n in range(20)]
    plain = build_shard(rows, source="file", name="file-0001", params=dict(BM25_DEFAULTS), built_from={})
    bounded = build_shard(rows, source="file", name="file-0001", params=dict(BM25_DEFAULTS), built_from={},
                          max_terms=10_000)
    assert plain == bounded
    with pytest.raises(RowLimit):
        build_shard(rows, source="file", name="file-0001", params=dict(BM25_DEFAULTS), built_from={},
                    max_terms=5)
