"""A book's non-prose paragraphs: its contents, lists of illustrations and captions, found at ingest.

A book's front matter is not what anyone asks about, yet it holds the book's own words in a few
characters (a list of illustrations names a scene per line), so BM25 ranks it above the chapter
that answers. Each such paragraph keeps its text and number (``show`` prints it) and gets a marked
kind instead of ``text``: ``ask`` leaves it out and ``query`` weighs it less. The rules look only at
the paragraphs' shape, never at one book:

- ``caption``: a paragraph that is one bracketed illustration note (``[Illustration: ...]``,
  ``[Illustration]``, ``[Frontispiece]``, ``[Image ...]``);
- ``contents``: a paragraph every line of which ends in a page number after a gap of spaces or
  dots (a list of illustrations, a contents page), a lone ``PAGE`` column heading, a ``CONTENTS`` or
  ``LIST OF ILLUSTRATIONS`` heading, and the short entries after such a heading whose words come
  again later in the book as the start of a paragraph (the chapter headings a contents page lists);
- ``boilerplate``: a paragraph of a licence or distribution notice that names Project Gutenberg
  (where the header and footer were not cut off at the ``*** START``/``*** END`` lines).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

CAPTION = "caption"
CONTENTS = "contents"
BOILERPLATE = "boilerplate"
TEXT = "text"

ENTRY_MAX_LINES = 3  # a contents entry is a short paragraph of at most this many lines...
ENTRY_MAX_LINE_CHARS = 100  # ...each at most this long
_CAPTION_OPEN = re.compile(r"^\[\s*(?:illustration|frontispiece|image|picture|plate|figure)\b[^\[\]]*",
                           re.IGNORECASE)
CAPTION_MAX_PARAGRAPHS = 12  # a caption split at blank lines ("[Illustration:", lines, "]") closes within
# "Heading to Chapter I.        1", "Frontispiece ....... iv": a gap of spaces or dots, then a page
# A line ending in a page number after a gap of two spaces or a dot leader; ``.*?`` takes any longer
# gap or leader, so the separators are fixed-width and the runs after them possessive (linear).
_PAGED_LINE = re.compile(r"\S.*?(?:\s\s|\.{3}\s*+)(?:[0-9]{1,4}|[ivxlcdm]{1,8})\s*+$", re.IGNORECASE)
_CONTENTS_HEADING = re.compile(r"^(?:table\s+of\s+)?contents\.?$|^(?:list\s+of\s+)?illustrations\.?$|^page$",
                               re.IGNORECASE)
_BOILERPLATE = re.compile(r"project\s+gutenberg", re.IGNORECASE)
_NOT_WORD = re.compile(r"[\W_]+")


def kinds(paragraphs: Sequence[str]) -> list[str]:
    """The kind of each paragraph of a book, in order: ``text``, ``caption``, ``contents`` or
    ``boilerplate`` (``records.trust.NON_PROSE_KINDS``)."""
    out = [_shape(text) for text in paragraphs]
    _open_captions(paragraphs, out)
    last_starts = _last_starts(paragraphs)
    in_contents = False
    for index, text in enumerate(paragraphs):
        if out[index] == CONTENTS:
            in_contents = True
            continue
        if out[index] != TEXT:
            continue
        if in_contents and _entry(text) and _starts_later(text, index, last_starts):
            out[index] = CONTENTS
        else:
            in_contents = False
    return out


def _starts_later(text: str, index: int, last_starts: dict[str, int]) -> bool:
    """Whether a later paragraph than ``index`` starts with ``text``'s key (a heading it lists)."""
    key = _key(text)
    return bool(key) and last_starts.get(key, -1) > index


def _open_captions(paragraphs: Sequence[str], out: list[str]) -> None:
    """Mark the paragraphs of a caption that blank lines split (``[Illustration:`` ... ``]``)."""
    index = 0
    while index < len(paragraphs):
        opened = _CAPTION_OPEN.match(paragraphs[index].strip())
        if opened and opened.end() == len(paragraphs[index].strip()):  # no closing bracket yet
            close = next((j for j in range(index + 1, min(len(paragraphs), index + CAPTION_MAX_PARAGRAPHS))
                          if paragraphs[j].rstrip().endswith("]")), None)
            if close is not None:
                out[index : close + 1] = [CAPTION] * (close + 1 - index)
                index = close
        index += 1


def _shape(text: str) -> str:
    """A paragraph's kind from its own shape (``text`` when none fits)."""
    stripped = text.strip()
    opened = _CAPTION_OPEN.match(stripped)
    if opened and stripped[opened.end():] == "]":
        return CAPTION
    lines = [line for line in stripped.split("\n") if line.strip()]
    if _CONTENTS_HEADING.match(" ".join(stripped.split())):
        return CONTENTS
    if lines and all(_PAGED_LINE.match(line.strip()) for line in lines):
        return CONTENTS
    if _BOILERPLATE.search(stripped):
        return BOILERPLATE
    return TEXT


def _entry(text: str) -> bool:
    lines = [line for line in text.strip().split("\n") if line.strip()]
    short = all(len(line.strip()) <= ENTRY_MAX_LINE_CHARS for line in lines)
    return 0 < len(lines) <= ENTRY_MAX_LINES and short


def _key(text: str) -> str:
    """A paragraph's letters and digits, lowercased: how a contents entry and its heading compare."""
    return _NOT_WORD.sub("", text.casefold())


def _last_starts(paragraphs: Sequence[str]) -> dict[str, int]:
    """For each key of a short paragraph (a possible contents entry), the last paragraph that starts
    with it. Only the distinct keys are held, never one item per paragraph: a book of a million
    short paragraphs held a dict of a million entries here."""
    wanted = {key for text in paragraphs if _entry(text) and (key := _key(text))}
    if not wanted:
        return {}
    sizes = sorted({len(key) for key in wanted})
    last_at: dict[str, int] = {}
    for index, text in enumerate(paragraphs):
        key = _key(text[: sizes[-1] * 3])
        for size in sizes:
            head = key[:size]
            if head in wanted:
                last_at[head] = index
    return last_at
