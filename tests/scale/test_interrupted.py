"""A parallel stage interrupted: SIGTERM exits 143 with the lock released and no temp files; a fault
point hit inside a worker leaves the store as it was, and the next run completes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from episteme_core.testing.crashmatrix import episteme, home_state

from .conftest import write_corpus


def _slow_home(tmp_path: Path, home: Path, plugin_site, count: int) -> dict[str, str]:  # type: ignore[no-untyped-def]
    env = plugin_site("slow")
    map_path = write_corpus(tmp_path, count, content_type="text/x-slow", settle=False)
    proc = episteme(home, ["manual-ingest", "--map", str(map_path)], env)
    assert proc.returncode == 0, proc.stderr.decode()
    return {**env, "EPISTEME_SLOW_SECONDS": "0.1"}


def test_sigterm_during_a_parallel_extract(tmp_path: Path, home: Path, plugin_site) -> None:  # type: ignore[no-untyped-def]
    env = _slow_home(tmp_path, home, plugin_site, 200)
    before = home_state(home)
    proc = subprocess.Popen([sys.executable, "-m", "episteme_core", "--home", str(home), "extract",
                             "--jobs", "2", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, **env})
    objects = home / "documents" / "objects"
    deadline = time.monotonic() + 60
    while not (objects.exists() and any(p.is_file() for p in objects.rglob("*"))):
        assert time.monotonic() < deadline and proc.poll() is None, "the extract never started writing"
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 143, stderr.decode()
    assert not (home / "writer.lock").exists()
    assert [p for p in home.rglob("*.tmp")] == []
    assert home_state(home) == before  # nothing committed
    assert episteme(home, ["extract", "--jobs", "2"], {**env, "EPISTEME_SLOW_SECONDS": "0"}).returncode == 0


def test_a_fault_in_a_worker_leaves_the_store_as_before(tmp_path: Path, home: Path, plugin_site) -> None:  # type: ignore[no-untyped-def]
    env = {**_slow_home(tmp_path, home, plugin_site, 12), "EPISTEME_SLOW_SECONDS": "0"}
    before = home_state(home)
    proc = episteme(home, ["extract", "--jobs", "2", "--json"],
                    {**env, "EPISTEME_FAULT": "after-object-write:5"})
    assert proc.returncode != 0
    assert home_state(home) == before
    done = episteme(home, ["extract", "--jobs", "2", "--json"], env)
    assert done.returncode == 0, done.stderr.decode()
    serial = tmp_path / "serial"
    assert episteme(serial, ["manual-ingest", "--map", str(tmp_path / "map.json")], env).returncode == 0
    assert episteme(serial, ["extract", "--jobs", "1"], env).returncode == 0
    index = Path("documents") / "index.json"
    assert (home / index).read_bytes() == (serial / index).read_bytes()
