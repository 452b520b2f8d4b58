"""Words of a PDF's characters: pdfplumber's word rule, with the gap measured against the type size.

pdfplumber starts a new word where the gap after a character is wider than a fixed ``x_tolerance``
(1.5 points here). Small type breaks that rule: at 5 points a space is about 1.4 points wide, so a
report set in 5-point Arial whose words are placed without space characters comes out as one glued
run of capitals ("DISTRICTDIRECTOR") that no query can find. Here a horizontal gap also ends a word
when it is wider than ``GAP_RATIO`` of the type size, whichever of the two is smaller: a space is a
quarter of an em or more in every common font, the gaps inside a word (kerning, tracking, math
italic) stay under 0.15 em, and text of 7.5 points or more is read exactly as before.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

X_TOLERANCE = 1.5  # points: pdfplumber's fixed gap between words, for type of 7.5 points and more
Y_TOLERANCE = 3.0  # points: pdfplumber's default, the rows of a cell's text
GAP_RATIO = 0.2  # of the type size: a wider gap ends a word even when it is under X_TOLERANCE


@functools.cache
def _extractor_class() -> type:
    """pdfplumber's ``WordExtractor`` with the size-relative gap (built on first use: pdfplumber is
    imported only when a PDF is read)."""
    from pdfplumber.utils.text import WordExtractor

    class SizedGapWords(WordExtractor):  # type: ignore[misc]  # pdfplumber is untyped
        def char_begins_new_word(self, prev_char: dict[str, Any], curr_char: dict[str, Any],
                                 direction: str, x_tolerance: float, y_tolerance: float) -> bool:
            if direction in ("ltr", "rtl"):
                size = float(prev_char.get("size") or 0)
                if size > 0:
                    x_tolerance = min(x_tolerance, GAP_RATIO * size)
            return bool(super().char_begins_new_word(prev_char, curr_char, direction,  # type: ignore[arg-type]
                                                     x_tolerance, y_tolerance))

    return SizedGapWords


def extract_words(chars: Sequence[dict[str, Any]], extra_attrs: Sequence[str] = (),
                  return_chars: bool = False) -> list[dict[str, Any]]:
    """The words of ``chars`` (a page's or a region's ``.chars``), as ``page.extract_words`` gives
    them with ``x_tolerance=1.5``, a word also ending at a gap wider than ``GAP_RATIO`` of its size."""
    extractor = _extractor_class()(x_tolerance=X_TOLERANCE, extra_attrs=list(extra_attrs))
    return list(extractor.extract_words(list(chars), return_chars=return_chars))


def cell_text(chars: Sequence[dict[str, Any]]) -> str:
    """The text of a table cell's characters, words split as ``extract_words`` splits them, rows top
    to bottom, whitespace collapsed (what ``utils.extract_text`` gives, with the sized gap)."""
    from pdfplumber.utils.clustering import cluster_objects

    words = extract_words(chars)
    lines = cluster_objects(words, lambda w: w["top"], Y_TOLERANCE)
    return " ".join(" ".join(w["text"] for line in lines for w in line).split())
