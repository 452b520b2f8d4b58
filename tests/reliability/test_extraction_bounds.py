"""Extraction is bounded whatever the input: blocks, characters, sections and depth per document,
elements per HTML or XML tree, decoded bytes per PDF stream. Each bound is tested at and just past
it; past it the document is partial with a diagnostic naming the bound."""

from __future__ import annotations

import time
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from episteme_core.extract import builder as bounds
from episteme_core.extract.builder import DocumentBuilder
from episteme_core.extract.html import _WS, HtmlExtractor, collapse
from episteme_core.extract.pdf import PdfExtractor
from episteme_core.extract.pdf_guard import StreamTooLarge, bounded_streams
from episteme_core.extract.text import TextExtractor
from episteme_core.extract.xml import XmlExtractor

from . import hostile
from .extracting import codes, extract, request


def _builder(**limits: int) -> DocumentBuilder:
    return DocumentBuilder(request(b"", "text/plain"), extractor="test", extractor_version="1", **limits)


def test_blocks_at_and_past_the_bound() -> None:
    at = _builder(max_blocks=3)
    for n in range(3):
        assert at.add_block("paragraph", f"p{n}") is not None
    assert at.build().status == "ok" and not at.full
    past = _builder(max_blocks=3)
    for n in range(4):
        past.add_block("paragraph", f"p{n}")
    document = past.build()
    assert document.status == "partial" and codes(document) == ["BLOCK_LIMIT"]
    assert [b.text for b in document.blocks()] == ["p0", "p1", "p2"] and past.full


def test_characters_per_block_at_and_past_the_bound() -> None:
    at = _builder(max_block_chars=10)
    at.add_block("paragraph", "a" * 10, span=(0, 10))
    document = at.build()
    assert document.status == "ok" and document.blocks()[0].span is not None
    past = _builder(max_block_chars=10)
    past.add_block("paragraph", "a" * 11, span=(0, 11))
    past.add_block("paragraph", "next")
    document = past.build()
    first, second = document.blocks()
    assert document.status == "partial" and codes(document) == ["BLOCK_TRUNCATED"]
    assert first.text == "a" * 10 and first.span is None and first.attributes["truncatedFrom"] == 11
    assert second.text == "next"  # a cut block does not stop the document


def test_characters_per_document_count_each_blocks_path() -> None:
    # each block costs its text plus what it repeats of its section: the path and the heading
    # ("Head" twice, 8); so "Head" costs 4 + 8 and "a" 1 + 8: 21 in all
    at = _builder(max_document_chars=21)
    at.open_section("Head", 1)
    at.add_block("heading", "Head")
    at.add_block("paragraph", "a")
    assert at.build().status == "ok" and at.chars == 21
    past = _builder(max_document_chars=20)
    past.open_section("Head", 1)
    past.add_block("heading", "Head")
    past.add_block("paragraph", "a")
    document = past.build()
    assert codes(document) == ["DOCUMENT_LIMIT"] and len(document.blocks()) == 1


def test_sections_at_and_past_the_bound() -> None:
    at = _builder(max_sections=2)
    for name in ("one", "two"):
        at.open_section(name, 1)
        at.add_block("heading", name)
    assert at.build().status == "ok"
    past = _builder(max_sections=2)
    for name in ("one", "two", "three"):
        past.open_section(name, 1)
        past.add_block("heading", name)
    document = past.build()
    assert codes(document) == ["SECTION_LIMIT"] and [s.heading for s in document.sections] == ["one", "two"]
    assert [b.text for b in document.sections[1].blocks] == ["two", "three"]  # nothing is lost


def test_section_depth_at_and_past_the_bound() -> None:
    at = _builder(max_section_depth=3)
    for level in (1, 2, 3):
        at.open_section(f"h{level}", level)
        at.add_block("heading", f"h{level}")
    document = at.build()
    assert document.status == "ok" and document.sections[-1].path == ["h1", "h2", "h3"]
    past = _builder(max_section_depth=3)
    for level in (1, 2, 3, 4):
        past.open_section(f"h{level}", level)
        past.add_block("heading", f"h{level}")
    document = past.build()
    assert codes(document) == ["SECTION_DEPTH_LIMIT"] and document.sections[-1].path == ["h1", "h2", "h4"]


def test_a_long_heading_is_cut_in_the_paths_it_labels_but_not_in_its_block() -> None:
    builder = _builder()
    heading = "h" * (bounds.MAX_HEADING_CHARS + 5)
    builder.open_section(heading, 1)
    builder.add_block("heading", heading)
    document = builder.build()
    [section] = document.sections
    assert section.heading == "h" * bounds.MAX_HEADING_CHARS + "\u2026"
    assert document.blocks()[0].text == heading


def test_the_default_block_bound_on_a_real_extractor() -> None:
    at = extract(TextExtractor(), b"a\n\n" * bounds.MAX_BLOCKS, "text/plain", check=False)
    assert at.status == "ok" and len(at.blocks()) == bounds.MAX_BLOCKS
    past = extract(TextExtractor(), b"a\n\n" * (bounds.MAX_BLOCKS + 1), "text/plain", check=False)
    assert past.status == "partial" and codes(past) == ["BLOCK_LIMIT"]
    assert len(past.blocks()) == bounds.MAX_BLOCKS


@pytest.mark.parametrize("bound", [22, 21])
def test_html_elements_at_and_past_the_bound(bound: int) -> None:
    # the elements below the root: head, body and twenty paragraphs are 22
    page = b"<!doctype html><html><head></head><body>" + b"<p>a</p>" * 20 + b"</body></html>"
    document = extract(HtmlExtractor(), page, "text/html", maxElements=bound)
    if bound == 22:
        assert document.status == "ok" and len(document.blocks()) == 20
    else:
        assert document.status == "partial" and codes(document) == ["ELEMENT_LIMIT"]
        assert len(document.blocks()) == 19  # what was parsed before the bound is kept


@pytest.mark.parametrize("count", [10, 11])
def test_xml_elements_at_and_past_the_bound(count: int) -> None:
    data = b"<r>" + b"<a>x</a>" * (count - 1) + b"</r>"
    document = extract(XmlExtractor(), data, "application/xml", maxElements=10)
    if count == 10:
        assert document.status == "ok" and len(document.blocks()) == 9
    else:
        assert document.status == "partial" and codes(document) == ["ELEMENT_LIMIT"]
        assert len(document.blocks()) == 9


@pytest.mark.parametrize(("name", "filters", "codec"), [
    ("flate", "/FlateDecode", lambda data: zlib.compress(data, 9)),
    ("runlength", "/RunLengthDecode",
     lambda data: b"".join(b"\x81" + data[i:i + 1] for i in range(0, len(data), 128)) + b"\x80"),
    ("hex then flate", "[/ASCIIHexDecode /FlateDecode]", lambda data: zlib.compress(data).hex().encode()),
])
@pytest.mark.parametrize("limit", [4096, 4095])  # 4096 bytes decoded: at the bound, then just past it
def test_pdf_streams_at_and_past_the_bound(name: str, filters: str, codec, limit: int) -> None:
    from pdfminer.pdftypes import PDFStream
    from pdfminer.psparser import LIT

    content = b" " * 4096
    kinds = {"/FlateDecode": [LIT("FlateDecode")], "/RunLengthDecode": [LIT("RunLengthDecode")],
             "[/ASCIIHexDecode /FlateDecode]": [LIT("ASCIIHexDecode"), LIT("FlateDecode")]}[filters]
    stream = PDFStream({"Filter": kinds}, codec(content))
    with bounded_streams(time.monotonic() + 60, max_stream_bytes=limit):
        if len(content) <= limit:
            stream.decode()
            assert stream.data == content
        else:
            with pytest.raises(StreamTooLarge):
                stream.decode()


def test_a_pdf_flate_bomb_is_refused_before_it_inflates(tmp_path) -> None:
    data = hostile.pdf_flate_bomb(tmp_path, inflated_mib=100).read_bytes()
    started = time.monotonic()
    document = extract(PdfExtractor(), data, "application/pdf")
    assert time.monotonic() - started < 30  # against a hang: about 90 times the 0.33 s it takes
    assert document.status in ("partial", "failed") and "STREAM_TOO_LARGE" in codes(document)


def test_the_stream_guard_is_removed_after_extraction() -> None:
    from pdfminer import pdftypes

    before = pdftypes.zlib
    with bounded_streams(time.monotonic() + 1):
        assert pdftypes.zlib is not before
    assert pdftypes.zlib is before


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=" \t\n\r\f\xa0ab", max_size=80), slice_size=st.integers(1, 9))
def test_collapsing_a_long_text_in_slices_equals_collapsing_it_whole(text: str, slice_size: int) -> None:
    from episteme_core.extract import html

    saved = html._SLICE
    html._SLICE = slice_size
    try:
        assert collapse(text) == _WS.sub(" ", text).strip()
    finally:
        html._SLICE = saved
