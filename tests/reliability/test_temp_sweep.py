"""Temp files a killed writer leaves in ``objects/xx/`` and ``blobs/sha256/xx/`` are reported by
``verify`` and swept by the next writer under the lock; a live process's temp file is left alone."""

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


def _dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True)
    return int(proc.stdout)


def test_verify_reports_and_the_next_writer_sweeps(tmp_path: Path, home: Path) -> None:
    map_path = _home_with_a_snapshot(tmp_path, home)
    litter = _litter(home, _dead_pid())
    verify = invoke("--json", "--home", str(home), "verify")
    assert verify.exit_code == 0
    notes = [w for w in verify.envelope["warnings"] if w["code"] == "TEMP_FILE"]
    assert len(notes) == len(litter)
    assert all(any(str(path) in w["message"] for w in notes) for path in litter)
    # the next writer (here one with nothing to do) removes them under the lock
    again = invoke("--json", "--home", str(home), "manual-ingest", "--map", str(map_path))
    assert again.exit_code == 0 and again.envelope["data"]["committed"] is False
    assert [p for p in litter if p.exists()] == []
    clean = invoke("--json", "--home", str(home), "verify")
    assert [w for w in clean.envelope["warnings"] if w["code"] == "TEMP_FILE"] == []


def test_a_temp_file_of_a_live_process_is_left_alone(tmp_path: Path, home: Path) -> None:
    map_path = _home_with_a_snapshot(tmp_path, home)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        litter = _litter(home, sleeper.pid)
        assert invoke("--home", str(home), "manual-ingest", "--map", str(map_path)).exit_code == 0
        assert all(path.exists() for path in litter)
    finally:
        sleeper.kill()
        sleeper.wait()
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
        assert invoke("--home", str(home), "manual-ingest", "--map", str(map_path)).exit_code == 0
        assert probe.exists()
    finally:
        sleeper.kill()
        sleeper.wait()


def test_only_temp_files_are_swept(tmp_path: Path, home: Path) -> None:
    map_path = _home_with_a_snapshot(tmp_path, home)
    before = sorted(p for p in home.rglob("*") if p.is_file())
    keep = home / "snapshots" / "objects" / "notes.tmp"  # not a temp name: no leading dot
    keep.write_text("mine")
    os.makedirs(home / "blobs" / "sha256" / "zz", exist_ok=True)
    assert invoke("--home", str(home), "manual-ingest", "--map", str(map_path)).exit_code == 0
    assert keep.exists()
    assert sorted(p for p in home.rglob("*") if p.is_file() and p != keep) == before
