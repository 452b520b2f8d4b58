"""How chunks are laid out and cut: the public helpers every chunker may use.

A *run* is consecutive blocks of one section laid end to end with a blank line between them
(``layout``). ``windows`` cuts a run's text into windows of at most ``max_chars``: a window ends,
by preference, at a block's end, else after a sentence, else at a space, never before half of
``max_chars``; a window that ends inside a block makes the next one start ``overlap`` characters
earlier, at a word. Nothing here knows chunks or documents: the row builder (``chunking.rows``)
turns cut windows into chunks.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from typing import Any

import attrs

from episteme_core.records.evidence import SEPARATOR

_SENTENCE_END = re.compile(r"[.!?。！？][\"'”’)\]]*\s")
_SPACE = re.compile(r"\s")


@attrs.frozen
class Window:
    """``[start, end)`` of a run's laid-out text."""

    start: int
    end: int


def layout(texts: Sequence[str]) -> tuple[str, list[int], list[int]]:
    """The run's text (``texts`` joined by a blank line) and where each text starts and ends in it."""
    starts: list[int] = []
    ends: list[int] = []
    position = 0
    gap = len(SEPARATOR)
    for text in texts:
        starts.append(position)
        position += len(text)
        ends.append(position)
        position += gap
    return SEPARATOR.join(texts), starts, ends


def _cut(text: str, start: int, limit: int, ends: list[int], max_chars: int) -> tuple[int, bool]:
    """Where a window from ``start`` ends (at most ``limit``), and whether that is a block's end."""
    floor = start + max(1, max_chars // 2)
    i = bisect.bisect_right(ends, limit) - 1
    if i >= 0 and ends[i] > start and ends[i] >= floor:
        return ends[i], True
    window = text[floor:limit]
    best = -1
    for match in _SENTENCE_END.finditer(window):
        best = match.end() - 1  # keep the punctuation, cut before the space
    if best > 0:
        return floor + best, False
    space = max(window.rfind(" "), window.rfind("\n"), window.rfind("\t"))
    if space > 0:
        return floor + space, False
    return limit, False


def windows(text: str, ends: list[int], max_chars: int, overlap: int) -> list[Window]:
    """Cut ``text`` (a laid-out run whose blocks end at ``ends``) into bounded, overlapping windows."""
    result: list[Window] = []
    starts = [0] + [end + len(SEPARATOR) for end in ends[:-1]]
    start = 0
    total = len(text)
    while start < total:
        limit = min(start + max_chars, total)
        if limit == total:
            end, at_block = total, True
        else:
            end, at_block = _cut(text, start, limit, ends, max_chars)
        while end > start and text[end - 1].isspace():
            end -= 1
        if end <= start:
            end = limit
        result.append(Window(start, end))
        if end >= total:
            break
        if at_block:
            following = bisect.bisect_right(starts, end)
            nxt = starts[following] if following < len(starts) else total
        else:
            back = max(end - overlap, start + 1)
            space = _SPACE.search(text, back, end)
            nxt = space.end() if space and overlap > 0 else (end if overlap == 0 else back)
        while nxt < total and text[nxt].isspace():
            nxt += 1
        start = max(nxt, start + 1)
    return result


def normativity_runs(blocks: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """A section's blocks (as JSON) in runs of one normativity; blocks of only whitespace dropped."""
    runs: list[list[dict[str, Any]]] = []
    for block in blocks:
        if not block["text"].strip():
            continue
        norm = block.get("normativity", "unknown")
        if runs and runs[-1][-1].get("normativity", "unknown") == norm:
            runs[-1].append(block)
        else:
            runs.append([block])
    return runs
