"""One changed file costs about what it costs alone: each stage reads and rewrites only the buckets
the changed keys fall in (plus its head), and the result is the bytes a fresh build of the same
files makes (documents, chunks) and the same answers (shards)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from episteme_core.store.commits import BUCKETS_FROM_ENV
from episteme_core.testing.crashmatrix import episteme

from .audit import touched_while
from .conftest import stage_bytes, write_corpus

FILES = 600  # 8 buckets of about 128 in each large stage at the threshold below
STAGES = ("snapshots", "documents", "chunks")


def _pipeline(home: Path, map_path: Path, *extra: str) -> dict:  # type: ignore[type-arg]
    proc = episteme(home, ["pipeline", "--map", str(map_path), "--json", *extra])
    assert proc.returncode == 0, proc.stderr.decode()
    return json.loads(proc.stdout)["data"]  # type: ignore[no-any-return]


def _hits(home: Path, term: str) -> tuple[int, list[tuple[str, str, str]]]:
    found = episteme(home, ["query", "--term", term, "--json", "--limit", "20"])
    assert found.returncode == 0, found.stderr.decode()
    data = json.loads(found.stdout)["data"]
    return data["total"], [(hit["source"], hit["chunkId"], hit["snippet"]) for hit in data["results"]]


@pytest.fixture()
def corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(BUCKETS_FROM_ENV, "64")
    return write_corpus(tmp_path, FILES)


def test_one_changed_file_reads_one_bucket_per_stage(tmp_path: Path, corpus: Path) -> None:
    home = tmp_path / "home"
    _pipeline(home, corpus)
    buckets = {stage: len(os.listdir(home / stage / "buckets")) for stage in STAGES}
    assert buckets == {stage: 8 for stage in STAGES}
    (tmp_path / "files" / "f00005.txt").write_text("a new paragraph about zeta\n\nand another one", "utf-8")
    import time

    time.sleep(0.25)
    touched = touched_while(home, ["--home", str(home), "--json", "--progress", "never", "pipeline",
                                   "--map", str(corpus)])
    read = {stage: sorted({Path(path).name for event, path in touched if event == "open"
                           and f"/{stage}/buckets/" in path and not Path(path).name.startswith(".")})
            for stage in STAGES}
    # the changed key's bucket read and its new one written (snapshots: the new snapshot's id and
    # the source fall in a bucket each); never the others
    assert all(1 <= len(names) <= 4 for names in read.values()), {s: len(n) for s, n in read.items()}
    listed = [path for event, path in touched if event != "open" and "/objects" not in path
              and not path.endswith("/buckets")]
    assert listed == [], listed
    # the stat cache's confirmations of the other files were carried to the new snapshots head, and
    # extract noted what it read: the next unchanged run reads the heads alone again
    again = touched_while(home, ["--home", str(home), "--json", "--progress", "never", "pipeline",
                                 "--map", str(corpus)])
    assert [path for _, path in again if "/snapshots/" in path] == [str(home / "snapshots" / "index.json")]
    assert not [path for _, path in again if "/buckets/" in path], again


def test_a_changed_rerun_makes_the_bytes_of_a_fresh_build(tmp_path: Path, corpus: Path) -> None:
    home, fresh = tmp_path / "home", tmp_path / "fresh"
    _pipeline(home, corpus)
    files = tmp_path / "files"
    (files / "f00005.txt").write_text("a new paragraph about zeta\n\nand another one", "utf-8")
    (files / "f00300.txt").write_text("zeta again, in another bucket", "utf-8")
    import time

    time.sleep(0.25)
    again = _pipeline(home, corpus)
    assert sorted(again["extract"]["extracted"]) == ["https://example.org/f300", "https://example.org/f5"]
    assert again["chunk"]["chunked"] == 2 and again["chunk"]["reused"] == FILES - 2
    _pipeline(fresh, corpus)
    assert stage_bytes(home, ("documents", "chunks")) == stage_bytes(fresh, ("documents", "chunks"))
    for term in ("zeta", "alpha1", "omega7"):
        assert _hits(home, term) == _hits(fresh, term)
    unchanged = _pipeline(home, corpus)
    assert unchanged["extract"]["extracted"] == [] and unchanged["chunk"]["chunked"] == 0
    assert unchanged["index"]["changed"] is False
    verified = episteme(home, ["verify", "--json"])
    assert verified.returncode == 0, verified.stdout.decode()
    rehashed = _pipeline(home, corpus, "--rehash")
    assert rehashed["capture"]["counts"]["captured"] == 0
    assert stage_bytes(home, ("documents", "chunks")) == stage_bytes(fresh, ("documents", "chunks"))


def test_a_note_that_does_not_hold_sends_extract_the_full_way(tmp_path: Path, corpus: Path) -> None:
    """After a partial extraction (the documents commit is not the noted one) and with an unreadable
    note, the run compares every source and still leaves the bytes of a fresh build."""
    home, fresh = tmp_path / "home", tmp_path / "fresh"
    _pipeline(home, corpus)
    files = tmp_path / "files"
    (files / "f00005.txt").write_text("a new paragraph about zeta", "utf-8")
    import time

    time.sleep(0.25)
    assert episteme(home, ["manual-ingest", "--map", str(corpus)]).returncode == 0
    assert episteme(home, ["extract", "https://example.org/f5"]).returncode == 0
    (files / "f00300.txt").write_text("zeta again, in another bucket", "utf-8")
    time.sleep(0.25)
    again = _pipeline(home, corpus)
    assert again["extract"]["extracted"] == ["https://example.org/f300"]
    (files / "f00007.txt").write_text("zeta a third time", "utf-8")
    time.sleep(0.25)
    (home / "extract-base.json").write_text("{not json")
    third = _pipeline(home, corpus)
    assert third["extract"]["extracted"] == ["https://example.org/f7"]
    _pipeline(fresh, corpus)
    assert stage_bytes(home, ("documents", "chunks")) == stage_bytes(fresh, ("documents", "chunks"))
    assert _hits(home, "zeta") == _hits(fresh, "zeta")
