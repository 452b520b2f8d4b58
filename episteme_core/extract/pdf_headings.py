"""Which PDF paragraphs are headings, with their number and level.

A heading is a short paragraph set either in larger type than the page's body (15 % or more) or
wholly in a bold font at about the body size ("Abstract", "1 Introduction", "3.1 Method").
Bold words inside body text never qualify: the whole paragraph must be bold, at most two lines,
and an unnumbered bold line must be followed closely (within 2.5 of its heights) by prose in the
same column (so a bold author name above an address or far above the text is not a heading).
A printed number ("3.1", "2.", "A.1") gives the level (1 + its depth below the title); an
unnumbered heading takes the level earlier headings of the same font and size had.
"""

from __future__ import annotations

import re

import attrs

_SUBSET = re.compile(r"^[A-Z]{6}\+")
_BOLD = re.compile(r"bold|black|heavy|demi|medi|semibold|extrabold|ultra|cmbx|cmb\d|cmssbx|,b\b|-bd\b|-b$",
                   re.IGNORECASE)
_NUMBER = re.compile(r"^(\d{1,2}(?:\.\d{1,2})*|[A-Z](?:\.\d{1,2})+)\.?\s+(?=\w)")
_MAX_CHARS = 120


def font_family(fontname: str) -> str:
    """The font name without its subset prefix (``ABCDEF+Times-Bold`` -> ``Times-Bold``)."""
    return _SUBSET.sub("", fontname or "")


def is_bold(fontname: str) -> bool:
    """True when the font's name says it is bold (Bold, Black, Heavy, Demi, Medium, CMBX...)."""
    return bool(_BOLD.search(font_family(fontname)))


def split_number(text: str) -> tuple[str | None, str]:
    """``"3.1 Web Crawling"`` -> ``("3.1", "Web Crawling")``; no printed number -> ``(None, text)``."""
    match = _NUMBER.match(text)
    if not match or len(text) <= match.end():
        return None, text
    return match.group(1), text[match.end():]


def prose_like(text: str, line_count: int) -> bool:
    """Running text rather than an address or a label: enough characters on long enough lines."""
    return len(text) >= 100 or (line_count >= 2 and len(text) / line_count >= 35)


@attrs.define
class HeadingLevels:
    """Levels of headings across a document: numbered by their depth, unnumbered by their style."""

    by_style: dict[tuple[str, float], int] = attrs.field(factory=dict)
    largest: float = 0.0
    seen: int = 0

    def level(self, number: str | None, style: tuple[str, float], current_level: int) -> int:
        """The level of a new heading; ``current_level`` is the open section's (0: none)."""
        size = style[1]
        if number is not None:
            level = min(6, 2 + number.count("."))
        elif style in self.by_style:
            level = self.by_style[style]
        elif self.seen == 0:
            level = 1  # the first heading of a document (its title)
        elif size > self.largest:
            level = 2
        else:
            level = min(6, max(2, current_level + 1))
        self.by_style.setdefault(style, level)
        self.largest = max(self.largest, size)
        self.seen += 1
        return level


def classify(text: str, line_count: int, size: float, bold: bool, body: float,
             height: float, following: tuple[str, int, float] | None) -> tuple[bool, str | None]:
    """``(is heading, printed number)`` of a paragraph ``height`` points tall; ``following`` is
    the next paragraph in the same column: its text, line count and the gap above it (None at
    the column's end)."""
    flat = " ".join(text.split())
    if not body or len(flat) >= _MAX_CHARS or line_count > 3 or not any(c.isalpha() for c in flat):
        return False, None
    number, _ = split_number(flat)
    if size > body * 1.15:
        return True, number
    if not bold or line_count > 2 or size < body * 0.95:
        return False, None
    if number is not None:
        return True, number
    if following is None:
        return False, None
    next_text, next_lines, gap = following
    if gap > 2.5 * max(height, 1.0) or not prose_like(next_text, next_lines):
        return False, None
    return True, None
