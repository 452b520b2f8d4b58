"""pdf: headings by font weight, text-aligned tables, and the time and object bounds inside a page."""

from __future__ import annotations

import time
from pathlib import Path

from episteme_core.extract.family import Family
from episteme_core.extract.pdf import PdfExtractor
from episteme_core.records.canonical import sha256_hex
from episteme_core.records.evidence import Document
from episteme_core.records.extraction import ExtractRequest
from episteme_core.records.storage import SnapshotRecord
from episteme_core.testing import validate

from .pdf_build import build_pdf, text_ops


def _extract(data: bytes, **options: object) -> Document:
    record = SnapshotRecord(id="0" * 64, capture_kind="file", source="https://example.org/x.pdf",
                            final_url=None, content_type="application/pdf", charset=None,
                            byte_length=len(data), content_sha256=sha256_hex(data),
                            observed_at="2020-01-01T00:00:00Z")
    document = PdfExtractor().extract(ExtractRequest(record=record, content=data, family=Family(),
                                                     options=dict(options)))
    validate(document.to_json(), "document")
    return document


PROSE = ("Running text of the body, long enough to be read as prose by any reader at all here",
         "and its second line, which carries on with the same sentence and its many words too",
         "and a third line that closes the paragraph with a full stop at its very end now.")


def test_bold_lines_of_body_size_open_numbered_sections(fixtures: Path) -> None:
    document = _extract((fixtures / "pdfminer__naacl06-shinyama.pdf").read_bytes())
    sections = {s.heading: s for s in document.sections}
    assert sections["Abstract"].number is None and sections["Abstract"].level == 2
    assert sections["Background"].number == "1" and sections["Background"].level == 2
    assert sections["Basic Idea"].number == "2"
    crawl = sections["Web Crawling and Basic Clustering"]
    assert crawl.number == "3.1" and crawl.level == 3
    assert crawl.path[-2:] == ["Implementation", "Web Crawling and Basic Clustering"]
    assert sections["Increasing Basic Patterns"].path[-2] == "Basic Idea"  # unnumbered, bold, nested
    assert sections["References"].level == 2
    headings = [b for b in document.blocks() if b.kind == "heading"]
    assert "1 Background" in [b.text for b in headings]  # the block keeps the printed number
    assert all(b.page and b.bbox for b in headings)
    # bold author names (above an address, far above the text) and italic words are not headings
    assert not {"Yusuke Shinyama", "Satoshi Sekine", "Katrina"} & set(sections)
    # the left column's text belongs to "1 Background", opened on page 1
    every_day = next(b for b in document.blocks() if b.text.startswith("Every day, a large number"))
    assert every_day.section_heading == "Background"


def test_bold_words_inside_body_text_are_not_headings() -> None:
    runs = [(72, 80, "F2", 12, "1 Introduction")]
    y = 100.0
    for line in PROSE:
        runs.append((72, y, "F1", 10, line))
        y += 12
    # a bold word mid-line, and a wholly bold short line inside the paragraph
    runs += [(72, y, "F1", 10, "This line has a"), (142, y, "F2", 10, "bold"),
             (166, y, "F1", 10, "word in it.")]
    y += 12
    runs.append((72, y, "F2", 10, "Bold emphasis line"))
    y += 12
    runs.append((72, y, "F1", 10, PROSE[0]))
    y += 30
    runs += [(72, y, "F2", 10, "Related Work")]
    y += 14
    for line in PROSE:
        runs.append((72, y, "F1", 10, line))
        y += 12
    y += 30
    runs += [(72, y, "F2", 10, "Jane Doe"), (72, y + 12, "F1", 10, "1 Some Street"),
             (72, y + 24, "F1", 10, "Town")]
    document = _extract(build_pdf([text_ops(runs)]))
    assert [(s.heading, s.number, s.level) for s in document.sections] == [
        ("Introduction", "1", 2), ("Related Work", None, 3)]
    first = document.sections[0].blocks
    assert [b.kind for b in first] == ["heading", "paragraph"]
    assert "bold word in it." in first[1].text and "Bold emphasis line" in first[1].text
    assert [b.kind for b in document.blocks() if "Jane Doe" in b.text] == ["paragraph"]


def test_text_aligned_table_in_a_ruled_frame(fixtures: Path) -> None:
    document = _extract((fixtures / "pdfplumber__senate-expenditures.pdf").read_bytes())
    (table,) = [b for b in document.blocks() if b.kind == "table"]
    rows = table.rows
    assert rows is not None and len(rows) == 34  # 2 header rows, 10 payroll rows, 22 travel rows
    assert rows[0] == ["DOCUMENT NO.", "DATE POSTED", "PAYEE NAME", "OBLIGATION/SERVICE DATES", "",
                       "DESCRIPTION", "AMOUNT ($)"]
    assert rows[1] == ["", "", "", "START", "END", "", ""]
    # 5-point type set without spaces keeps its words (gaps against the type size, pdf_words)
    assert rows[2] == ["", "", "BAIN, J MATTHEW", "", "", "DISTRICT DIRECTOR", "37,499.96"]
    assert rows[12] == ["DHAW20190001", "05/03/2019", "CITIBANK - TRAVEL CBA CARD", "03/04/2019",
                        "03/06/2019",
                        "STAFF TRANSPORTATION AIRFARE FOR E JOHNSON KANSAS CITY TO WASHINGTON DC AND RETURN",
                        "920.68"]
    # a description wrapped onto two further lines stays in its row and cell, words whole, even where
    # its line runs past the ruled edge of the amount column ("SAINT LOUIS TO" from x 633 to 674)
    row = next(r for r in rows if r[0] == "DHAW20190004")
    assert row[5].endswith("3/24 SAINT LOUIS TO WASHINGTON DC") and row[6] == "903.90"
    row = next(r for r in rows if r[0] == "DHAW20190041")
    assert row[5].endswith("AMARILLO TX AND RETURN") and row[6] == "697.00"
    assert rows[-1][0] == "DHAW20190070" and rows[-1][6] == "411.49"
    assert all(len(r) == 7 for r in rows)
    assert table.attributes["strategy"] == "lines+text"
    # the table's words are not repeated as paragraphs
    assert not any("DHAW2019" in b.text for b in document.blocks() if b.kind != "table")


def test_unruled_table_found_and_prose_never_a_table(fixtures: Path) -> None:
    runs = [(72, 60, "F1", 10, PROSE[0]), (72, 72, "F1", 10, PROSE[1])]
    table = [("Name", "Size", "Colour"), ("apple", "3", "red"), ("banana", "12", "yellow"),
             ("cherry", "1", "dark red"), ("plum", "4", "purple")]
    y = 100.0
    for cells in table:
        runs += [(72, y, "F1", 10, cells[0]), (200, y, "F1", 10, cells[1]), (300, y, "F1", 10, cells[2])]
        y += 14
    runs.append((72, y + 20, "F1", 10, PROSE[2]))
    document = _extract(build_pdf([text_ops(runs)]))
    (found,) = [b for b in document.blocks() if b.kind == "table"]
    assert found.rows == [list(row) for row in table]
    assert found.attributes["strategy"] == "text"
    paragraphs = [b.text for b in document.blocks() if b.kind == "paragraph"]
    assert paragraphs[0].startswith("Running text") and paragraphs[-1] == PROSE[2]
    # two-column prose (the paper) gives no text-strategy table
    paper = _extract((fixtures / "pdfminer__naacl06-shinyama.pdf").read_bytes())
    assert not [b for b in paper.blocks() if b.kind == "table" and b.attributes["strategy"] == "text"]
    assert not any("We are trying to extend" in b.text for b in paper.blocks() if b.kind == "table")


def _crowded_page(runs: int) -> bytes:
    """One page of ``runs`` tiny text objects of two characters each."""
    return build_pdf([text_ops([(20 + (i % 110) * 5, 20 + (i // 110) % 160 * 5, "F1", 1, "ab")
                                for i in range(runs)])])


def test_time_bound_holds_inside_one_page() -> None:
    data = _crowded_page(20_000)  # pdfplumber alone needs several seconds for this page
    limit = 1.0
    started = time.monotonic()
    document = _extract(data, timeLimitS=limit)
    elapsed = time.monotonic() - started
    # The diagnostic proves the bound cut inside the page; the time is bounded against a hang only,
    # 30 times the limit (the cut takes about 1.2 s on 2 quiet cores; pdfplumber alone, several).
    assert elapsed < 30 * limit, elapsed
    assert document.status == "partial"
    (diagnostic,) = [d for d in document.diagnostics if d.code == "TIME_LIMIT"]
    assert diagnostic.page == 1 and "inside page 1" in diagnostic.message


def test_object_bound_per_page_at_and_past() -> None:
    data = _crowded_page(50)  # 100 characters on the page
    at = _extract(data, maxObjectsPerPage=100)
    assert at.status == "ok" and not at.diagnostics
    past = _extract(data, maxObjectsPerPage=99)
    assert past.status == "partial"
    assert [d.code for d in past.diagnostics] == ["PAGE_TOO_COMPLEX"]
    assert past.diagnostics[0].page == 1
