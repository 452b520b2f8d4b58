"""Golden checks of the rfc family on real RFCs (text, XML v2, htmlized HTML)."""

from __future__ import annotations

import re
from pathlib import Path

from episteme_core.testing import check_component, invoke, read_documents, store_snapshot, validate
from episteme_rfc.plugin import RfcFamily

FIXTURES = Path(__file__).parent / "fixtures"


def _extract(home: Path, source: str, name: str, content_type: str, **options: str):
    store_snapshot(home, source, (FIXTURES / name).read_bytes(), content_type=content_type, options=options)
    result = invoke("extract", "--json", "--home", str(home))
    assert result.exit_code == 0, result.stderr
    (document,) = read_documents(home)
    validate(document.to_json(), "document")
    return document


def test_the_family_keeps_the_family_contract() -> None:
    assert check_component(RfcFamily()) == "family"


def test_paginated_text_sections_and_bcp14(tmp_path: Path) -> None:
    doc = _extract(tmp_path, "https://www.rfc-editor.org/rfc/rfc3986.txt", "rfc3986.txt", "text/plain")
    assert doc.family == "rfc"  # chosen by URL
    sections = {s.anchor: s for s in doc.sections}
    assert sections["section-3.2"].heading == "Authority"
    assert sections["section-3.2"].number == "3.2"
    text = "\n".join(b.text for b in doc.blocks())
    assert "[Page" not in text and "RFC 3986                   URI Generic Syntax" not in text
    plain = next(b for b in doc.blocks() if b.anchor == "section-3.2-1")
    assert plain.normativity == "informative"  # RFC 3986 uses no BCP 14 keyword


def test_bcp14_keywords_mark_normative(tmp_path: Path) -> None:
    doc = _extract(tmp_path, "https://www.rfc-editor.org/rfc/rfc2119.txt", "rfc2119.txt", "text/plain")
    must = [b for b in doc.blocks() if b.kind != "heading" and re.search(r"\bMUST\b", b.text)]
    assert must and all(b.normativity == "normative" for b in must)
    assert all(any(k.startswith("MUST") for k in b.attributes["bcp14"]) for b in must)


def test_fragment_section(tmp_path: Path) -> None:
    doc = _extract(tmp_path, "https://www.rfc-editor.org/rfc/rfc3986.txt", "rfc3986.txt", "text/plain",
                   fragment="section-3.2")
    assert doc.sections[0].anchor == "section-3.2"
    assert all(s.number and s.number.startswith("3.2") for s in doc.sections)


def test_xml_v2(tmp_path: Path) -> None:
    doc = _extract(tmp_path, "https://www.rfc-editor.org/rfc/rfc8174.xml", "rfc8174.v2.xml",
                   "application/xml")
    assert "Ambiguity of Uppercase" in doc.title
    assert any(s.anchor == "section-1" for s in doc.sections)
    assert any(b.anchor == "section-1-1" for b in doc.blocks())


def test_htmlized_html(tmp_path: Path) -> None:
    doc = _extract(tmp_path, "https://tools.ietf.org/html/rfc8259", "rfc8259.rfc-editor-htmlized.html",
                   "text/html", family="rfc")
    sections = {s.anchor: s for s in doc.sections}
    assert "section-8.1" in sections
    assert any(b.normativity == "normative" and "MUST" in b.text for b in doc.blocks())


def test_xml_v3_sections_fragments_and_bcp14(tmp_path: Path) -> None:
    doc = _extract(tmp_path, "https://www.rfc-editor.org/rfc/rfc9110.xml", "rfc9110.v3-excerpt.xml",
                   "application/xml")
    assert doc.family == "rfc" and doc.status == "ok" and doc.title == "HTTP Semantics"
    sections = {s.anchor: s for s in doc.sections}
    assert sections["section-3.2"].heading == "Representations"
    assert sections["section-3.2"].number == "3.2"
    assert sections["section-3.2"].path == ["Terminology and Core Concepts", "Representations"]
    assert sections["section-2.2"].heading == "Requirements Notation"
    blocks = {b.anchor: b for b in doc.blocks() if b.anchor}
    # index entries and aliases are not paragraphs: the first <t> of 3.2 is #section-3.2-1
    assert blocks["section-3.2-1"].text.startswith("A representation is information")
    # the BCP 14 entities (&MUST; = <bcp14>MUST</bcp14>) are expanded and mark normative blocks
    must = blocks["section-2.4-1"]
    assert must.text.startswith("A recipient MUST interpret a received protocol element")
    assert must.normativity == "normative" and must.attributes["bcp14"] == ["MUST"]
    assert blocks["section-2.2-5"].attributes["bcp14"] == ["MUST NOT"]
    assert blocks["section-2.2-2"].normativity == "informative"  # no uppercase keyword
    # empty cross-references read as xml2rfc shows them
    core = next(b for b in doc.blocks() if b.section_id == "section-1.3" and "(Section 3.1)" in b.text)
    assert "representations (Section 3.2)." in core.text
    assert "(representation.data.and.metadata)" in blocks["section-3.2-1"].text  # outside the excerpt
    assert "HTTP/2 ([HTTP/2]) introduced" in blocks["section-1.2-3"].text


def test_xml_v3_fragment(tmp_path: Path) -> None:
    doc = _extract(tmp_path, "https://www.rfc-editor.org/rfc/rfc9110.xml", "rfc9110.v3-excerpt.xml",
                   "application/xml", fragment="section-2")
    assert [s.anchor for s in doc.sections] == ["section-2", "section-2.1", "section-2.2", "section-2.3",
                                                "section-2.4", "section-2.5"]


def test_run_in_headings_are_sections(tmp_path: Path) -> None:
    """RFC 2119's sections put their term and text on one line ("3. SHOULD   This word, ..."): each is
    a section with the RFC Editor's fragment, its text a paragraph whose span holds it exactly."""
    doc = _extract(tmp_path, "https://www.rfc-editor.org/rfc/rfc2119.txt", "rfc2119.txt", "text/plain")
    sections = {s.anchor: s for s in doc.sections}
    assert [sections[f"section-{n}"].heading for n in range(1, 6)] == [
        "MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "MAY"]
    assert sections["section-3"].number == "3" and sections["section-6"].heading.startswith("Guidance")
    should = next(b for b in doc.blocks() if b.anchor == "section-3-1")
    assert should.text.startswith('This word, or the adjective "RECOMMENDED", mean that there\nmay exist')
    source = (FIXTURES / "rfc2119.txt").read_text("utf-8")
    assert source[should.span.start:should.span.end].startswith('This word, or the adjective')
    assert source[should.span.start:should.span.end].endswith("before choosing a different course.")
    heading = next(b for b in sections["section-3"].blocks if b.kind == "heading")
    assert heading.text == "3. SHOULD"
    # the paragraphs are the section's own, no longer the Abstract's
    assert not any("This word" in b.text for b in sections["section-abstract"].blocks)
