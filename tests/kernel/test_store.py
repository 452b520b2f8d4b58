"""Blobs, stage commits, the log: content addressing, verified reads, refusal of tampered files."""

from __future__ import annotations

from pathlib import Path

import pytest

from episteme_core.errors import EpistemeError
from episteme_core.records.canonical import sha256_hex
from episteme_core.records.storage import LogEntry
from episteme_core.store.blobs import BlobStore
from episteme_core.store.commits import Stage
from episteme_core.store.home import Home
from episteme_core.store.log import Log


def test_blobs_are_stored_once_by_sha256(tmp_path: Path) -> None:
    blobs = BlobStore(tmp_path / "blobs")
    digest = blobs.put(b"hello")
    assert digest == sha256_hex(b"hello")
    assert blobs.put(b"hello") == digest
    assert [p.name for p in blobs.iter_paths()] == [digest]
    assert blobs.get(digest) == b"hello"


def test_a_tampered_blob_is_refused_by_name(tmp_path: Path) -> None:
    blobs = BlobStore(tmp_path / "blobs")
    digest = blobs.put(b"hello")
    blobs.path_for(digest).write_bytes(b"HELLO")
    with pytest.raises(EpistemeError) as caught:
        blobs.get(digest)
    assert caught.value.code == "INVALID_INPUT"
    assert str(blobs.path_for(digest)) in caught.value.message


def test_a_blob_name_that_is_not_a_digest_is_refused(tmp_path: Path) -> None:
    with pytest.raises(EpistemeError):
        BlobStore(tmp_path).path_for("../../etc/passwd")


def test_stage_commit_names_objects_and_reads_them_back(tmp_path: Path) -> None:
    stage = Stage(Home(tmp_path), "documents")
    assert stage.read_index() is None
    entries = [stage.put_json("b", {"n": 2}), stage.put_json("a", {"n": 1})]
    index = stage.commit(entries, meta={"note": "x"})
    assert [e.key for e in index.entries] == ["a", "b"]
    again = stage.read_index()
    assert again == index
    assert stage.read_json(again.entries[0]) == {"n": 1}


def test_commit_is_byte_identical_for_the_same_content(tmp_path: Path) -> None:
    one, two = Stage(Home(tmp_path / "1"), "chunks"), Stage(Home(tmp_path / "2"), "chunks")
    for stage, order in ((one, ["x", "y"]), (two, ["y", "x"])):
        stage.commit([stage.put_json(k, {"k": k}) for k in order])
    assert one.index_path.read_bytes() == two.index_path.read_bytes()


def test_prune_removes_only_what_the_commit_no_longer_names(tmp_path: Path) -> None:
    stage = Stage(Home(tmp_path), "chunks")
    old = stage.put_json("old", {"v": 0})
    stage.commit([old])
    new = stage.put_json("new", {"v": 1})
    index = stage.commit([new])
    assert stage.prune(index) == 1
    assert not stage.object_path(old).exists()
    assert stage.read_json(new) == {"v": 1}


@pytest.mark.parametrize("target", ["index", "object", "object-missing"])
def test_tampering_is_refused_naming_the_file_and_nothing_is_rewritten(
    tmp_path: Path, target: str
) -> None:
    stage = Stage(Home(tmp_path), "documents")
    entry = stage.put_json("a", {"n": 1})
    stage.commit([entry])
    object_path = stage.object_path(entry)
    if target == "index":
        raw = stage.index_path.read_bytes().replace(b'"a"', b'"b"')
        stage.index_path.write_bytes(raw)
        named = stage.index_path
    elif target == "object":
        object_path.write_bytes(b'{"n":2}\n')
        named = object_path
    else:
        object_path.unlink()
        named = object_path
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    with pytest.raises(EpistemeError) as caught:
        index = stage.read_index()
        assert index is not None
        stage.read_json(index.entries[0])
    assert caught.value.code == "INVALID_INPUT"
    assert str(named) in caught.value.message
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


def test_an_index_entry_cannot_point_outside_its_stage(tmp_path: Path) -> None:
    from episteme_core.records.storage import StageEntry

    stage = Stage(Home(tmp_path), "documents")
    with pytest.raises(EpistemeError, match="outside the stage"):
        stage.object_path(StageEntry(key="k", sha256="0" * 64, bytes=1, path="../../x"))


def test_the_log_appends_whole_lines_and_skips_a_torn_last_line(tmp_path: Path) -> None:
    log = Log(tmp_path / "log.jsonl")
    first = LogEntry(time="2026-01-01T00:00:00Z", command="snapshot", source="u", status="captured")
    log.append(first)
    log.append(LogEntry(time="2026-01-02T00:00:00Z", command="snapshot", source="v", status="unchanged"))
    with open(log.path, "ab") as handle:
        handle.write(b'{"time":"2026')  # a crash mid-append
    assert [e.source for e in log.entries()] == ["u", "v"]
    assert log.position() == 2
    assert log.path.read_bytes().count(b"\n") == 2


def test_captures_after_a_mark_are_what_makes_derived_stages_stale(tmp_path: Path) -> None:
    log = Log(tmp_path / "log.jsonl")
    assert log.captured_kinds_after(0) == set()
    assert log.captured_kinds_after(1) is None  # a mark past the end of a missing log
    log.append(LogEntry(time="t", command="snapshot", source="http", status="captured"))
    mark = log.path.stat().st_size
    log.append(LogEntry(time="t", command="snapshot", source="http", status="unchanged"))
    log.append(LogEntry(time="t", command="snapshot", source="http", status="failed", code="X"))
    assert log.captured_kinds_after(mark) == set()
    log.append(LogEntry(time="t", command="ingest", source="books", status="captured"))
    assert log.captured_kinds_after(mark) == {"books"}
    assert log.captured_kinds_after(0) == {"http", "books"}
    assert log.captured_kinds_after(log.path.stat().st_size + 1) is None  # the log was cut short
