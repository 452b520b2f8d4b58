"""Context runs: consecutive chunks are scored together, so a passage is found by its neighbours' words.

The words of a question are spread over the paragraphs around an answer (a chat turn and the tool
output before it, a line of dialogue and its narration, a rule and the note after it). So the
scored unit is a run of consecutive chunks, not a chunk alone:

- a record's paragraphs (books, transcripts, commits, Honcho sessions, intent) form overlapping runs
  of about ``RUN_CHARS`` characters: a run starts at a paragraph and takes the next ones while it
  holds at most ``RUN_CHARS``; the next run starts about half a run later, so each paragraph sits in
  about two runs. Runs never cross records.
- a document's chunks of one section (a section is cut into several chunks where a note or an example
  changes the normativity, or where it is long) form runs of at most ``SECTION_RUN_CHARS`` the same
  way. Runs never cross sections; windows of a long section (each over half of ``--max-chars``) stay
  alone.

A chunk longer than a run is a run of its own. The answer still names and cites each chunk (a
paragraph's ``record#n``) on its own. When overlapping runs both rank, ``query`` and ``ask`` show
them as one passage (``merge_overlapping``), so no result repeats another's text.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeVar

Key = TypeVar("Key", bound=Hashable)

RUN_CHARS = 1500
SECTION_RUN_CHARS = 3000
MIN_RUN_CHARS, MAX_RUN_CHARS = 0, 100_000  # 0: every chunk alone
SEPARATOR_CHARS = 2  # a run's chunks are shown with a blank line between them
MERGED_CHARS = 3000  # overlapping runs that both rank are joined up to this many characters


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


def plan_units(rows: list[dict[str, Any]], chars: int = RUN_CHARS,
               section_chars: int = SECTION_RUN_CHARS) -> list[tuple[int, ...]]:
    """The scored units of a shard's rows (``fields.indexed`` dicts, sorted by chunk id): the runs
    of each record and of each document section, sorted by their first row (so ties in score fall
    to the first chunk's id)."""
    groups: dict[tuple[int, str, str], list[int]] = {}
    for number, row in enumerate(rows):
        if row.get("recordId") is not None and row.get("paragraph") is not None:
            key = (0, str(row["recordId"]), "")
        else:
            key = (1, str(row.get("source")), str(row.get("sectionId")))
        groups.setdefault(key, []).append(number)
    units: list[tuple[int, ...]] = []
    for key in sorted(groups):
        members = groups[key]
        if len(members) == 1:
            units.append((members[0],))
            continue
        if key[0] == 0:
            order = sorted(members, key=lambda r: (rows[r]["paragraph"], rows[r]["partIndex"], rows[r]["id"]))
            limit = chars
        else:
            order = sorted(members, key=lambda r: (rows[r]["partIndex"], rows[r]["id"]))
            limit = section_chars
        units.extend(runs_of(order, [len(rows[r]["text"]) for r in order], limit))
    units.sort(key=lambda unit: (unit[0], len(unit)))
    return units


def merge_overlapping(passages: Sequence[Sequence[Key]], size: Callable[[Key], int],
                      cap: int) -> list[tuple[int, list[Key]]]:
    """Overlapping runs joined, best first: ``passages`` (each a run's chunk keys in reading order)
    in rank order; one that shares a chunk with an earlier kept passage adds its other chunks to it
    (before or after, as they lie) while the joined passage stays within ``cap`` characters, else it
    stands alone with only the chunks no kept passage holds. Returns (rank of the kept passage's best
    run, its chunks in reading order): no result repeats another's text."""
    if all(len(chunks) == 1 for chunks in passages) and len({c[0] for c in passages}) == len(passages):
        return [(rank, list(chunks)) for rank, chunks in enumerate(passages)]  # one chunk each, none shared
    kept: list[tuple[int, list[Key]]] = []
    chars: list[int] = []
    owner: dict[Key, int] = {}
    for rank, chunks in enumerate(passages):
        new = [c for c in chunks if c not in owner]
        if not new:
            continue
        into = next((owner[c] for c in chunks if c in owner), None)
        extra = sum(size(c) + SEPARATOR_CHARS for c in new)
        if into is None or chars[into] + extra > cap:
            for c in new:
                owner[c] = len(kept)
            kept.append((rank, new))
            chars.append(sum(size(c) for c in new) + SEPARATOR_CHARS * (len(new) - 1))
            continue
        first_shared = next(i for i, c in enumerate(chunks) if c in owner)
        before = [c for c in chunks[:first_shared] if c not in owner]
        kept[into][1][:0] = before
        kept[into][1].extend(c for c in new if c not in before)
        chars[into] += extra
        for c in new:
            owner[c] = into
    return kept
