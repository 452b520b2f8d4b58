"""The writer lock: exclusive, broken with a warning when its holder died, RESOURCE_BUSY when alive."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from episteme_core.errors import EpistemeError
from episteme_core.store.lock import WriterLock, read_owner
from episteme_core.store.processes import hostname
from episteme_core.testing import invoke, run_cli

HOLDER = """
import sys, time
from pathlib import Path
from episteme_core.store.lock import WriterLock
lock = WriterLock(Path(sys.argv[1]), "holder")
lock.acquire()
print("held", flush=True)
time.sleep(60)
"""


def _start_holder(lock_path: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(lock_path)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_a_second_writer_is_refused_while_the_first_holds(tmp_path: Path) -> None:
    path = tmp_path / "writer.lock"
    with WriterLock(path, "first"):
        with pytest.raises(EpistemeError) as caught:
            WriterLock(path, "second").acquire()
        assert caught.value.code == "RESOURCE_BUSY"
        assert caught.value.retryable
        assert caught.value.details and caught.value.details["owner"]["command"] == "first"
    assert not path.exists()
    with WriterLock(path, "third"):
        assert read_owner(path).command == "third"  # type: ignore[union-attr]


def test_a_live_holder_gives_resource_busy_exit_7_through_the_cli(home: Path) -> None:
    home.mkdir()
    holder = _start_holder(home / "writer.lock")
    try:
        result = run_cli(["--home", str(home), "--json", "init"])
        assert result.exit_code == 7
        error = result.envelope["error"]
        assert error["code"] == "RESOURCE_BUSY" and error["retryable"] is True
        assert error["details"]["owner"]["pid"] == holder.pid
        assert not (home / "config.json").exists()
    finally:
        holder.kill()
        holder.wait()


def _dead_holders_lock(home: Path) -> None:
    home.mkdir()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    owner = {"pid": int(dead.stdout), "host": hostname(), "command": "snapshot",
             "token": "t", "acquiredAt": "2026-01-01T00:00:00Z"}
    (home / "writer.lock").write_text(json.dumps(owner))


def test_a_dead_holders_lock_is_broken_with_a_warning(home: Path) -> None:
    _dead_holders_lock(home)
    result = invoke("--home", str(home), "--json", "init")
    assert result.exit_code == 0, result.stderr
    codes = [w["code"] for w in result.envelope["warnings"]]
    assert codes == ["STALE_LOCK_BROKEN"]
    assert not (home / "writer.lock").exists()


def test_a_lock_from_another_host_is_never_broken(home: Path) -> None:
    home.mkdir()
    owner = {"pid": 1, "host": "elsewhere.example", "command": "index",
             "token": "t", "acquiredAt": "2026-01-01T00:00:00Z"}
    (home / "writer.lock").write_text(json.dumps(owner))
    result = invoke("--home", str(home), "--json", "init")
    assert result.exit_code == 7
    assert (home / "writer.lock").exists()


def test_release_leaves_someone_elses_lock_alone(tmp_path: Path) -> None:
    path = tmp_path / "writer.lock"
    lock = WriterLock(path, "mine")
    lock.acquire()
    path.unlink()
    other = WriterLock(path, "theirs")
    other.acquire()
    lock.release()
    assert read_owner(path).command == "theirs"  # type: ignore[union-attr]
    other.release()


def test_readers_never_take_the_lock(home: Path) -> None:
    home.mkdir()
    holder = _start_holder(home / "writer.lock")
    try:
        started = time.monotonic()
        result = run_cli(["--home", str(home), "verify"])
        assert result.exit_code == 0, result.stderr
        assert time.monotonic() - started < 30  # a reader waiting for the lock would never end
    finally:
        holder.kill()
        holder.wait()


def test_a_sigterm_while_a_dead_holders_lock_is_read_cancels_the_command(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The signal lands in the code that reads the holder's file, whose errors mean "unreadable, break
    it": the command is cancelled all the same (143, CANCELLED, nothing written), the lock is free
    for the next writer of this process, and the next command runs as if nothing happened."""
    import os
    import signal

    import episteme_core.store.lock as lock_module

    _dead_holders_lock(home)
    real = lock_module.loads_strict
    shots: list[int] = []

    def read_under_a_signal(raw: bytes, *, source: str) -> object:
        if not shots:
            shots.append(1)
            os.kill(os.getpid(), signal.SIGTERM)  # the CLI's handler raises Cancelled right here
        return real(raw, source=source)

    monkeypatch.setattr(lock_module, "loads_strict", read_under_a_signal)
    handlers = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    try:
        result = invoke("--home", str(home), "--json", "init")
    finally:
        signal.signal(signal.SIGTERM, handlers[0])
        signal.signal(signal.SIGINT, handlers[1])
    assert shots and result.exit_code == 143, result.stderr
    assert result.envelope["error"]["code"] == "CANCELLED"
    assert not (home / "config.json").exists()
    with WriterLock(home / "writer.lock", "next"):  # its descriptor was closed: no lock kept
        pass
    monkeypatch.setattr(lock_module, "loads_strict", real)
    again = invoke("--home", str(home), "--json", "init")
    assert again.exit_code == 0, again.stderr
    assert (home / "config.json").exists()
