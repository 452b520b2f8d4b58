"""A record's bytes, encoded a paragraph at a time, are its canonical JSON exactly; a shard build's
rows, read a slice at a time, are the rows of the whole object."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from episteme_core.personal.model import Paragraph, Record
from episteme_core.records.canonical import canonical_bytes
from episteme_core.records.convert import unstructure

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=20) | st.just('"paragraphs":[]')
VALUES = st.recursive(st.none() | st.booleans() | st.integers(-10, 10) | TEXT,
                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
                      max_leaves=6)
PARAGRAPHS = st.builds(Paragraph, n=st.integers(1, 5), text=TEXT,
                       time=st.none() | st.just("2024-01-01T00:00:00Z"),
                       kind=st.sampled_from(["text", "thinking", "heading"]),
                       attributes=st.dictionaries(TEXT, VALUES, max_size=3))


@settings(max_examples=150, deadline=None)
@given(
    paragraphs=st.lists(PARAGRAPHS, max_size=5),
    title=st.none() | TEXT,
    metadata=st.dictionaries(TEXT, VALUES, max_size=3),
    piece_bytes=st.integers(1, 400),
)
def test_record_bytes_are_its_canonical_json(
    paragraphs: list[Paragraph], title: str | None, metadata: dict[str, object], piece_bytes: int
) -> None:
    """Whole, and in pieces of any size (what ``save_records`` hashes and writes to the blob file;
    a paragraph larger than a piece goes out on its own), the bytes are the canonical JSON."""
    record = Record(
        id="book:a/b", source="books", time=None, paragraphs=paragraphs, title=title, metadata=metadata
    )
    expected = canonical_bytes(unstructure(record))
    assert record.to_bytes() == expected
    assert b"".join(record.iter_bytes(piece_bytes)) == expected


def test_a_stored_record_is_written_in_pieces_and_an_unchanged_one_leaves_nothing(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """``save_records`` streams a record into its blob (the blob holds its canonical bytes, named
    by their sha256); storing it again writes nothing: no blob, no temp file in ``incoming``."""
    import hashlib

    from episteme_core.personal.stored import save_records
    from episteme_core.store.home import Home
    from episteme_core.store.init import init_home

    home = Home(tmp_path / "home")
    init_home(home)
    big = "x" * (3 << 20)  # larger than a piece: written on its own
    record = Record(
        id="book:a/b",
        source="books",
        time=None,
        paragraphs=[Paragraph(n=1, text="a"), Paragraph(n=2, text=big), Paragraph(n=3, text="c")],
    )
    data = record.to_bytes()
    first = save_records(home, "test", [record])
    assert first.captured == ["book:a/b"]
    blobs = sorted(p for p in (home.root / "blobs").rglob("*") if p.is_file())
    sha = hashlib.sha256(data).hexdigest()
    assert [p.name for p in blobs if sha in p.name] and any(p.read_bytes() == data for p in blobs)
    again = save_records(home, "test", [record])
    assert again.unchanged == ["book:a/b"]
    assert sorted(p for p in (home.root / "blobs").rglob("*") if p.is_file()) == blobs


def test_a_slice_of_a_chunks_object_is_those_rows_of_the_whole(tmp_path, books, cli) -> None:  # type: ignore[no-untyped-def]
    """``iter_object_rows(start, stop)`` (what a shard build reads, one row at a time) gives the
    rows ``object_rows`` gives for that slice, with the same bytes."""
    from episteme_core.stages.chunks import chunks_stage, iter_object_rows, object_rows
    from episteme_core.store.home import Home

    assert cli("ingest", "books", str(books), "--json").exit_code == 0
    home = Home(tmp_path / "home")
    stage = chunks_stage(home)
    index = stage.read_index()
    assert index is not None
    for entry in index.entries:
        whole = object_rows(stage, entry)
        assert len(whole) > 4
        for start, stop in ((0, None), (1, 3), (len(whole) - 2, len(whole) + 5), (3, 3)):
            assert list(iter_object_rows(stage, entry, start, stop)) == whole[start:stop]
