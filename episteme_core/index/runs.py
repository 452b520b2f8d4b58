"""Context runs: a record's paragraphs are scored in runs of consecutive paragraphs, not one by one.

The words of a question are spread over the paragraphs around an answer (a chat turn and the tool
output before it, a line of dialogue and its narration), so a record's paragraphs (books,
transcripts, commits, Honcho sessions, intent) are indexed as overlapping runs of about
``RUN_CHARS`` characters: a run starts at a paragraph and takes the next ones until it holds
``RUN_CHARS``; the next run starts about half a run later, so each paragraph sits in about two runs
and is found by the words of its neighbours. A paragraph longer than a run is a run of its own.
Chunks that are not paragraphs of a record are scored alone. Runs never cross records.
"""

from __future__ import annotations

from typing import Any

RUN_CHARS = 1500
MIN_RUN_CHARS, MAX_RUN_CHARS = 0, 100_000  # 0: every paragraph alone (no runs)
SEPARATOR_CHARS = 2  # runs are shown with a blank line between paragraphs


def runs_of(order: list[int], sizes: list[int], chars: int) -> list[tuple[int, ...]]:
    """Overlapping runs over ``order`` (row numbers in reading order, ``sizes`` their lengths)."""
    if chars <= 0:
        return [(row,) for row in order]
    runs: list[tuple[int, ...]] = []
    start, count = 0, len(order)
    while start < count:
        end, total = start, 0
        while end < count and (end == start or total + sizes[end] <= chars):
            total += sizes[end] + SEPARATOR_CHARS
            end += 1
        runs.append(tuple(order[start:end]))
        if end >= count:
            break
        step, advanced = total // 2, 0
        following = start
        while following < end - 1 and advanced + sizes[following] < step:
            advanced += sizes[following] + SEPARATOR_CHARS
            following += 1
        start = max(following, start + 1)
    return runs


def plan_units(rows: list[dict[str, Any]], chars: int = RUN_CHARS) -> list[tuple[int, ...]]:
    """The scored units of a shard's rows (``fields.indexed`` dicts, sorted by chunk id): one per
    chunk that is not a record paragraph, and the runs of each record's paragraphs; sorted by their
    first row, so ties in score fall to the first chunk's id."""
    units: list[tuple[int, ...]] = []
    records: dict[str, list[int]] = {}
    for number, row in enumerate(rows):
        if row.get("recordId") is not None and row.get("paragraph") is not None:
            records.setdefault(row["recordId"], []).append(number)
        else:
            units.append((number,))
    for record in sorted(records):
        order = sorted(records[record], key=lambda r: (rows[r]["paragraph"], rows[r]["partIndex"], rows[r]["id"]))
        units.extend(runs_of(order, [len(rows[r]["text"]) for r in order], chars))
    units.sort(key=lambda unit: (unit[0], len(unit)))
    return units
