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
@given(paragraphs=st.lists(PARAGRAPHS, max_size=5), title=st.none() | TEXT,
       metadata=st.dictionaries(TEXT, VALUES, max_size=3))
def test_record_bytes_are_its_canonical_json(paragraphs: list[Paragraph], title: str | None,
                                             metadata: dict[str, object]) -> None:
    record = Record(id="book:a/b", source="books", time=None, paragraphs=paragraphs, title=title,
                    metadata=metadata)
    assert record.to_bytes() == canonical_bytes(unstructure(record))


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
