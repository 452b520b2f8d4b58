"""SnapshotIdIgnoresClock: a snapshot's id depends on its representation only, never on when it was observed.

Two homes observing the same bytes at different times get the same ids; observing again later keeps
the id and the first observation time.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from episteme_core.stages.snapshots import SnapshotWriter, make_identity, read_catalog
from episteme_core.store.home import Home

times = st.datetimes().map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%SZ"))
sources = st.sampled_from(["https://example.org/a", "https://example.org/b", "book:shelf/c"])
kinds = st.sampled_from(["http", "file", "warc", "books"])
media = st.sampled_from([None, "text/html", "text/plain", "application/pdf"])
charsets = st.sampled_from([None, "utf-8", "iso-8859-1"])


def _observe(root: Path, clock: str, kind: str, source: str, data: bytes, mt: str | None,
             cs: str | None) -> tuple[str, str]:
    with SnapshotWriter(Home(root), "law", clock=lambda: clock) as writer:
        identity = make_identity(kind, source, data, final_url=None, content_type=mt, charset=cs)
        record = writer.observe(identity, data).record
        writer.commit()
    return record.id, read_catalog(Home(root)).latest(source).observed_at


@settings(max_examples=40, deadline=None)
@given(st.binary(max_size=256), kinds, sources, media, charsets, times, times)
def test_snapshot_id_ignores_clock(
    data: bytes, kind: str, source: str, mt: str | None, cs: str | None, first: str, second: str
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        one, two = Path(tmp) / "one", Path(tmp) / "two"
        id_one, observed = _observe(one, first, kind, source, data, mt, cs)
        id_two, _ = _observe(two, second, kind, source, data, mt, cs)
        assert id_one == id_two
        again, kept = _observe(one, second, kind, source, data, mt, cs)
        assert again == id_one and kept == observed == first
