"""A large stage commits a small head and content-addressed buckets: "unchanged" is read from the
head alone, a commit that changes one item writes one bucket and the head, the bytes depend only on
the content, a one-file index (a home from before buckets) is read and rewritten as buckets, and a
tampered or missing bucket is refused and reported by verify."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from episteme_core.errors import EpistemeError
from episteme_core.records.storage import StageEntry
from episteme_core.store import commits as stage_module
from episteme_core.store.commits import (
    BUCKETS_FROM_ENV,
    MAX_BUCKETS,
    LazyStageIndex,
    Stage,
    bucket_count,
    buckets_from,
    entry_count,
    forget_process_memory,
    head_meta,
    keyed_fields,
)
from episteme_core.store.home import Home
from episteme_core.store.verify import verify_home
from episteme_core.testing import validate
from episteme_core.testing.crashmatrix import episteme

from .conftest import write_corpus


@pytest.fixture(autouse=True)
def fresh_process_memory() -> Iterator[None]:
    """Each read below sees only the files (what a new process remembers: nothing)."""
    forget_process_memory()
    yield
    forget_process_memory()


def _content(stage: Stage, count: int, changed: int | None = None) -> tuple[list[StageEntry], dict[str, Any]]:
    entries = [stage.put_bytes(f"key{n:04d}", f"object {n}".encode(), ".json") for n in range(count)]
    sources = {f"key{n:04d}": {"n": n, "note": "changed" if n == changed else "as first"}
               for n in range(count)}
    return entries, {"sources": sources, "options": {"maxChars": 10}, "documents": count}


def _buckets(stage: Stage) -> dict[str, int]:
    folder = stage.dir / "buckets"
    return {name: os.stat(folder / name).st_ino for name in os.listdir(folder)} if folder.exists() else {}


def test_a_large_stage_is_a_head_and_buckets_read_from_the_head_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BUCKETS_FROM_ENV, "100")
    stage = Stage(Home(tmp_path), "documents")
    entries, meta = _content(stage, 300)
    committed = stage.commit(reversed(entries), meta)
    head = json.loads(stage.index_path.read_bytes())
    assert head["format"] == "episteme-stage/2" and "entries" not in head
    assert head["keyed"] == ["sources"] and head["meta"] == {"documents": 300, "options": {"maxChars": 10}}
    assert len(head["buckets"]) == bucket_count(300, 100) == 4 and head["count"] == 300
    assert len(_buckets(stage)) == 4
    validate(head, "stage-index")
    forget_process_memory()
    index = stage.read_index()
    assert isinstance(index, LazyStageIndex) and index.fingerprint == committed.fingerprint
    assert entry_count(index) == 300 and keyed_fields(index) == ("sources",)
    assert dict(head_meta(index)) == {"documents": 300, "options": {"maxChars": 10}}
    assert index._entries is None  # nothing but the head was read
    remembered = [size for size, known in stage_module._KNOWN.values() if known is index]
    assert remembered == [len(stage.index_path.read_bytes()) + sum(b["bytes"] for b in head["buckets"])]
    assert index.entries == entries and index.meta == meta
    assert list(index.meta["sources"]) == sorted(meta["sources"])


def test_one_changed_item_rewrites_one_bucket_and_the_head(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BUCKETS_FROM_ENV, "100")
    stage = Stage(Home(tmp_path), "documents")
    entries, meta = _content(stage, 300)
    first = stage.commit(entries, meta)
    before = _buckets(stage)
    changed = meta
    for remembered, item in ((True, "key0007"), (False, "key0123")):  # this process wrote the
        if not remembered:  # buckets, or a new one reads them
            forget_process_memory()
            assert len(stage.read_index().entries) == 300  # type: ignore[union-attr]
        changed = {**changed, "sources": {**changed["sources"], item: {"n": -1}}}
        second = stage.commit(entries, changed)
        after = _buckets(stage)
        assert len(set(after) - set(before)) == 1 and len(set(before) - set(after)) == 1
        assert {name: after[name] for name in set(after) & set(before)} == {
            name: before[name] for name in set(after) & set(before)}  # the others were not rewritten
        assert second.fingerprint != first.fingerprint
        forget_process_memory()
        assert stage.read_index().meta == changed  # type: ignore[union-attr]
        before, first = after, second


def test_the_bytes_depend_only_on_the_content(tmp_path: Path) -> None:
    script = """
import sys
from pathlib import Path
from episteme_core.store.home import Home
from episteme_core.store.commits import Stage
stage = Stage(Home(Path(sys.argv[1])), "chunks")
order = list(range(500)) if sys.argv[2] == "up" else list(reversed(range(500)))
entries = [stage.put_bytes(f"k{n}", str(n).encode(), ".json") for n in order]
stage.commit(entries, {"inputs": {f"k{n}": str(n) for n in order}, "chunks": 500})
"""
    homes = []
    for seed, order in (("1", "up"), ("2", "down")):
        home = tmp_path / f"home{seed}"
        env = {**os.environ, "PYTHONHASHSEED": seed, BUCKETS_FROM_ENV: "64"}
        subprocess.run([sys.executable, "-c", script, str(home), order], check=True, env=env)
        homes.append({str(p.relative_to(home)): p.read_bytes()
                      for p in sorted(home.rglob("*")) if p.is_file()})
    assert homes[0] == homes[1] and any(name.startswith("chunks/buckets/") for name in homes[0])


def test_a_one_file_index_is_read_and_rewritten_as_buckets(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    stage = Stage(Home(tmp_path), "documents")
    entries, meta = _content(stage, 300)
    stage.commit(entries, meta)  # below the default threshold: the one-file layout of format 1
    assert "entries" in json.loads(stage.index_path.read_bytes()) and not _buckets(stage)
    forget_process_memory()
    old = stage.read_index()
    assert old is not None and not isinstance(old, LazyStageIndex) and old.meta == meta
    monkeypatch.setenv(BUCKETS_FROM_ENV, "100")
    new = stage.commit(old.entries, dict(old.meta))
    assert json.loads(stage.index_path.read_bytes())["format"] == "episteme-stage/2"
    forget_process_memory()
    again = stage.read_index()
    assert again is not None and again.entries == entries and again.meta == meta
    assert again.fingerprint == new.fingerprint
    monkeypatch.setenv(BUCKETS_FROM_ENV, "1000")  # and back to one file: the buckets go
    stage.commit(entries, meta)
    assert not _buckets(stage) and "entries" in json.loads(stage.index_path.read_bytes())


@pytest.mark.parametrize("harm", ["tamper", "remove"])
def test_a_bad_bucket_is_refused_and_verify_reports_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       harm: str) -> None:
    monkeypatch.setenv(BUCKETS_FROM_ENV, "100")
    home = Home(tmp_path)
    stage = Stage(home, "documents")
    entries, meta = _content(stage, 300)
    stage.commit(entries, meta)
    assert verify_home(home).problems == []
    victim = stage.dir / "buckets" / sorted(_buckets(stage))[1]
    if harm == "tamper":
        victim.write_bytes(victim.read_bytes().replace(b"as first", b"as forged"))
    else:
        victim.unlink()
    forget_process_memory()
    index = stage.read_index()  # the head is whole
    assert index is not None
    with pytest.raises(EpistemeError) as caught:
        index.entries  # noqa: B018
    assert caught.value.code == "INVALID_INPUT" and str(victim) in caught.value.message
    report = verify_home(home)
    assert [p.code for p in report.problems] == ["INDEX_INVALID"]
    assert str(victim) in report.problems[0].message


def test_a_tampered_head_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BUCKETS_FROM_ENV, "100")
    stage = Stage(Home(tmp_path), "documents")
    entries, meta = _content(stage, 300)
    stage.commit(entries, meta)
    forged = stage.index_path.read_bytes().replace(b'"documents":300', b'"documents":301')
    stage.index_path.write_bytes(forged)
    forget_process_memory()
    with pytest.raises(EpistemeError) as caught:
        stage.read_index()
    assert caught.value.code == "INVALID_INPUT" and "fingerprint" in caught.value.message


@pytest.mark.parametrize(("value", "ok"), [("1", True), ("1000000000", True), ("0", False),
                                           ("1000000001", False), ("many", False), ("-5", False)])
def test_the_bucket_threshold_is_bounded(monkeypatch: pytest.MonkeyPatch, value: str, ok: bool) -> None:
    monkeypatch.setenv(BUCKETS_FROM_ENV, value)
    if ok:
        assert buckets_from() == int(value)
    else:
        with pytest.raises(EpistemeError) as caught:
            buckets_from()
        assert caught.value.code == "INVALID_USAGE" and BUCKETS_FROM_ENV in caught.value.message


def test_the_bucket_count_is_bounded() -> None:
    assert bucket_count(1023, 1024) == 0 and bucket_count(1024, 1024) == 8
    assert bucket_count(128, 1) == 1 and bucket_count(129, 1) == 2
    assert bucket_count(MAX_BUCKETS * 128, 1) == MAX_BUCKETS
    assert bucket_count(MAX_BUCKETS * 128 + 1, 1) == MAX_BUCKETS


def test_a_pipeline_over_buckets_reruns_from_the_heads(tmp_path: Path) -> None:
    """With every stage bucketed, an unchanged re-run commits nothing, and one changed file writes
    one bucket of the documents and of the chunks stage besides the heads."""
    env = {BUCKETS_FROM_ENV: "4"}
    home = tmp_path / "home"
    map_path = write_corpus(tmp_path, 24)

    def pipeline() -> dict[str, Any]:
        proc = episteme(home, ["pipeline", "--map", str(map_path), "--json"], env=env)
        assert proc.returncode == 0, proc.stderr.decode()
        return json.loads(proc.stdout)["data"]  # type: ignore[no-any-return]

    pipeline()
    pipeline()  # the first re-run may record what the head-only decisions need
    for name in ("snapshots", "documents", "chunks"):
        assert json.loads((home / name / "index.json").read_bytes())["format"] == "episteme-stage/2"
    files = {name: sorted(os.listdir(home / name / "buckets")) for name in ("documents", "chunks")}
    times = {name: (home / name / "index.json").stat().st_mtime_ns for name in ("documents", "chunks")}
    again = pipeline()
    assert again["extract"]["extracted"] == [] and again["chunk"]["chunked"] == 0
    assert {name: (home / name / "index.json").stat().st_mtime_ns for name in times} == times
    (tmp_path / "files" / "f00005.txt").write_text("a new paragraph about zeta", "utf-8")
    changed = pipeline()
    assert changed["extract"]["extracted"] == ["https://example.org/f5"] and changed["chunk"]["chunked"] == 1
    for name, before in files.items():
        after = sorted(os.listdir(home / name / "buckets"))
        assert len(set(after) - set(before)) == 1 and len(set(before) - set(after)) == 1, name
    found = episteme(home, ["query", "--term", "zeta", "--json"], env=env)
    assert json.loads(found.stdout)["data"]["results"][0]["source"] == "https://example.org/f5"
    assert episteme(home, ["verify", "--json"], env=env).returncode == 0


def test_prune_deletes_what_the_commit_dropped_without_walking(tmp_path: Path) -> None:
    """Over a commit this process knows in full, prune deletes exactly the objects the new commit no
    longer names (a file nobody committed is not looked for); over an unknown one it walks."""
    home = Home(tmp_path / "home")
    stage = Stage(home, "documents")
    entries, meta = _content(stage, 6)
    stage.prune(stage.commit(entries, meta))
    stray = stage.objects_dir / "zz" / "stray.json"
    stray.parent.mkdir(parents=True)
    stray.write_text("{}")
    previous = stage.read_index()
    assert previous is not None and len(previous.entries) == 6  # known in full, as a driver reads it
    dropped = stage.object_path(entries[2])
    assert stage.prune(stage.commit([e for n, e in enumerate(entries) if n != 2], meta)) == 1
    assert not dropped.exists() and stray.exists()
    assert stage.prune(stage.commit([e for n, e in enumerate(entries) if n != 2], meta)) == 0
    forget_process_memory()  # a new process: the previous commit is not known, so the folder is walked
    fresh = Stage(home, "documents")
    assert fresh.prune(fresh.commit(entries[:3], meta)) == 4  # entries 3, 4, 5 and the stray
    assert not stray.exists() and not fresh.object_path(entries[4]).exists()
    assert [e.key for e in Stage(home, "documents").read_index().entries] == [e.key for e in entries[:3]]
