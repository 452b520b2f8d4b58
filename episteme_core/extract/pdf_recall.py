"""Word recall of an extracted PDF against pdfplumber's plain text: completeness, measured per page.

pdfplumber's ``page.extract_text()`` is the plain reading of a page's text layer. Every word it gives
for a page must appear in the blocks the extractor made for that page (paragraphs, headings, table
cells, form fields), or the document silently lost text that no query can find. A word is found
when an unused copy of it is among the blocks' words, else (a word of ``GLUED_MIN`` or more
characters) when it is an unused stretch of the blocks' text with whitespace removed: pdfplumber's
default tolerance glues words the extractor keeps apart ("TRAINFAREFOR" against "TRAIN FARE FOR"). The test suite and ``bench/pdf_recall.py`` use this.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

import attrs

_SPACE = re.compile(r"\s+")
GLUED_MIN = 6  # shorter words are matched whole only (a short word is a stretch of almost anything)


@attrs.frozen
class PageRecall:
    """One page: how many of pdfplumber's words the blocks hold, and the first ones they miss."""

    page: int
    words: int
    found: int
    missing: list[str]

    @property
    def recall(self) -> float:
        return self.found / self.words if self.words else 1.0


def reference_pages(data: bytes, password: str | None = None) -> list[str]:
    """pdfplumber's plain text of each page (empty for a page it cannot read)."""
    import pdfplumber

    pages: list[str] = []
    with pdfplumber.open(io.BytesIO(data), password=password or "") as pdf:
        for page in pdf.pages:
            try:
                pages.append(page.extract_text() or "")
            except Exception:  # a damaged page: no reference words
                pages.append("")
            finally:
                page.close()
    return pages


def page_recall(reference: str, blocks: Iterable[str], page: int = 0, keep: int = 20) -> PageRecall:
    """Recall of the words of ``reference`` in the texts ``blocks`` (one page's)."""
    texts = list(blocks)
    bag = Counter(word for text in texts for word in text.split())
    rest = _SPACE.sub("", "".join(texts))
    words = reference.split()
    missing: list[str] = []
    for word in words:
        if bag[word] > 0:
            bag[word] -= 1
            continue
        at = rest.find(word) if len(word) >= GLUED_MIN else -1
        if at >= 0:
            rest = rest[:at] + "\0" + rest[at + len(word):]  # used once
            continue
        missing.append(word)
    return PageRecall(page, len(words), len(words) - len(missing), missing[:keep])


def document_recall(document: Any, reference: list[str]) -> list[PageRecall]:
    """Recall per page of a PDF ``document`` (its blocks carry ``page``) against ``reference``."""
    by_page: dict[int, list[str]] = {}
    for block in document.blocks():
        if block.page is not None:
            by_page.setdefault(int(block.page), []).append(block.text)
    return [page_recall(text, by_page.get(number, []), number)
            for number, text in enumerate(reference, start=1)]
