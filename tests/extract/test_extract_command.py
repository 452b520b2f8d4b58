"""``episteme extract`` end to end: snapshots in, one valid document per source, one commit."""

from __future__ import annotations

import json
import time
from pathlib import Path

from episteme_core.stages.documents import documents_fingerprint, read_documents
from episteme_core.store.home import Home
from episteme_core.testing import invoke, validate

from .conftest import add_snapshots

HTML = b"""<!doctype html><html><head><title>T</title><style>.x{}</style>
<script>var secret = "never text";</script></head><body>
<nav>menu</nav>
<h1 id="top">Top</h1><p>Intro <b>bold</b> text.</p>
<noscript>noscript text</noscript><template><p>template text</p></template>
<section id="s1"><h2>One</h2><p id="p1">First <dfn id="dfn-thing">thing</dfn>.</p>
<div class="note"><p>A note.</p></div>
<ul><li>item a</li><li>item b<ol><li>nested</li></ol></li></ul>
<table><tr><th>h1</th><th>h2</th></tr><tr><td>c1</td><td>c2</td></tr></table>
<pre>code  kept
  exactly</pre>
<figure><img src=x><figcaption>A caption</figcaption></figure>
<div class="example" id="ex1"><p>An example.</p></div>
</section>
<section id="s2"><h2>Two</h2><p>Second.</p></section>
</body></html>"""


def _extract(home: Path, *sources: str) -> object:
    return invoke("extract", "--json", "--home", str(home), *sources)


def test_extract_writes_one_valid_document_per_source(home: Path, fixtures: Path) -> None:
    add_snapshots(home, [
        ("https://example.org/page", HTML, "text/html", {}),
        ("https://example.org/notes.txt", b"one\n\ntwo", "text/plain", {}),
        ("https://example.org/form.pdf", (fixtures / "pdfminer__AcroForm_TEST.pdf").read_bytes(),
         "application/pdf", {}),
    ])
    result = _extract(home)
    assert result.exit_code == 0, result.stderr
    envelope = result.envelope
    validate(envelope, "cli-envelope")
    rows = envelope["data"]["documents"]
    assert [r["source"] for r in rows] == sorted(r["source"] for r in rows)
    documents = read_documents(Home(home))
    assert len(documents) == 3
    for document in documents:
        validate(document.to_json(), "document")
        assert document.content_trust == "untrusted-source"
        assert document.provenance.source_sha256 == document.source_sha256
    assert documents_fingerprint(Home(home)) is not None


def test_html_never_reads_scripts_and_keeps_structure(home: Path) -> None:
    add_snapshots(home, [("https://example.org/page", HTML, "text/html", {})])
    assert _extract(home).exit_code == 0
    (document,) = read_documents(Home(home))
    text = "\n".join(b.text for b in document.blocks())
    for hidden in ("never text", "noscript text", "template text", ".x{}", "menu"):
        assert hidden not in text
    kinds = {b.kind for b in document.blocks()}
    assert {"heading", "paragraph", "list_item", "table", "code", "figure_caption", "note",
            "example"} <= kinds
    by_anchor = {b.anchor: b for b in document.blocks()}
    assert by_anchor["p1"].text == "First thing."
    assert "dfn-thing" in by_anchor["p1"].anchors or by_anchor["p1"].anchor == "dfn-thing"
    table = next(b for b in document.blocks() if b.kind == "table")
    assert table.rows == [["h1", "h2"], ["c1", "c2"]]
    code = next(b for b in document.blocks() if b.kind == "code")
    assert code.text == "code  kept\n  exactly"
    assert next(b for b in document.blocks() if b.kind == "note").normativity == "informative"
    assert by_anchor["ex1"].normativity == "example"
    sections = {s.id: s for s in document.sections}
    assert sections["s1"].path == ["Top", "One"]
    assert sections["s2"].heading == "Two"


def test_fragment_narrows_or_warns(home: Path) -> None:
    add_snapshots(home, [
        ("https://example.org/a", HTML, "text/html", {"fragment": "s2"}),
        ("https://example.org/b", HTML, "text/html", {"fragment": "missing"}),
    ])
    result = _extract(home)
    assert result.exit_code == 0
    a, b = read_documents(Home(home))
    assert [s.id for s in a.sections] == ["s2"]
    assert a.fragment == "s2"
    assert "fragment not found: missing" in b.warnings
    assert any(w["code"] == "EXTRACTION_WARNING" for w in result.envelope["warnings"])


def test_text_spans_point_at_the_decoded_text(home: Path) -> None:
    raw = "\ufeffFirst line\r\nstill first.\r\n\r\n  Second  \r\n\r\n\r\nThird é".encode()
    add_snapshots(home, [("https://example.org/t.txt", raw, "text/plain; charset=utf-8", {})])
    assert _extract(home).exit_code == 0
    (document,) = read_documents(Home(home))
    decoded = "First line\nstill first.\n\n  Second  \n\n\nThird é"
    blocks = document.blocks()
    assert [b.text for b in blocks] == ["First line\nstill first.", "Second", "Third é"]
    for block in blocks:
        assert block.span is not None
        assert decoded[block.span.start:block.span.end] == block.text
    assert document.status == "ok"


def test_invalid_utf8_is_partial_with_a_diagnostic(home: Path) -> None:
    add_snapshots(home, [("https://example.org/bad.txt", b"good\n\nbad \xff\xfe byte", "text/plain", {})])
    assert _extract(home).exit_code == 0
    (document,) = read_documents(Home(home))
    assert document.status == "partial"
    assert [d.code for d in document.diagnostics] == ["INVALID_ENCODING"]
    assert "\ufffd" in document.blocks()[1].text


def test_an_unknown_family_fails_its_source_alone_and_the_others_stand(home: Path) -> None:
    add_snapshots(home, [("https://example.org/n.txt", b"keep me", "text/plain", {})])
    assert _extract(home).exit_code == 0
    before = json.loads((home / "documents" / "index.json").read_bytes())
    add_snapshots(home, [("https://example.org/x.txt", b"x", "text/plain", {"family": "nope"})])
    result = _extract(home)
    assert result.exit_code == 0
    assert result.envelope["data"]["counts"] == {"extracted": 0, "reused": 1, "failed": 1}
    [warning] = [w for w in result.envelope["warnings"] if w["code"] == "EXTRACTION_FAILED"]
    assert "nope" in warning["message"] and warning["source"] == "https://example.org/x.txt"
    after = json.loads((home / "documents" / "index.json").read_bytes())
    kept = [e for e in before["entries"] if e["key"] == "https://example.org/n.txt"]
    assert kept and kept[0] in after["entries"]  # the other document's object: the very same


def test_named_source_must_exist(home: Path) -> None:
    add_snapshots(home, [("https://example.org/n.txt", b"x", "text/plain", {})])
    result = _extract(home, "https://example.org/absent")
    assert result.exit_code == 3
    assert result.envelope["error"]["code"] == "INVALID_INPUT"


def test_html_bombs_fail_fast_with_a_diagnostic(home: Path) -> None:
    huge = b"<div>" * (10 * 1024 * 1024)  # 50 MiB of nested divs
    deep = b"<html><body>" + b"<div>" * 200_000 + b"x"
    add_snapshots(home, [
        ("https://example.org/huge", huge, "text/html", {}),
        ("https://example.org/deep", deep, "text/html", {}),
    ])
    started = time.monotonic()
    assert _extract(home).exit_code == 0
    assert time.monotonic() - started < 30  # against a hang: about 35 times the 0.85 s it takes
    deep_doc, huge_doc = read_documents(Home(home))
    assert huge_doc.status == "failed" and huge_doc.diagnostics[0].code == "TOO_LARGE"
    assert deep_doc.status == "failed" and deep_doc.diagnostics[0].code == "NESTING_TOO_DEEP"


def test_extractor_chosen_by_manifest_option(home: Path) -> None:
    add_snapshots(home, [("https://example.org/p", b"<p>hello</p>", "text/plain", {"extractor": "html"})])
    assert _extract(home).exit_code == 0
    (document,) = read_documents(Home(home))
    assert document.provenance.extractor == "html"
    assert document.blocks()[0].text == "hello"


def test_documents_stage_can_live_elsewhere(home: Path, tmp_path: Path) -> None:
    add_snapshots(home, [("https://example.org/t.txt", b"one\n\ntwo\n", "text/plain", {})])
    elsewhere = tmp_path / "docs-stage"
    result = invoke("extract", "--json", "--home", str(home), "--documents", str(elsewhere))
    assert result.exit_code == 0, result.stderr
    assert (elsewhere / "index.json").is_file()
    assert not (home / "documents" / "index.json").exists()
    relocated = Home(home, stage_overrides={"documents": elsewhere})
    assert [d.source for d in read_documents(relocated)] == ["https://example.org/t.txt"]
