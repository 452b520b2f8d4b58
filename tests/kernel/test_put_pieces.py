"""A stage object written in pieces is the object ``put_bytes`` writes: same address, same bytes;
an object already stored is kept and nothing else is left in ``objects/``."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from episteme_core.store.commits import Stage
from episteme_core.store.home import Home


@settings(max_examples=60, deadline=None)
@given(pieces=st.lists(st.binary(max_size=50), max_size=6))
def test_pieces_are_stored_as_their_bytes_joined(tmp_path_factory, pieces: list[bytes]) -> None:  # type: ignore[no-untyped-def]
    root = Path(tmp_path_factory.mktemp("home"))
    stage = Stage(Home(root), "chunks")
    streamed = stage.put_pieces("k", iter([memoryview(p) for p in pieces]), suffix=".json")
    whole = stage.put_bytes("k", b"".join(pieces), suffix=".json")
    assert streamed == whole
    assert (stage.dir / streamed.path).read_bytes() == b"".join(pieces)
    again = stage.put_pieces("k", pieces, suffix=".json")
    assert again == whole
    left = sorted(
        p.relative_to(stage.dir).as_posix() for p in (stage.dir / "objects").rglob("*") if p.is_file()
    )
    assert left == [whole.path]
