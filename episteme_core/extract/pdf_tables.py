"""Tables on a PDF page: ruled ones (pdfplumber's lines strategy) and text-aligned ones.

Ruled detection finds little when a table is drawn as a frame with a ruled header and unruled
body rows: its body comes out as one cell holding many lines. Such a cell, or a run of free text
rows that each break into three or more segments at wide gaps, is read again with pdfplumber's
text strategy (rows from text lines; columns from the ruled header's vertical lines where there
are some, else from text alignment). A text table is kept only when it looks like one: at least
3 rows and 3 columns, short cells (at most 4 words on average), and most rows with 2 or more
cells. Ordinary prose, even in two columns, never has rows of three segments, so it never gets
this far. A row holding one cell below a fuller row continues that row's cell (a wrapped line).
Words inside a table's box that no cell holds are handed back to the running text (``unplaced``).
Cells, like the page, split words at gaps measured against the type size (``pdf_words``).
"""

from __future__ import annotations

import bisect
import statistics
from typing import Any

import attrs

from episteme_core.extract.pdf_words import X_TOLERANCE, cell_text, extract_words

TEXT_SETTINGS: dict[str, Any] = {"vertical_strategy": "text", "horizontal_strategy": "text",
                                 "text_x_tolerance": 1.5}
MIN_ROWS = 3
MIN_COLUMNS = 3
MAX_WORDS_PER_CELL = 4.0

Box = tuple[float, float, float, float]


@attrs.frozen
class FoundTable:
    """A table as the page shows it: its box and its rows of cells (whitespace collapsed)."""

    bbox: Box
    rows: list[list[str]]
    strategy: str  # "lines" (ruled) or "text"


def _inside(word: dict[str, Any], box: Box) -> bool:
    cx = (word["x0"] + word["x1"]) / 2
    cy = (word["top"] + word["bottom"]) / 2
    return bool(box[0] <= cx <= box[2] and box[1] <= cy <= box[3])


def _clean(rows: list[list[str | None]]) -> list[list[str]]:
    return [[" ".join((cell or "").split()) for cell in row] for row in rows]


def text_rows(words: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Words grouped into rows sharing a baseline, each sorted left to right."""
    rows: list[list[dict[str, Any]]] = []
    for word in sorted(words, key=lambda w: (round(w["top"]), w["x0"])):
        if rows:
            first = rows[-1][0]
            if abs(word["top"] - first["top"]) <= max(1.0, first["bottom"] - first["top"]) * 0.5:
                rows[-1].append(word)
                continue
        rows.append([word])
    for row in rows:
        row.sort(key=lambda w: w["x0"])
    return rows


def _segments(row: list[dict[str, Any]]) -> int:
    """How many pieces a row breaks into at gaps wider than three times its type size."""
    pieces = 1
    for left, right in zip(row, row[1:], strict=False):
        size = max(1.0, float(left.get("size") or (left["bottom"] - left["top"])))
        if right["x0"] - left["x1"] > max(12.0, size * 3):
            pieces += 1
    return pieces


def _aligned_runs(words: list[dict[str, Any]]) -> list[Box]:
    """Boxes around runs of at least ``MIN_ROWS`` nearby rows of 3+ segments (table candidates)."""
    runs: list[list[list[dict[str, Any]]]] = []
    last_bottom = None
    for row in text_rows(words):
        top = min(w["top"] for w in row)
        height = max(w["bottom"] - w["top"] for w in row)
        if _segments(row) < MIN_COLUMNS:
            continue
        if runs and last_bottom is not None and top - last_bottom <= 4 * height:
            runs[-1].append(row)
        else:
            runs.append([row])
        last_bottom = max(w["bottom"] for w in row)
    boxes = []
    for run in runs:
        if len(run) >= MIN_ROWS:
            flat = [w for row in run for w in row]
            boxes.append((min(w["x0"] for w in flat), min(w["top"] for w in flat),
                          max(w["x1"] for w in flat), max(w["bottom"] for w in flat)))
    return boxes


def merge_continuations(rows: list[list[str]]) -> list[list[str]]:
    """A row with one non-empty cell (not the first) after a row with two or more continues that
    row's cell: the document wrapped a long cell onto the next line."""
    out: list[list[str]] = []
    for row in rows:
        filled = [i for i, cell in enumerate(row) if cell]
        if not filled:
            continue
        if out and len(filled) == 1 and filled[0] > 0 and sum(1 for c in out[-1] if c) >= 2:
            i = filled[0]
            previous = out[-1]
            if i < len(previous):
                previous[i] = f"{previous[i]} {row[i]}".strip()
                continue
        out.append(list(row))
    return out


def looks_like_table(rows: list[list[str]], ruled: bool = False) -> bool:
    """The sanity check a text-strategy table must pass (prose fails it); under ruled columns
    two columns and longer cells are enough."""
    rows = [row for row in rows if any(row)]
    if len(rows) < (2 if ruled else MIN_ROWS):
        return False
    used = [i for i in range(max(len(r) for r in rows)) if sum(1 for r in rows if i < len(r) and r[i]) >= 2]
    if len(used) < (2 if ruled else MIN_COLUMNS):
        return False
    cells = [cell for row in rows for cell in row if cell]
    if not ruled and statistics.mean(len(cell.split()) for cell in cells) > MAX_WORDS_PER_CELL:
        return False
    return sum(1 for row in rows if sum(1 for c in row if c) >= 2) >= len(rows) / 2


def _crossings(words: list[dict[str, Any]], columns: list[float]) -> int:
    """How many words straddle a column boundary (prose does; a table's cells do not)."""
    inner = columns[1:-1]
    return sum(1 for w in words for x in inner if w["x0"] + 0.5 < x < w["x1"] - 0.5)


def _columns(table: Any) -> list[float]:
    return sorted({round(x, 2) for c in table.cells for x in (c[0], c[2])})


def _text_table(page: Any, box: Box, verticals: list[float] | None) -> FoundTable | None:
    """pdfplumber's text strategy inside ``box``; columns at ``verticals`` (ruled) when given,
    else from text alignment. Under ``verticals`` rows have one cell per ruled column."""
    x0, top, x1, bottom = box
    region = page.crop((max(x0 - 1, page.bbox[0]), max(top - 1, page.bbox[1]),
                        min(x1 + 1, page.bbox[2]), min(bottom + 1, page.bbox[3])))
    words = extract_words(region.chars)
    if not words:
        return None
    settings = dict(TEXT_SETTINGS)
    if verticals:
        # the text strategy's row edges run from the leftmost to the rightmost word: columns
        # must meet them there, so the outer ruled lines move in to the words
        left = min(w["x0"] for w in words) - 0.5
        right = max(w["x1"] for w in words) + 0.5
        lines = sorted({left, right, *(x for x in verticals if left < x < right)})
        settings.update(vertical_strategy="explicit", explicit_vertical_lines=lines)
    found = [t for t in region.find_tables(settings) if t.bbox]
    if not found:
        return None
    table = max(found, key=lambda t: (t.bbox[3] - t.bbox[1]) * (t.bbox[2] - t.bbox[0]))
    columns = _columns(table)
    if not verticals and _crossings(words, columns) > max(2, len(words) // 20):
        return None
    raw = _place(words, table, verticals or columns)
    rows = merge_continuations(raw)
    if not looks_like_table(rows, ruled=bool(verticals)):
        return None
    return FoundTable(_round(table.bbox), rows, "text")


def _place(words: list[dict[str, Any]], table: Any, columns: list[float]) -> list[list[str]]:
    """Rows from the text strategy, filled with whole words: each word goes to the column its
    left edge lies in (the outer columns open-ended), so a line that runs past a column edge or
    past the table's detected box is never cut mid-word. A word set at most ``X_TOLERANCE`` after
    the word before it on its line (a phrase in small type, set without spaces) goes where that
    word went: the run is placed by its left edge, as one glued word was."""
    width = len(columns) - 1
    rows = []
    for row in table.rows:
        if not row.bbox:
            continue
        top, bottom = row.bbox[1], row.bbox[3]
        inside = [w for w in words if top <= (w["top"] + w["bottom"]) / 2 <= bottom]
        slots: dict[int, int] = {}
        for line in text_rows(inside):
            previous: dict[str, Any] | None = None
            for word in line:
                if previous is not None and word["x0"] - previous["x1"] <= X_TOLERANCE:
                    slots[id(word)] = slots[id(previous)]
                else:
                    at = bisect.bisect_right(columns, word["x0"] + 0.5) - 1
                    slots[id(word)] = max(0, min(width - 1, at))
                previous = word
        cells: list[list[str]] = [[] for _ in range(width)]
        for word in sorted(inside, key=lambda w: w["x0"]):
            cells[slots[id(word)]].append(word["text"])
        rows.append([" ".join(cell) for cell in cells])
    return rows


def _cells(table: Any) -> list[list[str | None]]:
    """A ruled table's cell texts, as ``table.extract()`` gives them (a character belongs to the cell
    its centre lies in), its words split at gaps as the page's words are (``pdf_words``)."""
    def within(char: dict[str, Any], box: Box) -> bool:
        mid_x, mid_y = (char["x0"] + char["x1"]) / 2, (char["top"] + char["bottom"]) / 2
        return bool(box[0] <= mid_x < box[2] and box[1] <= mid_y < box[3])

    chars = table.page.chars
    out: list[list[str | None]] = []
    for row in table.rows:
        row_chars = [c for c in chars if within(c, row.bbox)]
        out.append([None if cell is None else cell_text([c for c in row_chars if within(c, cell)])
                    for cell in row.cells])
    return out


def _round(box: Box) -> Box:
    return (round(box[0], 2), round(box[1], 2), round(box[2], 2), round(box[3], 2))


def _crowded(box: Box, words: list[dict[str, Any]]) -> bool:
    """A ruled row holding several text rows split at wide gaps: an unruled table inside it."""
    inside = [w for w in words if _inside(w, box)]
    if len(inside) < 2 * MIN_ROWS:
        return False
    return sum(1 for row in text_rows(inside) if _segments(row) >= 2) >= MIN_ROWS


def _reread_ruled(page: Any, table: Any, words: list[dict[str, Any]]) -> FoundTable:
    """A ruled table; a crowded row is replaced by its text rows under the ruled columns."""
    rows = _clean(_cells(table))
    verticals = _columns(table)
    out: list[list[str]] = []
    strategy = "lines"
    for row, cells in zip(table.rows, rows, strict=False):
        inner = None
        if row.bbox and len(verticals) > 2 and _crowded(row.bbox, words):
            inner = _text_table(page, row.bbox, verticals)
        if inner is None or len(inner.rows[0]) != len(cells):
            out.append(cells)
            continue
        strategy = "lines+text"
        out.extend(inner.rows)
    return FoundTable(_round(table.bbox), [r for r in out if any(r)], strategy)


def unplaced(tables: list[FoundTable], words: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The words inside a table's box that none of its cells holds (text in a region of the box no
    cell covers: an irregular ruled form, a note beside a grid). They go back to the page's running
    text, so no word of the page is lost. Cells are read with the same word tolerance as the page, so
    each of their words is matched (and used up) by its exact text."""
    out: list[dict[str, Any]] = []
    for table in tables:
        inside = [w for w in words if _inside(w, table.bbox)]
        if not inside:
            continue
        cells = [cell for row in table.rows for cell in row if cell]
        bag: dict[str, int] = {}
        for cell in cells:
            for token in cell.split():
                bag[token] = bag.get(token, 0) + 1
        for word in sorted(inside, key=lambda w: (w["top"], w["x0"])):
            if bag.get(word["text"], 0) > 0:
                bag[word["text"]] -= 1
            else:
                out.append(word)
    return out


def find_tables(page: Any, words: list[dict[str, Any]]) -> list[FoundTable]:
    """Every table on ``page`` (``words``: its words with ``size``), top to bottom."""
    out: list[FoundTable] = []
    if page.rects or page.lines:
        out = [_reread_ruled(page, t, words) for t in page.find_tables() if t.bbox]
        out = [t for t in out if t.rows]
    free = [w for w in words if not any(_inside(w, t.bbox) for t in out)] if out else words
    for box in _aligned_runs(free):
        table = _text_table(page, box, None)
        if table is not None:
            out.append(table)
    return sorted(out, key=lambda t: (t.bbox[1], t.bbox[0]))
