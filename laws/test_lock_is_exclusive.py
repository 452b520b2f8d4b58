"""LockIsExclusive: however many writers race for a home, at most one holds the writer lock at a time.

Racers start together from a barrier, with no lock or with a dead process's lock left behind; exactly
one wins while the winner holds, every other gets RESOURCE_BUSY.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from episteme_core.errors import EpistemeError
from episteme_core.store.lock import WriterLock
from episteme_core.store.processes import hostname


def _dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(proc.stdout)


@settings(max_examples=25, deadline=None)
@given(racers=st.integers(min_value=2, max_value=8), stale=st.booleans())
def test_exactly_one_racer_holds_the_lock(racers: int, stale: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "writer.lock"
        if stale:
            owner = {"pid": _dead_pid(), "host": hostname(), "command": "dead",
                     "token": "dead", "acquiredAt": "2026-01-01T00:00:00Z"}
            path.write_text(json.dumps(owner))
        barrier = threading.Barrier(racers)
        attempted = threading.Barrier(racers)
        winners: list[WriterLock] = []
        refusals: list[str] = []
        guard = threading.Lock()

        def race(n: int) -> None:
            lock = WriterLock(path, f"racer-{n}")
            barrier.wait()
            try:
                lock.acquire()
                with guard:
                    winners.append(lock)
            except EpistemeError as exc:
                with guard:
                    refusals.append(exc.code)
            attempted.wait()  # the winner holds until everyone has tried

        threads = [threading.Thread(target=race, args=(n,)) for n in range(racers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(winners) == 1
        assert refusals == ["RESOURCE_BUSY"] * (racers - 1)
        winners[0].release()
        assert not path.exists()
