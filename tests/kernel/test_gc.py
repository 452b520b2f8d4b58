"""``episteme gc``: what nothing names (blobs, stage objects, buckets, dead writers' temp files)
listed by ``--dry-run`` and removed under the lock; everything named stays, and a stage it cannot
read stops it before it removes anything."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from episteme_core.kernel.context import RunContext
from episteme_core.kernel.loader import load_plugins
from episteme_core.store.home import Home
from episteme_core.testing import invoke
from episteme_core.testing.crashmatrix import episteme, stored_files


def _packed(home: Path, tmp_path: Path) -> None:
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    (shelf / "a.txt").write_text("Evidence of a book.\n\nAnd more.\n")
    assert invoke("--home", str(home), "ingest", "books", str(shelf)).exit_code == 0


def _garbage(home: Path) -> list[str]:
    data = b"bytes nothing names"
    blob = hashlib.sha256(data).hexdigest()
    (home / "blobs" / "sha256" / blob[:2]).mkdir(parents=True, exist_ok=True)
    (home / "blobs" / "sha256" / blob[:2] / blob).write_bytes(data)
    body = b'{"stray":true}\n'
    digest = hashlib.sha256(body).hexdigest()
    (home / "chunks" / "objects" / digest[:2]).mkdir(parents=True, exist_ok=True)
    (home / "chunks" / "objects" / digest[:2] / f"{digest}.json").write_bytes(body)
    (home / "documents" / "buckets").mkdir(exist_ok=True)
    (home / "documents" / "buckets" / f"{'f' * 64}.json").write_bytes(b"{}\n")
    temp = home / "snapshots" / ".index.json.99999999.0a1b.tmp"  # a dead writer's
    temp.write_bytes(b"half")
    return sorted([f"blobs/sha256/{blob[:2]}/{blob}", f"chunks/objects/{digest[:2]}/{digest}.json",
                   f"documents/buckets/{'f' * 64}.json", "snapshots/.index.json.99999999.0a1b.tmp"])


def test_gc_lists_then_removes_only_what_nothing_names(home: Path, tmp_path: Path) -> None:
    _packed(home, tmp_path)
    named = stored_files(home)
    clean = invoke("--home", str(home), "gc", "--json").envelope["data"]
    assert clean["files"] == 0 and clean["removed"] == 0
    garbage = _garbage(home)
    before = {p: p.read_bytes() for p in home.rglob("*") if p.is_file()}
    dry = invoke("--home", str(home), "gc", "--dry-run", "--json")
    assert dry.exit_code == 0
    data = dry.envelope["data"]
    assert sorted(data["blobs"] + data["objects"] + data["buckets"] + data["tempFiles"]) == garbage
    assert data["files"] == 4 and data["bytes"] == sum(len((home / p).read_bytes()) for p in garbage)
    assert {p: p.read_bytes() for p in home.rglob("*") if p.is_file()} == before
    human = invoke("--home", str(home), "gc", "--dry-run")
    assert all(f"  {path}" in human.stdout for path in garbage)
    done = invoke("--home", str(home), "gc", "--json")
    assert done.exit_code == 0 and done.envelope["data"]["removed"] == 4
    assert stored_files(home) == named and not any((home / p).exists() for p in garbage)
    assert invoke("--home", str(home), "verify").exit_code == 0
    assert invoke("--home", str(home), "query", "--term", "evidence").exit_code == 0
    assert invoke("--home", str(home), "gc").stdout.startswith("nothing to collect")


def test_gc_removes_nothing_when_a_snapshot_record_cannot_be_read(home: Path, tmp_path: Path) -> None:
    _packed(home, tmp_path)
    garbage = _garbage(home)
    index = json.loads((home / "snapshots" / "index.json").read_bytes())
    entry = index["entries"][0]
    (home / "snapshots" / entry["path"]).write_bytes(b'{"tampered":true}\n')
    result = invoke("--home", str(home), "gc", "--json")
    assert result.exit_code == 3 and result.envelope["error"]["code"] == "INVALID_INPUT"
    assert all((home / p).exists() for p in garbage)


def test_gc_is_a_writer_and_waits_for_none(home: Path, tmp_path: Path) -> None:
    _packed(home, tmp_path)
    garbage = _garbage(home)
    ctx = RunContext(command="holder", home=Home(home), plugins=load_plugins())
    with ctx.writing():
        busy = episteme(home, ["gc", "--json"])
        assert busy.returncode == 7 and b"RESOURCE_BUSY" in busy.stderr
    assert all((home / p).exists() for p in garbage)
