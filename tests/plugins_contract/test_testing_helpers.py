"""``episteme_core.testing``'s helpers for plugin tests do what they say (they are public API too)."""

from __future__ import annotations

from pathlib import Path

from episteme_core.testing import (
    SampleHome,
    read_chunks,
    read_documents,
    store_snapshot,
    text_in_order,
    validate,
)


def test_the_sample_home_fixture_holds_a_snapshot_a_document_and_its_chunks(sample_home: SampleHome) -> None:
    assert sample_home.root.is_dir()
    assert sample_home.document.snapshot_id == sample_home.snapshot_id
    assert sample_home.chunks and {c.document_id for c in sample_home.chunks} == {sample_home.document.id}
    assert read_documents(sample_home.root) == [sample_home.document]
    assert read_chunks(sample_home.home) == sample_home.chunks
    for chunk in sample_home.chunks:
        validate(chunk.to_json(), "chunk")


def test_store_snapshot_is_content_addressed(tmp_path: Path) -> None:
    first = store_snapshot(tmp_path / "h", "https://e.org/a", b"same bytes")
    again = store_snapshot(tmp_path / "h", "https://e.org/a", b"same bytes")
    other = store_snapshot(tmp_path / "h", "https://e.org/a", b"other bytes")
    assert first == again != other and len(first) == 64


def test_text_in_order_sees_through_markup() -> None:
    source = "<p>An <em>emphasised</em> word.</p>"
    assert text_in_order("An emphasised word.", source, 0, len(source))
    assert not text_in_order("A missing word.", source, 0, len(source))
