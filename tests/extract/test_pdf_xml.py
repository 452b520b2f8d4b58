"""pdf and xml extractors on real and hostile inputs: a status and a diagnostic, never a crash."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from episteme_core.stages.documents import read_documents
from episteme_core.store.home import Home
from episteme_core.testing import invoke, validate

from .conftest import add_snapshots


def _one(home: Path, source: str, data: bytes, content_type: str, **options: object):
    add_snapshots(home, [(source, data, content_type, dict(options))])
    result = invoke("extract", "--json", "--home", str(home))
    assert result.exit_code == 0, result.stderr
    (document,) = read_documents(Home(home))
    validate(document.to_json(), "document")
    return document


@pytest.mark.parametrize(("name", "status", "code"), [
    ("pdfplumber__empty.pdf", "failed", "EMPTY"),
    ("pdfplumber__password-example.pdf", "failed", "ENCRYPTED"),
    ("pdfminer__pdf-with-jbig2.pdf", "partial", "NO_TEXT_LAYER"),
    ("pdfminer__zen_of_python_corrupted.pdf", "partial", "PDF_DAMAGED"),
])
def test_damaged_pdfs_name_their_cause(home: Path, fixtures: Path, name: str, status: str,
                                       code: str) -> None:
    document = _one(home, f"https://example.org/{name}", (fixtures / name).read_bytes(), "application/pdf")
    assert document.status == status
    assert code in [d.code for d in document.diagnostics]


def test_truncated_and_garbage_pdfs(home: Path, fixtures: Path) -> None:
    data = (fixtures / "pdfminer__naacl06-shinyama.pdf").read_bytes()
    add_snapshots(home, [
        ("https://example.org/cut.pdf", data[: len(data) // 3], "application/pdf", {}),
        ("https://example.org/junk.pdf", b"%PDF-1.4\n" + b"\x00garbage" * 100, "application/pdf", {}),
    ])
    assert invoke("extract", "--json", "--home", str(home)).exit_code == 0
    for document in read_documents(Home(home)):
        assert document.status in ("partial", "failed")
        assert document.diagnostics


def test_two_columns_read_column_by_column(home: Path, fixtures: Path) -> None:
    data = (fixtures / "pdfminer__naacl06-shinyama.pdf").read_bytes()
    document = _one(home, "https://example.org/paper.pdf", data, "application/pdf", extractor="pdf")
    page1 = [b for b in document.blocks() if b.page == 1]
    texts = [b.text for b in page1]
    left = next(i for i, t in enumerate(texts) if t.startswith("We are trying to extend"))
    right = next(i for i, t in enumerate(texts) if t.startswith("cles and adjust"))
    background = next(i for i, t in enumerate(texts) if t.startswith("Every day, a large number"))
    assert left < background < right  # the whole left column before the right one
    assert all(b.bbox is not None and b.anchor == "page=1" for b in page1)
    assert document.attributes["pageCount"] == 8


def test_page_bound(home: Path, fixtures: Path) -> None:
    add_snapshots(home, [("https://example.org/paper.pdf",
                          (fixtures / "pdfminer__naacl06-shinyama.pdf").read_bytes(), "application/pdf", {})])
    assert invoke("extract", "--json", "--home", str(home), "--max-pages", "2").exit_code == 0
    (document,) = read_documents(Home(home))
    assert document.status == "partial"
    assert {b.page for b in document.blocks()} == {1, 2}
    assert "PAGE_LIMIT" in [d.code for d in document.diagnostics]


def test_acroform_fields_and_tables(home: Path, fixtures: Path) -> None:
    document = _one(home, "https://example.org/form.pdf",
                    (fixtures / "pdfminer__AcroForm_TEST.pdf").read_bytes(), "application/pdf")
    fields = [b for b in document.blocks() if b.kind == "form_field"]
    assert len(fields) >= 7
    assert all(f.attributes["valueState"] in ("value-present", "not-observed") for f in fields)
    assert any(f.attributes["value"] for f in fields)


def test_table_rows_and_cells(home: Path, fixtures: Path) -> None:
    document = _one(home, "https://example.org/senate.pdf",
                    (fixtures / "pdfplumber__senate-expenditures.pdf").read_bytes(), "application/pdf")
    table = next(b for b in document.blocks() if b.kind == "table")
    assert table.rows and len(table.rows) >= 2
    assert "DESCRIPTION" in table.rows[0]
    assert table.page == 1 and table.bbox is not None


BOMB = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol9 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<lolz>&lol9;</lolz>"""


def test_entity_bomb_refused_fast(home: Path) -> None:
    started = time.monotonic()
    document = _one(home, "https://example.org/bomb.xml", BOMB, "application/xml")
    assert time.monotonic() - started < 10  # against a hang: a refused bomb takes well under 0.1 s
    assert document.status == "failed"
    assert document.diagnostics[0].code == "ENTITY_EXPANSION_REFUSED"


def test_external_entities_never_loaded(home: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET")
    xml = (f'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file://{secret}">]>'
           "<r><p>before &x; after</p></r>").encode()
    document = _one(home, "https://example.org/x.xml", xml, "application/xml")
    assert "TOP SECRET" not in "".join(b.text for b in document.blocks())
    assert "EXTERNAL_ENTITY_IGNORED" in [d.code for d in document.diagnostics]


def test_xml_depth_bound_and_malformed(home: Path) -> None:
    deep = b"<a>" * 5000 + b"x" + b"</a>" * 5000
    add_snapshots(home, [
        ("https://example.org/deep.xml", deep, "application/xml", {}),
        ("https://example.org/bad.xml", b"<a><b></a>", "application/xml", {}),
        ("https://example.org/ok.xml", b'<doc><title>T</title><p id="i">hello &amp; bye</p></doc>',
         "text/xml", {}),
    ])
    assert invoke("extract", "--json", "--home", str(home)).exit_code == 0
    bad, deep_doc, ok = read_documents(Home(home))
    assert bad.status == "failed" and bad.diagnostics[0].code == "MALFORMED_XML"
    assert deep_doc.status == "failed" and deep_doc.diagnostics[0].code == "NESTING_TOO_DEEP"
    assert ok.status == "ok"
    assert any(b.text == "hello & bye" and b.anchor == "i" for b in ok.blocks())
