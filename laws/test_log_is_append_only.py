"""LogIsAppendOnly: a capture only appends whole lines to the log; forget alone rewrites it, redacting exactly the lines of what it forgot and appending one tombstone; no other byte ever changes.

Over any sequence of runs (new, changed and unchanged content, and forgets of a source), the log
before a capture run is a prefix of the log after it, and the run appends exactly one line per
``captured`` observation. A forget keeps every line's place: each line naming the forgotten source
becomes a ``redacted`` line (same time, command and capture kind; no source, no snapshot), every
other line is byte for byte what it was, and exactly one tombstone line (status ``forgotten``,
naming the source by its sha256 and the lines it redacted) is appended.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from episteme_core.kernel.context import RunContext
from episteme_core.kernel.loader import load_plugins
from episteme_core.personal.forget import ForgetRequest, forget
from episteme_core.records.storage import Tombstone
from episteme_core.stages.snapshots import SnapshotWriter, allowing_forgotten, make_identity
from episteme_core.store.home import Home
from episteme_core.store.log import Log
from episteme_core.store.tombstones import key_sha256

SOURCES = ["https://example.org/a", "https://example.org/b", "book:c/d"]
PLUGINS = load_plugins()
captures = st.dictionaries(st.sampled_from(SOURCES), st.sampled_from([b"one", b"two", b"three"]),
                           min_size=1, max_size=3)
runs = st.lists(st.one_of(captures, st.sampled_from(SOURCES).map(lambda s: ("forget", s))),
                min_size=1, max_size=7)


@settings(max_examples=40, deadline=None)
@given(runs)
def test_log_is_append_only(sequence: list[object]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Home(Path(tmp) / "home")
        previous = b""
        for number, step in enumerate(sequence):
            if isinstance(step, tuple):
                _forget(home, step[1], previous)
            else:
                assert isinstance(step, dict)
                with allowing_forgotten(), SnapshotWriter(
                        home, "law", clock=lambda n=number: f"2024-01-01T00:00:{n:02d}Z") as writer:
                    statuses = [writer.observe(make_identity("http", s, d), d).status
                                for s, d in sorted(step.items())]
                    writer.commit()
                current = home.log_path.read_bytes() if home.log_path.exists() else b""
                assert current.startswith(previous)
                added = current[len(previous):]
                assert added.count(b"\n") == statuses.count("captured")
                assert added == b"" or added.endswith(b"\n")
            previous = home.log_path.read_bytes() if home.log_path.exists() else b""
        assert len(list(Log(home.log_path).entries())) == previous.count(b"\n")


def _forget(home: Home, source: str, before: bytes) -> None:
    """Forget ``source`` when the log names it, and check what the rewrite changed."""
    old = before.splitlines()
    named = [i for i, line in enumerate(old) if json.loads(line).get("recordId") == source]
    if not named:
        return
    ctx = RunContext(command="forget", home=home, plugins=PLUGINS)
    forget(ctx, ForgetRequest(sources=(source,), reason="law"))
    new = home.log_path.read_bytes().splitlines()
    assert len(new) == len(old) + 1
    for i, (was, now) in enumerate(zip(old, new, strict=False)):
        if i not in named:
            assert now == was
            continue
        before_line, after_line = json.loads(was), json.loads(now)
        assert after_line == {**before_line, "status": "redacted", "recordId": None, "snapshotId": None,
                              "code": None}
    tombstone = json.loads(new[-1])
    assert tombstone["status"] == "forgotten" and tombstone["reason"] == "law"
    [item] = tombstone["items"]
    assert item["sourceSha256"] == key_sha256(source) and item["lines"] == [i + 1 for i in named]
    assert isinstance(list(Log(home.log_path).entries())[-1], Tombstone)
