"""SourceSpansHold: every non-null block span points at the block in the decoded source: its first
and last characters are there and the rest of its text lies between them in order (a consumer
that needs the exact text checks ``decoded[start:end] == text``, as chunking does)."""

from __future__ import annotations

from html import escape

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from episteme_core.extract.family import Family
from episteme_core.extract.html import HtmlExtractor, in_order
from episteme_core.extract.text import TextExtractor
from episteme_core.records.canonical import sha256_hex
from episteme_core.records.evidence import Document
from episteme_core.records.extraction import ExtractRequest
from episteme_core.records.storage import SnapshotRecord
from episteme_core.text.decode import decode

_word = st.text(alphabet=st.sampled_from(list("ab é<&>\"'\u00a0\t\n\r")), min_size=1, max_size=8)


def _inline(word: str, style: int) -> str:
    """A word as HTML, written in one of several ways (plain, escaped, tagged, a reference)."""
    if style == 0:
        return escape(word, quote=False)
    if style == 1:
        return f"<b>{escape(word)}</b>"
    if style == 2:
        return "".join(f"&#{ord(c)};" for c in word)
    if style == 3:
        return f"<a id=x{len(word)} href=#y>{escape(word)}</a><!-- c -->"
    return f"<code>{escape(word)}</code>\r\n"


_paragraph = st.lists(st.tuples(_word, st.integers(0, 4)), min_size=1, max_size=6)
_block = st.tuples(st.sampled_from(["p", "li", "pre", "h2", "td", "div", "dt", "section"]), _paragraph)


def _html(blocks: list[tuple[str, list[tuple[str, int]]]], charset: bool) -> bytes:
    out = ["<!doctype html>", '<meta charset="utf-8">' if charset else "", "<body>"]
    for tag, words in blocks:
        body = " ".join(_inline(w, s) for w, s in words)
        if tag == "li":
            out.append(f"<ul><li>{body}<li>{body}</ul>")
        elif tag == "td":
            out.append(f"<table>{body}<tr><td>{body}</table>")  # text before a row is foster-parented
        elif tag == "section":
            out.append(f"<section id=s><h3>{body}</h3>{body}<p>{body}</section>")
        else:
            out.append(f"<{tag}>{body}</{tag}>")
    return "\n".join(out).encode()


def _request(data: bytes, content_type: str, charset: str | None) -> ExtractRequest:
    record = SnapshotRecord(id="0" * 64, capture_kind="file", source="https://law.invalid/x",
                            final_url=None, content_type=content_type, charset=charset,
                            byte_length=len(data), content_sha256=sha256_hex(data),
                            observed_at="2020-01-01T00:00:00Z")
    return ExtractRequest(record=record, content=data, family=Family())


def assert_spans_hold(document: Document, decoded: str) -> int:
    """Check every span of ``document`` against ``decoded``; returns how many there were."""
    count = 0
    for block in document.blocks():
        if block.span is None:
            continue
        count += 1
        start, end = block.span.start, block.span.end
        assert 0 <= start < end <= len(decoded), block
        assert decoded[start] == block.text[0] and decoded[end - 1] == block.text[-1], block
        assert in_order(block.text, decoded, start, end), block
    return count


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(blocks=st.lists(_block, min_size=1, max_size=6), charset=st.booleans(),
       declared=st.sampled_from([None, "utf-8", "windows-1252"]))
def test_html_spans_hold(blocks: list[tuple[str, list[tuple[str, int]]]], charset: bool,
                         declared: str | None) -> None:
    data = _html(blocks, charset)
    document = HtmlExtractor().extract(_request(data, "text/html", declared))
    assert_spans_hold(document, decode(data, declared))


@settings(max_examples=40, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(list("ab é\n\r\t \ufeff#")), max_size=80))
def test_text_spans_hold(text: str) -> None:
    data = text.encode()
    document = TextExtractor().extract(_request(data, "text/plain", "utf-8"))
    assert_spans_hold(document, decode(data, "utf-8"))


def test_plain_paragraphs_get_spans() -> None:
    """The law above is not vacuous: ordinary markup gets spans, verbatim ones included."""
    data = (b"<!doctype html><meta charset=utf-8><h1>Title</h1><p>One <b>bold</b> word.</p>\r\n"
            b"<p>Plain text.</p><pre>  code\n  kept</pre><ul><li>item &amp; more</li></ul>")
    document = HtmlExtractor().extract(_request(data, "text/html", None))
    decoded = decode(data, None)
    assert assert_spans_hold(document, decoded) == 5
    plain = next(b for b in document.blocks() if b.text == "Plain text.")
    assert plain.span is not None and decoded[plain.span.start:plain.span.end] == "Plain text."
