"""CommitIsAtomic: a writer killed with SIGKILL at any step of a commit leaves the previous commit readable and verified.

A real process commits a stage and is killed at the Nth crash point (EPISTEME_CRASH_AT=N); afterwards
the stage reads back, every object verifies, and it holds either the old commit or the new one.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from episteme_core.store.commits import Stage
from episteme_core.store.home import Home

_WRITER = """
import contextlib, json, sys
from pathlib import Path
from episteme_core.store.home import Home
from episteme_core.store.commits import Stage
from episteme_core.store.atomic import deferred_sync
stage = Stage(Home(Path(sys.argv[1])), "documents")
objects = json.loads(sys.argv[2])
# Writing commands batch durability (one syncfs before the index); plain library use fsyncs each file.
with deferred_sync() if sys.argv[3] == "deferred" else contextlib.nullcontext():
    entries = [stage.put_json(key, value) for key, value in sorted(objects.items())]
    index = stage.commit(entries)
    stage.prune(index)
"""

contents = st.dictionaries(st.text(min_size=1, max_size=6), st.integers(), min_size=1, max_size=4)


def _commit(root: Path, objects: dict[str, int], crash_at: int | None, mode: str = "fsync") -> int:
    env = {**os.environ}
    env.pop("EPISTEME_CRASH_AT", None)
    if crash_at is not None:
        env["EPISTEME_CRASH_AT"] = str(crash_at)
    proc = subprocess.run([sys.executable, "-c", _WRITER, str(root), json.dumps(objects), mode], env=env)
    return proc.returncode


def _read_all(stage: Stage) -> dict[str, int]:
    index = stage.read_index()
    assert index is not None
    return {entry.key: stage.read_json(entry) for entry in index.entries}


@settings(max_examples=30, deadline=None)
@given(old=contents, new=contents, step=st.integers(min_value=1, max_value=20),
       mode=st.sampled_from(["fsync", "deferred"]))
def test_a_killed_commit_leaves_the_old_or_the_new_commit_whole(
    old: dict[str, int], new: dict[str, int], step: int, mode: str
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        assert _commit(root, old, None) == 0
        stage = Stage(Home(root), "documents")
        before = stage.index_path.read_bytes()
        status = _commit(root, new, step, mode)
        assert status in (0, -signal.SIGKILL)
        found = _read_all(stage)
        if status == -signal.SIGKILL and stage.index_path.read_bytes() == before:
            assert found == old
        else:
            assert found == new
