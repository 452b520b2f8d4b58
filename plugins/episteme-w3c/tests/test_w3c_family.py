"""Golden checks of the w3c and whatwg families on real Bikeshed output."""

from __future__ import annotations

from pathlib import Path

from episteme_core.api import decode_source
from episteme_core.testing import (
    check_component,
    invoke,
    read_documents,
    store_snapshot,
    text_in_order,
    validate,
)
from episteme_w3c.plugin import W3cFamily, WhatwgFamily

FIXTURES = Path(__file__).parent / "fixtures"


def _extract(home: Path, source: str, name: str, **options: str):
    store_snapshot(home, source, (FIXTURES / name).read_bytes(), content_type="text/html", options=options)
    result = invoke("extract", "--json", "--home", str(home))
    assert result.exit_code == 0, result.stderr
    (document,) = read_documents(home)
    validate(document.to_json(), "document")
    return document


def test_the_families_keep_the_family_contract() -> None:
    assert check_component(W3cFamily()) == "family"
    assert check_component(WhatwgFamily()) == "family"


def test_whatwg_url_standard(tmp_path: Path) -> None:
    doc = _extract(tmp_path, "https://url.spec.whatwg.org/", "whatwg-url__url.excerpt-2016-11.html")
    assert doc.family == "whatwg" and doc.authority == "normative"
    sections = {s.id: s for s in doc.sections}
    assert sections["url-parsing"].number is not None
    host = next(b for b in doc.blocks() if "concept-host" in (b.anchor, *b.anchors))
    assert host.text
    notes = [b for b in doc.blocks() if b.kind == "note"]
    assert notes and all(b.normativity == "informative" for b in notes)


def test_w3c_csp(tmp_path: Path) -> None:
    doc = _extract(tmp_path, "https://www.w3.org/TR/CSP3/", "w3c-csp3__ED-2021-02-18.excerpt.html")
    assert doc.family == "w3c"
    sections = {s.id: s for s in doc.sections}
    assert sections["intro"].number == "1"
    assert sections["intro"].normativity == "informative"  # "This section is not normative."
    assert all(b.normativity == "informative" for b in sections["intro"].blocks)
    must = [b for b in doc.blocks() if " MUST " in f" {b.text} " and b.kind != "note"
            and b.normativity == "normative"]
    assert must and "MUST" in must[0].attributes.get("bcp14", [])
    assert any(b.kind == "algorithm" for b in doc.blocks())
    assert any(b.kind == "idl" for b in doc.blocks())


def test_fragment(tmp_path: Path) -> None:
    doc = _extract(tmp_path, "https://www.w3.org/TR/CSP3/", "w3c-csp3__ED-2021-02-18.excerpt.html",
                   fragment="framework-policy")
    assert doc.sections[0].id == "framework-policy"


def test_pruned_parts_and_spans(tmp_path: Path) -> None:
    """Table of contents, index, style and script never become text; spans hold on real markup."""
    name = "whatwg-url__url.excerpt-2016-11.html"
    doc = _extract(tmp_path, "https://url.spec.whatwg.org/", name)
    text = "\n".join(b.text for b in doc.blocks())
    for hidden in ("Table of Contents", ", in §4.1", "file-issue.js", "style-syntax-highlighting"):
        assert hidden not in text
    decoded = decode_source((FIXTURES / name).read_bytes(), None)
    spanned = [b for b in doc.blocks() if b.span is not None]
    assert len(spanned) > len(doc.blocks()) // 2
    for block in spanned:
        start, end = block.span.start, block.span.end
        assert decoded[start] == block.text[0] and decoded[end - 1] == block.text[-1]
        assert text_in_order(block.text, decoded, start, end)
    goals = next(b for b in doc.blocks() if b.text.startswith("The URL standard takes the following"))
    assert goals.span is not None
