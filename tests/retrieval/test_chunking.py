"""``episteme chunk``: bounded windows, overlap, sections and normativity respected, citations kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from episteme_core.chunking.window import WindowChunker
from episteme_core.records.evidence import chunk_id
from episteme_core.stages.chunks import read_chunks
from episteme_core.store.home import Home
from episteme_core.testing import invoke, validate

from .conftest import commit, make_document, ok

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu. "


def chunk_document(document, max_chars: int, overlap: int):  # type: ignore[no-untyped-def]
    return WindowChunker().chunk(document, max_chars=max_chars, overlap_chars=overlap)


def _reassemble(chunk, document) -> None:  # type: ignore[no-untyped-def]
    """Every block range in a chunk reproduces the block's text and the chunk's text."""
    blocks = {b.id: b for b in document.blocks()}
    for cb in chunk.blocks:
        part = blocks[cb.block_id].text[cb.start : cb.end]
        assert chunk.text[cb.offset : cb.offset + len(part)] == part


def test_windows_are_bounded_overlap_and_cite_their_blocks() -> None:
    long = WORDS * 200  # ~13,600 characters in one block
    document = make_document("https://e.org/a", [("One", [long, "short tail"]), ("Two", ["other"])])
    chunks = WindowChunker().chunk(document, max_chars=1000, overlap_chars=200)
    for chunk in chunks:
        assert 0 < len(chunk.text) <= 1000
        _reassemble(chunk, document)
        assert chunk.id == chunk_id(chunk.to_json())
        validate(chunk.to_json(), "chunk")
    one = [c for c in chunks if c.section_id == "s1"]
    assert [c.part.index for c in one] == list(range(1, len(one) + 1))
    assert {c.part.count for c in one} == {len(one)}
    # consecutive windows of the long block overlap, and cut at a sentence or a word
    first, second = one[0].blocks[0], one[1].blocks[0]
    assert second.start < first.end
    assert one[0].text.endswith(".") or one[0].text[-1].isalpha()
    # never across sections
    assert all(len({b.block_id[:1] for b in c.blocks}) == 1 for c in chunks)
    assert [c.text for c in chunks if c.section_id == "s2"] == ["other"]


def test_zero_overlap_covers_each_character_once() -> None:
    document = make_document("https://e.org/a", [("One", [WORDS * 50])])
    chunks = chunk_document(document, 300, 0)
    covered = sorted((c.blocks[0].start, c.blocks[0].end) for c in chunks)
    for (_, end), (start, _) in zip(covered, covered[1:], strict=False):
        assert start >= end


def test_normativity_changes_start_a_new_chunk() -> None:
    document = make_document("https://e.org/a", [("One", ["must do", "for example", "must also"])],
                             normativity=["normative", "example", "normative"])
    chunks = chunk_document(document, 6000, 400)
    assert [c.normativity for c in chunks] == ["normative", "example", "normative"]


def test_small_blocks_pack_into_one_chunk() -> None:
    document = make_document("https://e.org/a", [("One", ["first", "second", "third"])])
    (chunk,) = chunk_document(document, 6000, 400)
    assert chunk.text == "first\n\nsecond\n\nthird"
    assert [(b.block_id, b.offset) for b in chunk.blocks] == [("b1", 0), ("b2", 7), ("b3", 15)]


def test_records_chunk_by_paragraph_keeping_time_and_number(tmp_path: Path) -> None:
    record = make_document("book:c/b", [("b", ["para one", "para two " * 100])], kind="books",
                           document_type="record", times=["2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z"])
    root = tmp_path / "h"
    commit(root, [record])
    ok("--home", str(root), "chunk", "--max-chars", "300", "--overlap-chars", "50")
    chunks = read_chunks(Home(root))
    assert chunks[0].paragraph == 1 and chunks[0].record_id == "book:c/b"
    assert chunks[0].time == "2026-01-01T00:00:00Z" and chunks[0].chunker == "paragraph/3"
    rest = chunks[1:]
    assert len(rest) > 1 and {c.paragraph for c in rest} == {2}
    assert [c.part.index for c in rest] == list(range(1, len(rest) + 1))


def test_rerun_reuses_unchanged_documents(tmp_path: Path) -> None:
    root = tmp_path / "h"
    commit(root, [make_document("https://e.org/a", [("A", ["one"])]),
                  make_document("https://e.org/b", [("B", ["two"])])])
    first = ok("--home", str(root), "chunk")
    index_bytes = (root / "chunks" / "index.json").read_bytes()
    again = ok("--home", str(root), "chunk")
    assert first["chunked"] == 2 and again["reused"] == 2 and again["chunked"] == 0
    assert (root / "chunks" / "index.json").read_bytes() == index_bytes
    commit(root, [make_document("https://e.org/b", [("B", ["changed"])])], replace=False)
    third = ok("--home", str(root), "chunk")
    assert (third["chunked"], third["reused"]) == (1, 1)
    changed = ok("--home", str(root), "chunk", "--max-chars", "500")
    assert changed["chunked"] == 2


@pytest.mark.parametrize(
    "args",
    [
        ["--max-chars", "255"],
        ["--max-chars", "100001"],
        ["--overlap-chars", "10001"],
        ["--overlap-chars", "-1"],
        ["--max-chars", "300", "--overlap-chars", "300"],
    ],
)
def test_out_of_range_options_are_invalid_usage(tmp_path: Path, args: list[str]) -> None:
    root = tmp_path / "h"
    commit(root, [make_document("https://e.org/a", [("A", ["one"])])])
    result = invoke("--home", str(root), "chunk", *args, "--json")
    assert result.exit_code == 2
    assert result.envelope["error"]["code"] == "INVALID_USAGE"
    assert not (root / "chunks").exists()


def test_bounds_are_accepted(tmp_path: Path) -> None:
    root = tmp_path / "h"
    commit(root, [make_document("https://e.org/a", [("A", [WORDS * 20])])])
    ok("--home", str(root), "chunk", "--max-chars", "256", "--overlap-chars", "255")
    assert all(len(c.text) <= 256 for c in read_chunks(Home(root)))
    ok("--home", str(root), "chunk", "--max-chars", "100000", "--overlap-chars", "0")


def test_chunk_objects_validate(corpus: Path) -> None:
    chunks = read_chunks(Home(corpus))
    assert chunks
    for chunk in chunks:
        validate(chunk.to_json(), "chunk")
        assert chunk.content_trust == "untrusted-source"
    meta = json.loads((corpus / "chunks" / "index.json").read_text())["meta"]
    assert meta["options"] == {"maxChars": 6000, "overlapChars": 400}
