"""pdf words: small type set without space characters keeps its words (a gap wider than a fifth of the
type size ends a word), in ruled cells, text-aligned cells and running text, and a query finds them."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pdfplumber

from episteme_core.extract.family import Family
from episteme_core.extract.pdf import PdfExtractor
from episteme_core.extract.pdf_recall import document_recall, reference_pages
from episteme_core.extract.pdf_words import GAP_RATIO, X_TOLERANCE, extract_words
from episteme_core.records.canonical import sha256_hex
from episteme_core.records.evidence import Document
from episteme_core.records.extraction import ExtractRequest
from episteme_core.records.storage import SnapshotRecord
from episteme_core.testing import invoke, validate

from .pdf_build import build_pdf, rules, spaced_ops

SPACE = 0.28  # ems: Arial's space, the gap the Senate report leaves between its 5-point words
ROWS = [["NAME", "POSITION", "AMOUNT ($)"],
        ["BAIN, J MATTHEW", "DISTRICT DIRECTOR", "37,499.96"],
        ["ENGLERT, PAYTON A", "STAFF ASSISTANT", "25,499.96"]]


def _extract(data: bytes) -> Document:
    record = SnapshotRecord(id="0" * 64, capture_kind="file", source="https://example.org/x.pdf",
                            final_url=None, content_type="application/pdf", charset=None,
                            byte_length=len(data), content_sha256=sha256_hex(data),
                            observed_at="2020-01-01T00:00:00Z")
    request = ExtractRequest(record=record, content=data, family=Family(), options={})
    document = PdfExtractor().extract(request)
    validate(document.to_json(), "document")
    return document


def _ruled_report() -> bytes:
    """A title and a ruled 3-by-3 grid whose cells are set in 5-point type, words 0.28 em apart."""
    columns, tops = [60.0, 160.0, 260.0, 360.0], [100.0, 112.0, 124.0, 136.0]
    grid = [(columns[0], y, columns[-1], y) for y in tops] + [(x, tops[0], x, tops[-1]) for x in columns]
    cells = [(columns[c] + 3, tops[r] + 8, "F1", 5, text, SPACE)
             for r, row in enumerate(ROWS) for c, text in enumerate(row)]
    heading = spaced_ops([(60, 80, "F2", 12, "Expenditure report", SPACE)])
    return build_pdf([b"\n".join([rules(grid), heading, spaced_ops(cells)])])


def test_a_glued_ruled_row_keeps_its_words() -> None:
    data = _ruled_report()
    reference = reference_pages(data)
    assert "STAFFASSISTANT" in reference[0] and "BAIN,JMATTHEW" in reference[0]  # what pdfplumber reads
    document = _extract(data)
    (table,) = [b for b in document.blocks() if b.kind == "table"]
    assert table.rows == ROWS and table.attributes["strategy"] == "lines"
    assert table.text == "\n".join("\t".join(row) for row in ROWS)
    assert [b.text for b in document.blocks() if b.kind != "table"] == ["Expenditure report"]
    (page,) = document_recall(document, reference)
    assert page.recall == 1.0 and page.missing == []
    words = {w for b in document.blocks() for w in b.text.split()}
    assert not {"STAFFASSISTANT", "DISTRICTDIRECTOR", "BAIN,JMATTHEW"} & words


def test_a_glued_text_aligned_table_keeps_its_words() -> None:
    rows = [["ITEM", "UNIT PRICE", "SUPPLIER NAME"], ["PAPER A4", "3.20", "OFFICE DEPOT"],
            ["TONER BLACK", "41.00", "NORTH SUPPLY CO"], ["DESK LAMP", "18.50", "LIGHT HOUSE"]]
    runs = [(60 + 120 * c, 100 + 10 * r, "F1", 5, text, SPACE)
            for r, row in enumerate(rows) for c, text in enumerate(row)]
    document = _extract(build_pdf([spaced_ops(runs)]))
    (table,) = [b for b in document.blocks() if b.kind == "table"]
    assert table.rows == rows and table.attributes["strategy"] == "text"
    (page,) = document_recall(document, reference_pages(build_pdf([spaced_ops(runs)])))
    assert page.recall == 1.0


def _words(runs: list[tuple[float, float, str, float, str, float]]) -> list[str]:
    with pdfplumber.open(io.BytesIO(build_pdf([spaced_ops(runs)]))) as pdf:
        return [w["text"] for w in extract_words(pdf.pages[0].chars)]


def test_a_word_ends_past_a_fifth_of_the_type_size() -> None:
    assert GAP_RATIO == 0.2 and X_TOLERANCE == 1.5
    # 5-point type: the gap that ends a word is 1.0 point; just under it the run stays one word
    assert _words([(60, 100, "F1", 5, "Staff assistant", 0.199)]) == ["Staffassistant"]
    assert _words([(60, 100, "F1", 5, "Staff assistant", 0.201)]) == ["Staff", "assistant"]
    # from 7.5 points the fixed 1.5 points rule as before: 1.4 points (0.14 em at 10) is no gap
    assert _words([(60, 100, "F1", 10, "Staff assistant", 0.14)]) == ["Staffassistant"]
    assert _words([(60, 100, "F1", 10, "Staff assistant", 0.151)]) == ["Staff", "assistant"]
    assert _words([(60, 100, "F1", 7.5, "Staff assistant", 0.199)]) == ["Staffassistant"]
    assert _words([(60, 100, "F1", 7.5, "Staff assistant", 0.201)]) == ["Staff", "assistant"]


def test_running_text_in_small_type_keeps_its_words() -> None:
    line = (60.0, 100.0, "F1", 5.0, "Prepared by the disbursing office", SPACE)
    document = _extract(build_pdf([spaced_ops([line])]))
    assert [b.text for b in document.blocks()] == ["Prepared by the disbursing office"]


def test_a_query_finds_a_word_of_a_glued_row(tmp_path: Path) -> None:
    (tmp_path / "report.pdf").write_bytes(_ruled_report())
    (tmp_path / "map.json").write_text(json.dumps([
        {"sourceUrl": "https://example.org/report.pdf", "localPath": "report.pdf",
         "contentType": "application/pdf"}]))
    home = tmp_path / "home"
    built = invoke("--home", str(home), "pipeline", "--map", str(tmp_path / "map.json"), "--json")
    assert built.exit_code == 0, built.stderr
    found = invoke("--home", str(home), "query", "--term", "assistant", "--json")
    assert found.exit_code == 0, found.stderr
    results = found.envelope["data"]["results"]
    assert len(results) == 1 and "STAFF ASSISTANT" in results[0]["snippet"]
