"""LogIsAppendOnly: a capture run only appends whole lines to the log; no earlier byte ever changes.

Over any sequence of runs (new, changed and unchanged content), the log before a run is a prefix of
the log after it, and the run appends exactly one line per ``captured`` observation.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from episteme_core.stages.snapshots import SnapshotWriter, make_identity
from episteme_core.store.home import Home
from episteme_core.store.log import Log

runs = st.lists(
    st.dictionaries(st.sampled_from(["https://example.org/a", "https://example.org/b", "book:c/d"]),
                    st.sampled_from([b"one", b"two", b"three"]), min_size=1, max_size=3),
    min_size=1, max_size=6,
)


@settings(max_examples=40, deadline=None)
@given(runs)
def test_log_is_append_only(sequence: list[dict[str, bytes]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Home(Path(tmp) / "home")
        previous = b""
        for number, content in enumerate(sequence):
            with SnapshotWriter(home, "law", clock=lambda n=number: f"2024-01-01T00:00:{n:02d}Z") as writer:
                statuses = [writer.observe(make_identity("http", s, d), d).status
                            for s, d in sorted(content.items())]
                writer.commit()
            current = home.log_path.read_bytes() if home.log_path.exists() else b""
            assert current.startswith(previous)
            added = current[len(previous):]
            assert added.count(b"\n") == statuses.count("captured")
            assert added == b"" or added.endswith(b"\n")
            previous = current
        assert len(list(Log(home.log_path).entries())) == previous.count(b"\n")
