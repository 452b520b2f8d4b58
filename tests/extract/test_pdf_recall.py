"""Complete PDF text: every word pdfplumber's plain text gives for a page is in that page's blocks, and
a PDF citation carries the page and the block's box."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from episteme_core.extract.family import Family
from episteme_core.extract.pdf import PdfExtractor
from episteme_core.extract.pdf_recall import document_recall, page_recall, reference_pages
from episteme_core.records.canonical import sha256_hex
from episteme_core.records.evidence import Document
from episteme_core.records.extraction import ExtractRequest
from episteme_core.records.storage import SnapshotRecord
from episteme_core.testing import invoke, validate

from .make_form_pdf import form

FIXTURES = Path(__file__).parent.parent / "fixtures" / "extract"
READABLE = ["ruled-form.pdf", "pdfminer__AcroForm_TEST.pdf", "pdfminer__naacl06-shinyama.pdf",
            "pdfminer__zen_of_python_corrupted.pdf", "pdfplumber__senate-expenditures.pdf"]
MIN_RECALL = 0.99
INSTRUCTIONS = "Return this form by 30 June\nto the licensing office, room 4,\nwith a copy of your permit."


def _extract(data: bytes) -> Document:
    record = SnapshotRecord(id="0" * 64, capture_kind="file", source="https://example.org/x.pdf",
                            final_url=None, content_type="application/pdf", charset=None,
                            byte_length=len(data), content_sha256=sha256_hex(data),
                            observed_at="2020-01-01T00:00:00Z")
    return PdfExtractor().extract(ExtractRequest(record=record, content=data, family=Family(), options={}))


def test_the_fixture_form_is_what_its_script_makes() -> None:
    assert (FIXTURES / "ruled-form.pdf").read_bytes() == form()


@pytest.mark.parametrize("name", READABLE)
def test_every_page_holds_pdfplumbers_words(name: str) -> None:
    data = (FIXTURES / name).read_bytes()
    pages = document_recall(_extract(data), reference_pages(data))
    assert pages, name
    for page in pages:
        assert page.recall >= MIN_RECALL, (name, page)


def test_lines_in_a_grid_corner_without_cells_are_running_text() -> None:
    document = _extract((FIXTURES / "ruled-form.pdf").read_bytes())
    blocks = {b.kind: [] for b in document.blocks()}  # type: ignore[var-annotated]
    for block in document.blocks():
        blocks[block.kind].append(block)
    assert [b.text for b in blocks["paragraph"] if b.text.startswith("Return")] == [INSTRUCTIONS]
    assert blocks["table"][0].rows == [["Applicant name", "Jane Example"], ["Reference number", ""]]
    (page,) = document_recall(document, reference_pages((FIXTURES / "ruled-form.pdf").read_bytes()))
    assert page.recall == 1.0 and page.missing == []


def test_recall_names_the_words_a_page_lost() -> None:
    reference = "Permit renewal form\nReturn this form by 30 June\nSign below"
    lost = page_recall(reference, ["Permit renewal form", "Sign below"], page=1)
    assert lost.words == 11 and lost.missing == ["Return", "this", "form", "by", "30", "June"]
    assert lost.recall == pytest.approx(5 / 11)
    glued = page_recall("TRAINFAREFORSENHAWLEY a", ["TRAIN FARE FOR SEN HAWLEY", "a"])
    assert glued.recall == 1.0  # pdfplumber's wider tolerance glues words the extractor keeps apart
    assert page_recall("", []).recall == 1.0


def test_a_pdf_citation_carries_page_and_box(tmp_path: Path) -> None:
    (tmp_path / "form.pdf").write_bytes((FIXTURES / "ruled-form.pdf").read_bytes())
    (tmp_path / "map.json").write_text(json.dumps([
        {"sourceUrl": "https://example.org/form.pdf", "localPath": "form.pdf",
         "contentType": "application/pdf"}]))
    home = tmp_path / "home"
    built = invoke("--home", str(home), "pipeline", "--map", str(tmp_path / "map.json"), "--json")
    assert built.exit_code == 0, built.stderr
    found = invoke("--home", str(home), "query", "--term", "licensing office", "--max-chars", "80", "--json")
    assert found.exit_code == 0, found.stderr
    data = found.envelope["data"]
    validate(data, "query-result")
    cite = data["results"][0]["citation"]
    assert cite["page"] == 1 and cite["fragment"] == "page=1"
    box = cite["bbox"]
    assert set(box) == {"x0", "top", "x1", "bottom"} and box["x0"] < box["x1"] and box["top"] < box["bottom"]
    assert 300 <= box["x0"] and box["bottom"] <= 200  # the instructions' corner of the form
    assert "licensing office" in cite["selector"][0]["exact"]
