"""Extract, chunk and index decide "unchanged" from their committed fingerprints: a re-run on the
same files commits nothing, and one changed file is the only work the next run does."""

from __future__ import annotations

import json
from pathlib import Path

from episteme_core.testing.crashmatrix import episteme

from .conftest import stage_bytes


def _pipeline(home: Path, map_path: Path, *extra: str) -> dict:  # type: ignore[type-arg]
    proc = episteme(home, ["pipeline", "--map", str(map_path), "--json", *extra])
    assert proc.returncode == 0, proc.stderr.decode()
    return json.loads(proc.stdout)["data"]  # type: ignore[no-any-return]


def test_a_rerun_on_unchanged_files_commits_nothing(tmp_path: Path, home: Path) -> None:
    from .conftest import write_corpus

    map_path = write_corpus(tmp_path, 30)
    first = _pipeline(home, map_path)
    assert len(first["extract"]["extracted"]) == 30 and first["chunk"]["chunked"] == 30
    indexes = {stage: (home / stage / "index.json").stat().st_mtime_ns for stage in ("documents", "chunks",
                                                                                      "shards")}
    before = stage_bytes(home)
    again = _pipeline(home, map_path)
    assert again["capture"]["sources"] == [] and again["capture"]["unchangedListed"] is False
    assert again["capture"]["counts"] == {"captured": 0, "unchanged": 30, "failed": 0}
    listed = _pipeline(home, map_path, "--list-unchanged")["capture"]
    assert [row["status"] for row in listed["sources"]] == ["unchanged"] * 30 and listed["unchangedListed"]
    assert again["extract"]["extracted"] == [] and again["extract"]["reused"] == 30
    assert again["chunk"]["chunked"] == 0 and again["chunk"]["reused"] == 30
    assert again["index"]["built"] == [] and again["index"]["changed"] is False
    assert stage_bytes(home) == before
    assert {stage: (home / stage / "index.json").stat().st_mtime_ns for stage in indexes} == indexes


def test_one_changed_file_is_the_only_work(tmp_path: Path, home: Path) -> None:
    from .conftest import write_corpus

    map_path = write_corpus(tmp_path, 12)
    _pipeline(home, map_path)
    (tmp_path / "files" / "f00005.txt").write_text("a new paragraph about zeta\n\nand another one", "utf-8")
    again = _pipeline(home, map_path)
    assert again["extract"]["extracted"] == ["https://example.org/f5"]
    assert again["chunk"]["chunked"] == 1 and again["chunk"]["reused"] == 11
    assert len(again["index"]["built"]) == 1 and again["index"]["kept"] >= 1
    found = episteme(home, ["query", "--term", "zeta", "--json"])
    assert found.returncode == 0
    assert json.loads(found.stdout)["data"]["results"][0]["source"] == "https://example.org/f5"


def test_each_stage_alone_reports_unchanged(tmp_path: Path, home: Path) -> None:
    from .conftest import write_corpus

    map_path = write_corpus(tmp_path, 6)
    _pipeline(home, map_path)
    before = stage_bytes(home)
    for command in (["extract"], ["chunk"], ["index"]):
        proc = episteme(home, [*command, "--json"])
        assert proc.returncode == 0, proc.stderr.decode()
    assert stage_bytes(home) == before
    index = json.loads(episteme(home, ["index", "--json"]).stdout)["data"]
    assert index["changed"] is False and index["built"] == []
