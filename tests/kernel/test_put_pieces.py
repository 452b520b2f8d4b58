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


def test_an_entry_pointing_outside_its_stage_is_refused(tmp_path: Path) -> None:
    """An index naming ``/abs`` or a ``..`` segment is INVALID_INPUT, never read; a name that only
    holds dots (``objects/ab/..x``) is a name."""
    import attrs
    import pytest

    from episteme_core.errors import EpistemeError

    stage = Stage(Home(tmp_path), "chunks")
    entry = stage.put_bytes("k", b"{}\n", suffix=".json")
    assert stage.read_bytes(entry) == b"{}\n"
    for bad in ("/etc/passwd", "../../x.json", "objects/../../x.json", "objects/ab/.."):
        with pytest.raises(EpistemeError) as refused:
            stage.object_path(attrs.evolve(entry, path=bad))
        assert refused.value.code == "INVALID_INPUT" and "outside the stage" in refused.value.message
    dotted = "objects/ab/..x.json"
    assert stage.object_path(attrs.evolve(entry, path=dotted)) == stage.dir / dotted
