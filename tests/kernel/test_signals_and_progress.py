"""SIGINT/SIGTERM end a writer cleanly (130/143, lock released, no temp files); progress reporting."""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from episteme_core.testing import validate


def _start_hold(home: Path, env: dict[str, str], *extra: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "episteme_core", "--home", str(home), *extra,
         "sample-hold", "--steps", "400"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, **env},
    )


def _wait_for_objects(home: Path, count: int = 3) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        objects = home / "blobs"
        if objects.exists() and sum(1 for _ in objects.rglob("*")) >= count:
            return
        time.sleep(0.02)
    raise AssertionError("the writer never started writing")


@pytest.mark.parametrize(("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_cancels_releases_the_lock_and_leaves_no_temp_files(
    home: Path, plugin_site, sig: signal.Signals, status: int
) -> None:
    env = plugin_site("sample")
    proc = _start_hold(home, env, "--json")
    _wait_for_objects(home)
    proc.send_signal(sig)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == status
    envelope = json.loads(stderr.decode().strip().splitlines()[-1])
    validate(envelope, "cli-envelope")
    assert envelope["error"]["code"] == "CANCELLED"
    assert envelope["error"]["details"] == {"signal": sig.name}
    assert not (home / "writer.lock").exists()
    assert [p for p in home.rglob("*.tmp")] == []
    assert not (home / "snapshots" / "index.json").exists()  # nothing half-committed


def test_progress_under_json_is_json_lines_on_stderr(home: Path, plugin_site) -> None:
    env = plugin_site("sample")
    proc = subprocess.run(
        [sys.executable, "-m", "episteme_core", "--home", str(home), "--json",
         "--progress", "always", "sample-hold", "--steps", "3"],
        capture_output=True, env={**os.environ, **env}, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stderr.decode().splitlines()]
    assert [e["current"] for e in events] == [1, 2, 3]
    for event in events:
        validate(event, "progress-event")
    validate(json.loads(proc.stdout), "cli-envelope")


def test_progress_auto_is_silent_when_stderr_is_not_a_terminal(home: Path, plugin_site) -> None:
    env = plugin_site("sample")
    proc = subprocess.run(
        [sys.executable, "-m", "episteme_core", "--home", str(home), "sample-hold", "--steps", "2"],
        capture_output=True, env={**os.environ, **env}, timeout=60,
    )
    assert proc.returncode == 0
    assert proc.stderr == b""
    assert proc.stdout == b"held\n"


def test_progress_on_a_terminal_is_a_rich_bar(home: Path, plugin_site) -> None:
    env = plugin_site("sample")
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "episteme_core", "--home", str(home), "sample-hold", "--steps", "15"],
        stdout=subprocess.PIPE, stderr=follower, env={**os.environ, **env, "COLUMNS": "80"},
    )
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    proc.wait(timeout=60)
    os.close(leader)
    assert proc.returncode == 0
    assert b"hold" in seen and b"\x1b[" in seen  # drawn with terminal control sequences


def test_a_swallowed_cancellation_still_commits_nothing(tmp_path: Path) -> None:
    """A signal handler raises ``Cancelled`` wherever the program is; code that turns exceptions into
    diagnostics may swallow it. The request is remembered, so the run's commit refuses with
    CANCELLED and the stage stays as it was; the next write run starts afresh."""
    from episteme_core.errors import Cancelled, clear_cancel
    from episteme_core.store.commits import Stage
    from episteme_core.store.home import Home
    from episteme_core.store.lock import holding

    store = Home(tmp_path / "home")
    store.ensure_writable()
    stage = Stage(store, "documents")
    try:
        with holding(store.lock_path, "test"):
            entries = [stage.put_json("a", {"n": 1})]
            try:
                raise Cancelled("SIGTERM")  # as a handler would, inside code that swallows it
            except Exception:
                pass
            with pytest.raises(Cancelled):
                stage.commit(entries)
        assert stage.read_index() is None
        with holding(store.lock_path, "test"):  # a new run: the old request is forgotten
            assert [e.key for e in stage.commit(entries).entries] == ["a"]
    finally:
        clear_cancel()
