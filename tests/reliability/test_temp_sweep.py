"""Temp files a killed writer leaves in ``objects/xx/`` and ``blobs/sha256/xx/`` are reported by
``verify`` and swept by the next writer under the lock; a live process's temp file is left alone.

A killed writer leaves its lock file naming its process (a finished one removes it): the next
writer sweeps only then. ``_killed_writer`` leaves what such a writer leaves."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from episteme_core.testing import invoke


def _home_with_a_snapshot(tmp_path: Path, home: Path) -> Path:
    (tmp_path / "a.txt").write_text("alpha")
    map_path = tmp_path / "map.json"
    map_path.write_text(json.dumps([{"sourceUrl": "https://example.org/a", "localPath": "a.txt"}]))
    assert invoke("--home", str(home), "manual-ingest", "--map", str(map_path)).exit_code == 0
    return map_path


def _litter(home: Path, pid: int) -> list[Path]:
    blob_dir = next(p for p in (home / "blobs" / "sha256").iterdir() if p.is_dir())
    object_dir = next(p for p in (home / "snapshots" / "objects").iterdir() if p.is_dir())
    paths = [
        blob_dir / f".{'ab' * 32}.{pid}.{'0' * 32}.tmp",
        object_dir / f".{'cd' * 32}.json.{pid}.{'1' * 32}.tmp",
        home / "blobs" / "sha256" / f".incoming.{pid}.{'2' * 32}.tmp",
        home / "snapshots" / f".index.json.{pid}.{'3' * 32}.tmp",
    ]
    for path in paths:
        path.write_bytes(b"half written")
    return paths


def _killed_writer(home: Path, pid: int) -> None:
    """The lock file a writer ``pid`` killed while it held the lock leaves behind."""
    from episteme_core.records.canonical import canonical_bytes
    from episteme_core.records.convert import unstructure
    from episteme_core.records.storage import LockOwner
    from episteme_core.store.processes import hostname

    owner = LockOwner(pid=pid, host=hostname(), command="manual-ingest", token="0" * 32,
                      acquired_at="2026-01-01T00:00:00Z")
    (home / "writer.lock").write_bytes(canonical_bytes(unstructure(owner)))


def _dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True)
    return int(proc.stdout)


def test_verify_reports_and_the_next_writer_sweeps(tmp_path: Path, home: Path) -> None:
    map_path = _home_with_a_snapshot(tmp_path, home)
    dead = _dead_pid()
    litter = _litter(home, dead)
    _killed_writer(home, dead)
    verify = invoke("--json", "--home", str(home), "verify")
    assert verify.exit_code == 0
    notes = [w for w in verify.envelope["warnings"] if w["code"] == "TEMP_FILE"]
    assert len(notes) == len(litter)
    assert all(any(str(path) in w["message"] for w in notes) for path in litter)
    # the next writer (here one with nothing to do) removes them under the lock
    again = invoke("--json", "--home", str(home), "manual-ingest", "--map", str(map_path))
    assert again.exit_code == 0 and again.envelope["data"]["committed"] is False
    assert [w["code"] for w in again.envelope["warnings"]] == ["STALE_LOCK_BROKEN"]
    assert [p for p in litter if p.exists()] == []
    assert not (home / "writer.lock").exists()
    clean = invoke("--json", "--home", str(home), "verify")
    assert [w for w in clean.envelope["warnings"] if w["code"] == "TEMP_FILE"] == []


def test_a_temp_file_of_a_live_process_is_left_alone(tmp_path: Path, home: Path) -> None:
    map_path = _home_with_a_snapshot(tmp_path, home)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        litter = _litter(home, sleeper.pid)
        _killed_writer(home, _dead_pid())
        assert invoke("--home", str(home), "manual-ingest", "--map", str(map_path)).exit_code == 0
        assert all(path.exists() for path in litter)
    finally:
        sleeper.kill()
        sleeper.wait()
    _killed_writer(home, _dead_pid())
    assert invoke("--home", str(home), "manual-ingest", "--map", str(map_path)).exit_code == 0
    assert not any(path.exists() for path in litter)


def test_the_write_probe_of_a_writer_waiting_for_the_lock_is_left_alone(tmp_path: Path, home: Path) -> None:
    """Found with 55 writers at once: a writer sweeping the home removed the probe another one was
    writing to check the home (``.probe.PID.tmp``), which then failed with INVALID_INPUT."""
    from episteme_core.store.atomic import temp_owner

    assert temp_owner(".probe.4242.tmp") == 4242
    map_path = _home_with_a_snapshot(tmp_path, home)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        probe = home / f".probe.{sleeper.pid}.tmp"
        probe.write_bytes(b"")
        _killed_writer(home, _dead_pid())
        assert invoke("--home", str(home), "manual-ingest", "--map", str(map_path)).exit_code == 0
        assert probe.exists()
    finally:
        sleeper.kill()
        sleeper.wait()


def test_only_temp_files_are_swept(tmp_path: Path, home: Path) -> None:
    map_path = _home_with_a_snapshot(tmp_path, home)
    before = sorted(p for p in home.rglob("*") if p.is_file())
    # not a temp name (no leading dot); outside the stages' objects folders, which a recovering
    # writer prunes of what their commit does not name (see the test after this one)
    keep = home / "blobs" / "sha256" / "notes.tmp"
    keep.write_text("mine")
    os.makedirs(home / "blobs" / "sha256" / "zz", exist_ok=True)
    _killed_writer(home, _dead_pid())
    assert invoke("--home", str(home), "manual-ingest", "--map", str(map_path)).exit_code == 0
    assert keep.exists()
    assert sorted(p for p in home.rglob("*") if p.is_file() and p != keep) == before


def test_a_writer_after_one_that_finished_lists_no_folder(tmp_path: Path, home: Path) -> None:
    """No lock file left (the last writer finished): nothing can be left to sweep, so the next
    writer does not list the store's folders; a temp file put there by hand stays for ``verify``."""
    map_path = _home_with_a_snapshot(tmp_path, home)
    assert not (home / "writer.lock").exists()
    litter = _litter(home, _dead_pid())
    again = invoke("--json", "--home", str(home), "manual-ingest", "--map", str(map_path))
    assert again.exit_code == 0 and again.envelope["warnings"] == []
    assert all(path.exists() for path in litter)
    notes = invoke("--json", "--home", str(home), "verify").envelope["warnings"]
    assert len([w for w in notes if w["code"] == "TEMP_FILE"]) == len(litter)


def test_a_writer_killed_while_writing_leaves_temp_files_the_next_one_sweeps(
        tmp_path: Path, home: Path) -> None:
    """A real kill (SIGKILL at the fault point after a temp file is written): the lock file it
    leaves names it, and the next writer sweeps what it left."""
    from episteme_core.store.home import Home
    from episteme_core.store.sweep import leftover_temp_files

    (tmp_path / "a.txt").write_text("alpha")
    map_path = tmp_path / "map.json"
    map_path.write_text(json.dumps([{"sourceUrl": "https://example.org/a", "localPath": "a.txt"}]))
    env = {**os.environ, "EPISTEME_FAULT": "temp-written"}
    killed = subprocess.run([sys.executable, "-m", "episteme_core", "--home", str(home), "manual-ingest",
                             "--map", str(map_path)], env=env, capture_output=True)
    assert killed.returncode != 0
    assert (home / "writer.lock").read_bytes()  # left naming the killed writer
    assert leftover_temp_files(Home(home)) != []
    again = invoke("--json", "--home", str(home), "manual-ingest", "--map", str(map_path))
    assert again.exit_code == 0
    assert leftover_temp_files(Home(home)) == []


def test_a_writer_recovering_from_a_killed_one_prunes_unnamed_objects(tmp_path: Path, home: Path) -> None:
    """A writer killed in its prune (after its commit) leaves objects no commit names; the next
    writer removes them when it takes over the lock, whether or not it commits that stage."""
    map_path = _home_with_a_snapshot(tmp_path, home)
    object_dir = next(p for p in (home / "snapshots" / "objects").iterdir() if p.is_dir())
    orphan = object_dir / f"{'ef' * 32}.json"
    orphan.write_text("{}")
    assert invoke("--home", str(home), "manual-ingest", "--map", str(map_path)).exit_code == 0
    assert orphan.exists()  # the last writer finished: nothing to recover
    _killed_writer(home, _dead_pid())
    again = invoke("--json", "--home", str(home), "manual-ingest", "--map", str(map_path))
    assert again.exit_code == 0 and again.envelope["data"]["committed"] is False
    assert not orphan.exists()
    assert invoke("--home", str(home), "verify").exit_code == 0
