"""ObservingUnchangedContentIsIdempotent: observing the same content again changes no byte of the home.

Whatever the sources and their order, a second observation of unchanged content reports
``unchanged`` for every source and leaves every file of the home (stage, blobs, log) as it was.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from episteme_core.stages.snapshots import SnapshotWriter, make_identity
from episteme_core.store.home import Home

observations = st.dictionaries(
    st.sampled_from([f"https://example.org/{n}" for n in range(6)] + ["book:c/x", "chat:claude/p/s"]),
    st.binary(max_size=64),
    min_size=1,
    max_size=6,
)


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _run(root: Path, items: list[tuple[str, bytes]], clock: str) -> list[str]:
    with SnapshotWriter(Home(root), "law", clock=lambda: clock) as writer:
        statuses = [writer.observe(make_identity("http", s, d), d).status for s, d in items]
        writer.commit()
    return statuses


@settings(max_examples=40, deadline=None)
@given(observations, st.randoms(use_true_random=False))
def test_observing_unchanged_content_is_idempotent(content: dict[str, bytes], rnd: object) -> None:
    items = sorted(content.items())
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "home"
        assert set(_run(root, items, "2020-01-01T00:00:00Z")) == {"captured"}
        before = _tree(root)
        shuffled = list(items)
        rnd.shuffle(shuffled)  # type: ignore[attr-defined]
        assert set(_run(root, shuffled, "2030-01-01T00:00:00Z")) == {"unchanged"}
        assert _tree(root) == before
