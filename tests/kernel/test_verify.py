"""``episteme verify`` audits the whole home and lists every problem, changing nothing."""

from __future__ import annotations

from pathlib import Path

from episteme_core.records.convert import unstructure
from episteme_core.records.storage import LogEntry, SnapshotIdentity, SnapshotRecord
from episteme_core.store.blobs import BlobStore
from episteme_core.store.commits import Stage
from episteme_core.store.home import Home
from episteme_core.store.log import Log
from episteme_core.testing import invoke, validate


def _populate(root: Path) -> dict[str, Path]:
    home = Home(root)
    blobs = BlobStore(home.blobs_dir)
    digest = blobs.put(b"<p>hello</p>")
    identity = SnapshotIdentity("file", "https://example.org/", None, "text/html", "utf-8", 12, digest)
    record = SnapshotRecord(
        id=identity.snapshot_id, capture_kind="file", source="https://example.org/", final_url=None,
        content_type="text/html", charset="utf-8", byte_length=12, content_sha256=digest,
        observed_at="2026-01-01T00:00:00Z",
    )
    snapshots = Stage(home, "snapshots")
    entry = snapshots.put_json(record.id, unstructure(record))
    snapshots.commit([entry])
    documents = Stage(home, "documents")
    doc = documents.put_json("https://example.org/", {"text": "hello"})
    documents.commit([doc])
    Log(home.log_path).append(LogEntry(time="2026-01-01T00:00:00Z", command="manual-ingest",
                                       source="https://example.org/", status="captured",
                                       snapshot_id=record.id))
    return {
        "blob": blobs.path_for(digest),
        "snapshot-object": snapshots.object_path(entry),
        "documents-index": documents.index_path,
        "log": home.log_path,
    }


def _files(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_a_clean_home_verifies_with_counts(home: Path) -> None:
    _populate(home)
    result = invoke("--json", "--home", str(home), "verify")
    assert result.exit_code == 0, result.stderr
    data = result.envelope["data"]
    validate(data, "verify-report")
    assert data["checked"] == {"blobs": 1, "logLines": 1, "objects": 2, "stages": 2}
    assert "no problems" in invoke("--home", str(home), "verify").stdout


def test_every_problem_is_listed_and_nothing_is_rewritten(home: Path) -> None:
    paths = _populate(home)
    paths["blob"].write_bytes(b"<p>HELLO</p>")
    paths["snapshot-object"].write_bytes(paths["snapshot-object"].read_bytes().replace(b"file", b"http"))
    paths["documents-index"].write_bytes(paths["documents-index"].read_bytes().replace(b"https", b"http"))
    with open(paths["log"], "ab") as handle:
        handle.write(b'{"torn":')
    before = _files(home)
    result = invoke("--json", "--home", str(home), "verify")
    assert result.exit_code == 3
    error = result.envelope["error"]
    validate(result.envelope, "cli-envelope")
    assert error["code"] == "INVALID_INPUT"
    found = {(p["code"], p["path"]) for p in error["details"]["problems"]}
    for problem in error["details"]["problems"]:
        validate(problem, "problem")
    assert ("BLOB_MISMATCH", str(paths["blob"])) in found
    assert ("OBJECT_INVALID", str(paths["snapshot-object"])) in found
    assert ("INDEX_INVALID", str(paths["documents-index"])) in found
    assert ("LOG_TORN_LINE", f"{paths['log']}:2") in found
    assert len(found) == 4
    assert _files(home) == before
    human = invoke("--home", str(home), "verify")
    assert "4 problem(s)" in human.stderr and str(paths["blob"]) in human.stderr


def test_a_missing_blob_of_a_snapshot_is_a_problem(home: Path) -> None:
    paths = _populate(home)
    paths["blob"].unlink()
    result = invoke("--json", "--home", str(home), "verify")
    codes = [p["code"] for p in result.envelope["error"]["details"]["problems"]]
    assert codes == ["BLOB_MISSING"]


def test_temp_files_from_a_killed_writer_are_notes_not_problems(home: Path) -> None:
    _populate(home)
    (home / "documents" / ".index.json.123.abc.tmp").write_bytes(b"partial")
    result = invoke("--json", "--home", str(home), "verify")
    assert result.exit_code == 0
    assert [w["code"] for w in result.envelope["warnings"]] == ["TEMP_FILE"]


def test_verifying_a_home_that_does_not_exist_fails_clearly(home: Path) -> None:
    result = invoke("--json", "--home", str(home), "verify")
    assert result.exit_code == 3
    assert str(home) in result.envelope["error"]["message"]
