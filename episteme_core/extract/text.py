"""The text extractor: paragraphs at blank lines, each with its exact span in the decoded text.

Decoding: the snapshot's charset (else UTF-8); a BOM is dropped and CRLF/CR become LF before
anything else, and every span counts characters of that normalised text. Bytes that do not decode
are replaced (U+FFFD), with a diagnostic and status ``partial``. Families may lay out the text
themselves (``structure_text``: the rfc family reads paginated RFCs).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from episteme_core.extract.builder import DocumentBuilder
from episteme_core.records.evidence import Document
from episteme_core.records.extraction import ExtractRequest
from episteme_core.text.decode import decode

_BLANK = re.compile(r"\n[ \t\f\v]*\n(?:[ \t\f\v]*\n)*")
# The title runs to its last character that is not a space, tab or #: possessive runs, so a line of
# spaces after a title is read once (``(.+?)[ \t#]*$`` retried the tail at every character).
_ATX = re.compile(r"^(#{1,6})[ \t]+(.(?:[ \t#]*+[^ \t#\n])*+)[ \t#]*$")
DEFAULT_MAX_BYTES = 64 * 1024 * 1024


def paragraphs(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Spans ``[a, b)`` of the paragraphs in ``text[start:end]``, trimmed of surrounding whitespace."""
    return list(iter_paragraphs(text, start, end))


def iter_paragraphs(text: str, start: int = 0, end: int | None = None) -> Iterator[tuple[int, int]]:
    """``paragraphs`` one at a time (a reader that stops early never holds them all)."""
    end = len(text) if end is None else end
    cursor = start
    for match in _BLANK.finditer(text, start, end):
        yield from _trimmed(text, cursor, match.start())
        cursor = match.end()
    yield from _trimmed(text, cursor, end)


def _trimmed(text: str, a: int, b: int) -> Iterator[tuple[int, int]]:
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    if a < b:
        yield a, b


class TextExtractor:
    """The builtin ``text`` extractor (plain text and Markdown)."""

    name = "text"
    version = "1"
    content_types = ("text/plain", "text/markdown", "text/x-markdown")
    limits = ("no-layout", "markup-not-interpreted")
    option_names = ("maxBytes",)

    def extract(self, request: ExtractRequest) -> Document:
        builder = DocumentBuilder(request, extractor=self.name, extractor_version=self.version,
                                  document_type=getattr(request.family, "document_type", None) or "text",
                                  limits=self.limits)
        max_bytes = int(request.options.get("maxBytes", DEFAULT_MAX_BYTES))
        if len(request.content) > max_bytes:
            builder.fail("TOO_LARGE", f"the text is {len(request.content)} bytes, more than {max_bytes}")
            return builder.build()
        text = decode(request.content, request.record.charset, builder)
        hook = getattr(request.family, "structure_text", None)
        if hook is not None and hook(text, builder):
            return builder.build()
        markdown = (request.record.content_type or "").startswith(("text/markdown", "text/x-markdown"))
        for a, b in iter_paragraphs(text):
            if builder.full:  # a bound of the document was reached (see DocumentBuilder)
                break
            chunk = text[a:b]
            heading = _ATX.match(chunk) if markdown and "\n" not in chunk else None
            if heading:
                builder.open_section(heading.group(2), len(heading.group(1)))
                builder.add_block("heading", chunk, span=(a, b))
            else:
                builder.add_block("paragraph", chunk, span=(a, b))
        return builder.build()
