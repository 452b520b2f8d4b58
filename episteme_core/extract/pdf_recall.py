"""Word recall of an extracted PDF against pdfplumber's plain text: completeness, measured per page.

pdfplumber's ``page.extract_text()`` is the plain reading of a page's text layer. Every word it gives
for a page must appear in the blocks the extractor made for that page (paragraphs, headings, table
cells, form fields), or the document silently lost text that no query can find. A word is found
when an unused copy of it is among the blocks' words, or when consecutive unused words of the
blocks spell it: pdfplumber's default tolerance glues words the extractor keeps apart
("TRAINFAREFOR" against "TRAIN FARE FOR", "“X" against "“ X", "ifT" against "if T"). Such glued
words (none of the blocks' words) are matched first, longest first, then every other word takes an
unused copy of itself. Words of punctuation only (the ".." of a figure) are not counted lost. The
test suite and ``bench/pdf_recall.py`` use this.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from typing import Any

import attrs

MAX_PIECES = 8  # the most reference words joined to spell one word of the blocks



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
    ours = [word for text in blocks for word in text.split()]
    used = [False] * len(ours)
    places: dict[str, list[int]] = {}
    starts: dict[str, list[int]] = {}
    for at, word in enumerate(ours):
        places.setdefault(word, []).append(at)
        starts.setdefault(word[:1], []).append(at)
    words = reference.split()
    glued = [at for at, word in enumerate(words) if word not in places]
    lost: list[int] = []
    # words the blocks never hold as such first (longest first): consecutive blocks' words spell them
    for at in sorted(glued, key=lambda i: (-len(words[i]), i)):
        word = words[at]
        if not _spell(word, ours, used, starts.get(word[:1], ())) and any(c.isalnum() for c in word):
            lost.append(at)  # (a word of punctuation only, ".." of a figure, carries nothing to find)
    for at, word in enumerate(words):  # then each other word takes an unused copy of itself
        if word in places:
            free = next((p for p in places[word] if not used[p]), None)
            if free is not None:
                used[free] = True
            elif any(c.isalnum() for c in word):
                lost.append(at)
    lost = _split_words(sorted(lost), words, places, used)
    missing = [words[at] for at in lost]
    return PageRecall(page, len(words), len(words) - len(missing), missing[:keep])


def _split_words(lost: list[int], words: list[str], places: dict[str, list[int]],
                 used: list[bool]) -> list[int]:
    """The lost words left once runs of consecutive reference words (punctuation-only ones skipped)
    that spell an unused word of the blocks are found: overlapping glyphs make pdfplumber cut a word
    the extractor reads whole ("s .. w . irling" against "swirling")."""
    found: set[int] = set()
    for at in lost:
        if at in found:
            continue
        spelled, run = "", []
        for nxt in range(at, min(len(words), at + MAX_PIECES)):
            if not any(c.isalnum() for c in words[nxt]):
                continue
            spelled += words[nxt]
            run.append(nxt)
            free = next((p for p in places.get(spelled, ()) if not used[p]), None)
            if len(run) > 1 and free is not None:
                used[free] = True
                found.update(run)
                break
    return [at for at in lost if at not in found]


def _spell(word: str, ours: list[str], used: list[bool], candidates: Iterable[int]) -> bool:
    """Mark and accept the first run of consecutive unused ``ours`` (starting at one of
    ``candidates``) that spells ``word`` exactly."""
    for start in candidates:
        if used[start] or not word.startswith(ours[start]):
            continue
        end, spelled = start, ""
        while end < len(ours) and not used[end] and len(spelled) < len(word):
            spelled += ours[end]
            end += 1
        if spelled == word:
            for at in range(start, end):
                used[at] = True
            return True
    return False


def document_recall(document: Any, reference: list[str]) -> list[PageRecall]:
    """Recall per page of a PDF ``document`` (its blocks carry ``page``) against ``reference``."""
    by_page: dict[int, list[str]] = {}
    for block in document.blocks():
        if block.page is not None:
            by_page.setdefault(int(block.page), []).append(block.text)
    return [page_recall(text, by_page.get(number, []), number)
            for number, text in enumerate(reference, start=1)]
