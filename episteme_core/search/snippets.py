"""Query-biased snippets: the window of a passage that best matches the query, within ``max_chars``.

Every word of the passage is stemmed as the index stems it; a word that is a query term scores its
IDF (rare words count more). A window's score is the IDF of each distinct query term it holds and a
tenth of it for a repeat: the window that says more of the question wins over one that says less of
it more often or more densely (measured on the dev set, docs/benchmarks.md: a bonus for the densest
250 characters pulled windows onto a run of repeated words). The best run of matches within half of
``max_chars`` is shown centred: half the room left goes before it, from the start of a sentence,
half after it, so the words around the matches (where the answer often is) are shown too; the end
falls at a word. Near the passage's end the window takes the whole budget. A table row (a line
holding a tab) counts as a sentence, so a window opens at the start of the row it shows first.

A query word inside a line of structured data (one JSON array or object, as a tool's output lists
its search results: ``Links: [{"title": ..., "url": ...}]``) weighs ``NON_PROSE_WEIGHT`` of its
IDF, as a book's contents do in ranking: such a line holds the question's words densely (every
result's title repeats them) without saying the answer, which the prose after it does. This holds
for snippets, for ``ask``'s excerpts of long paragraphs and for the weight each paragraph holds.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping, Sequence

from episteme_core.search.passages import NON_PROSE_WEIGHT
from episteme_core.text.analyzer import DEFAULT_LANGUAGE, stemmer, word_spans

REPEAT_SHARE = 0.1  # a term's second and later occurrences in a window, as a share of its weight
REPEATS_COUNTED = 3
LOOKBACK_CHARS = 600  # the most a window shows before its first match
CLUSTER_SHARE = 0.5  # the matches scored lie within this share of max_chars; the rest is context
COMPLETION_SHARE = 10  # a window moves on by at most 1/this of itself to end a sentence it cuts
# The short label a line of structured data may open with (``Links: [...]``), matched at its start.
_STRUCTURED_LABEL = re.compile(r"[A-Za-z][\w ]{0,30}: ?")
_SENTENCE_ENDS = (". ", "? ", "! ", ".\n", "?\n", "!\n", "\n\n", ": ", ":\n", "。", "！", "？")
_SENTENCE_MARKS = ".?!:。！？"  # the last character of a window that ends a sentence


def term_matches(text: str, weights: Mapping[str, float],
                 languages: Sequence[str] = (DEFAULT_LANGUAGE,)) -> list[tuple[int, int, str, float]]:
    """``(start, end, term, weight)`` of every word of ``text`` that is a query term (inside a line of
    structured data, ``structured_lines``, at ``NON_PROSE_WEIGHT`` of its weight)."""
    stems = [stemmer(language) for language in languages]
    found = []
    for start, end, word in word_spans(text):
        for stem in stems:
            term = stem(word)
            weight = weights.get(term)
            if weight is not None:
                found.append((start, end, term, weight))
                break
    lines = structured_lines(text) if found else []
    if lines:
        starts = [lo for lo, _ in lines]
        for index, (start, end, term, weight) in enumerate(found):
            at = bisect.bisect_right(starts, start) - 1
            if at >= 0 and start < lines[at][1]:
                found[index] = (start, end, term, weight * NON_PROSE_WEIGHT)
    return found


def structured_lines(text: str) -> list[tuple[int, int]]:
    """``[start, end)`` of each line of ``text`` that is structured data: one JSON array or object
    holding a key (``"name":``), optionally after a short label (``Links: [{"title": "...", "url":
    "..."}]``). Plain string tests, one pass over each line: no pattern that could backtrack."""
    if '":' not in text and '" :' not in text:
        return []
    found: list[tuple[int, int]] = []
    start = 0
    for line in text.split("\n"):
        end = start + len(line)
        body = line.strip(" \t\r")
        if body.endswith(","):
            body = body[:-1]
        if body[-1:] in ("]", "}"):
            label = _STRUCTURED_LABEL.match(body)
            data = body[label.end():] if label else body
            if data[:1] in ("[", "{") and ('":' in data or '" :' in data):
                found.append((start, end))
        start = end + 1
    return found


def held_weights(matches: list[tuple[int, int, str, float]],
                 spans: Sequence[tuple[int, int]]) -> list[float]:
    """For each ``[start, end)`` of ``spans`` (in the text ``matches`` were found in, ``term_matches``),
    the weight of the query terms it holds, scored as a snippet's window is (each distinct term's
    weight, and small shares of it for its repeats)."""
    starts = [m[0] for m in matches]
    out = []
    for start, end in spans:
        lo = bisect.bisect_left(starts, start)
        hi = bisect.bisect_left(starts, end, lo)
        out.append(_window_score(matches, lo, hi))
    return out


def _window_score(matches: list[tuple[int, int, str, float]], lo: int, hi: int) -> float:
    """Score of matches ``[lo, hi)``: the distinct terms' weights and the repeats' shares."""
    seen: dict[str, int] = {}
    score = 0.0
    for _, _, term, weight in matches[lo:hi]:
        count = seen.get(term, 0)
        if count == 0:
            score += weight
        elif count < REPEATS_COUNTED:
            score += REPEAT_SHARE * weight
        seen[term] = count + 1
    return score


def _boundary_before(text: str, position: int, floor: int) -> int:
    """The start of the sentence holding ``position`` (not before ``floor``), else a word start.

    A table row is a unit as a sentence is: when the line holding ``position`` holds a tab (how
    extractors lay out a table's cells), the line's start is a boundary too, so a snippet never
    opens in the middle of a row (its first cells are often what a question asks for)."""
    window = text[floor:position]
    best = -1
    for end in _SENTENCE_ENDS:
        found = window.rfind(end)
        if found >= 0:
            best = max(best, found + len(end))
    line = text.rfind("\n", floor, position) + 1
    if line > floor:
        line_end = text.find("\n", position)
        if "\t" in text[line : line_end if line_end >= 0 else len(text)]:
            best = max(best, line - floor)
    if best >= 0:
        start = floor + best
        while start < position and text[start].isspace():
            start += 1
        return start
    if floor == 0:
        return 0
    space = text.rfind(" ", floor, position)
    return space + 1 if space >= 0 else floor


def _best(matches: list[tuple[int, int, str, float]], span: int) -> tuple[float, int, int]:
    """(score, lo, hi) of the best run of matches ``[lo, hi)`` that fits in ``span`` characters; of
    runs that score the same, the last: the words a question shares with a passage tend to come
    before the answer (a heading, a list of links, a lead-in), so the later of equal runs is the
    one with the answer after it."""
    if not matches:
        return 0.0, 0, 0
    starts = [m[0] for m in matches]
    best, best_lo, best_hi = -1.0, 0, 1
    for lo in range(len(matches)):
        limit = matches[lo][0] + span
        hi = bisect.bisect_right(starts, limit - 1, lo)
        while hi > lo + 1 and matches[hi - 1][1] > limit:
            hi -= 1
        score = _window_score(matches, lo, hi)
        if score > best - 1e-9:  # a tie goes to the later run
            best, best_lo, best_hi = max(score, best), lo, hi
    return best, best_lo, best_hi


def run_of(matches: list[tuple[int, int, str, float]], span: int) -> tuple[int, int] | None:
    """``[start, end)`` of the best run of a text's query-term ``matches`` (``term_matches``) that
    fits in ``span`` characters (scored as a snippet window is), None when there are none."""
    if not matches:
        return None
    _, lo, hi = _best(matches, max(1, span))
    return matches[lo][0], matches[hi - 1][1]


def best_window(text: str, weights: Mapping[str, float], max_chars: int,
                languages: Sequence[str] = (DEFAULT_LANGUAGE,),
                focus: tuple[int, int] | None = None) -> tuple[int, int]:
    """``[start, end)`` of at most ``max_chars`` characters of ``text`` that best match the query
    terms ``weights`` (term -> IDF); the whole text when it fits, its start when nothing matches.

    ``focus`` (a span of ``text``: the run that ranked best, where overlapping runs were joined)
    keeps the window on it: the window is chosen within the focus and as much text on either side
    as the budget leaves beyond it, then runs on to the whole budget where that slice ended first.
    A window that would cut a sentence holding a query term ends where that sentence ends, when its
    start can move on that far without passing the first word of its best run (``_completed``)."""
    if len(text) <= max_chars:
        return 0, len(text)
    if focus is not None:
        room = max(0, max_chars - (focus[1] - focus[0]))
        lo, hi = max(0, focus[0] - room), min(len(text), focus[1] + room)
        if (lo, hi) != (0, len(text)):
            start, end, first = _cluster_window(text[lo:hi], weights, max_chars, languages)
            # the slice can end before the budget does: the window takes the rest of it after
            start, end = start + lo, max(end + lo, _end_at_word(text, start + lo, max_chars))
            return _completed(text, start, end, first + lo if first >= 0 else -1, weights, languages)
    start, end, first = _cluster_window(text, weights, max_chars, languages)
    return _completed(text, start, end, first, weights, languages)


def _cluster_window(text: str, weights: Mapping[str, float], max_chars: int,
                    languages: Sequence[str]) -> tuple[int, int, int]:
    """``best_window`` of a text longer than ``max_chars``, before ``_completed``, and where its
    best run of matches begins (-1 when nothing matches: the text's start is shown)."""
    matches = term_matches(text, weights, languages) if weights else []
    if not matches:
        return 0, _end_at_word(text, 0, max_chars), -1
    _, lo, hi = _best(matches, max(1, int(max_chars * CLUSTER_SHARE)))
    first, last = matches[lo][0], matches[hi - 1][1]
    # centre the matches: half the room left goes before them (from a sentence start), half after
    room = min(LOOKBACK_CHARS, (max_chars - (last - first)) // 2)
    start = _boundary_before(text, first, max(0, first - room))
    if start + max_chars > len(text):  # near the end: use the whole budget, from a word start
        start = _word_start_after(text, max(0, len(text) - max_chars), start)
    return start, _end_at_word(text, start, max_chars), first


def _completed(text: str, start: int, end: int, keep: int, weights: Mapping[str, float],
               languages: Sequence[str]) -> tuple[int, int]:
    """``[start, end)`` moved on to end where the sentence it cuts ends, when that sentence holds a
    query term and the start can move that far (on to a sentence, else a word, start) without
    passing ``keep`` (-1: nothing matched, nothing to keep on): the rest of a sentence about the
    question is worth more than the words before the window's best run, the side a window gives up
    first. Measured on three question sets: a third-set answer (a method's step, cut before its last
    words) now shown, no snippet lost."""
    if keep < 0 or end >= len(text) or end <= start:
        return start, end
    if text[end - 1] in _SENTENCE_MARKS or text.startswith("\n\n", end):
        return start, end  # it ends a sentence already
    # how far the start can move on: not past the best run's first word, nor by more than a tenth
    # of the window (the words before the best run can hold the answer too: a book's claim, then
    # the long sentence that argues it)
    slack = min(keep - start, (end - start) // COMPLETION_SHARE)
    if slack <= 0:
        return start, end
    finish = len(text) if end + slack >= len(text) else -1
    for mark in _SENTENCE_ENDS:
        found = text.find(mark, end, end + slack + 1)
        if found >= 0:
            close = found + len(mark.rstrip()) if mark.strip() else found
            finish = close if finish < 0 else min(finish, close)
    if finish < 0 or finish - end > slack:
        return start, end
    moved = _word_start_after(text, start + (finish - end), start + slack)  # a sentence start within reach
    if moved > start + slack or not text[moved - 1].isspace():
        return start, end
    sentence = text[_boundary_before(text, end, start) : finish]  # the sentence the window cut
    return (moved, finish) if term_matches(sentence, weights, languages) else (start, end)


def window_around(text: str, span: tuple[int, int], max_chars: int) -> tuple[int, int]:
    """``[start, end)`` of at most ``max_chars`` characters of ``text`` that holds ``span`` (the part
    that must be shown): from the start of the sentence (or table row) ``span`` begins in, the room
    left after it, as the snippet's rule has it (the words a question shares with a passage tend to
    come before the answer); near the end it opens earlier, to use the whole budget. The whole text
    when it fits. It holds ``span`` when ``span`` and 100 characters of room fit in ``max_chars``
    (the sentence start is looked for within half the room; the end moves back to a word boundary by
    up to 40 characters)."""
    if len(text) <= max_chars:
        return 0, len(text)
    lo, hi = span
    room = max(0, max_chars - (hi - lo))
    start = _boundary_before(text, lo, max(0, lo - room // 2))
    if start + max_chars > len(text):  # near the end: use the whole budget, from a sentence start
        start = _word_start_after(text, max(0, len(text) - max_chars), start)
    return start, _end_at_word(text, start, max_chars)


def _word_start_after(text: str, position: int, limit: int) -> int:
    """The first sentence (else word) start at or after ``position`` and not after ``limit``."""
    if position == 0 or position >= limit:
        return min(position, limit)
    window = text[position:limit]
    best = len(window)
    for end in _SENTENCE_ENDS:
        found = window.find(end)
        if 0 <= found and found + len(end) <= len(window):
            best = min(best, found + len(end))
    if best < len(window) and best <= 200:
        start = position + best
    else:
        space = text.find(" ", position, limit)
        newline = text.find("\n", position, limit)
        cands = [c for c in (space, newline) if c >= 0]
        start = min(cands) + 1 if cands else position
    while start < limit and text[start].isspace():
        start += 1
    return start


def _end_at_word(text: str, start: int, max_chars: int) -> int:
    """The end of a window of at most ``max_chars`` from ``start``, at a word boundary when one is near."""
    end = min(len(text), start + max_chars)
    if end < len(text) and not text[end].isspace():
        space = max(text.rfind(" ", max(start, end - 40), end), text.rfind("\n", max(start, end - 40), end))
        if space > start:
            end = space
    return end
