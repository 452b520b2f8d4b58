"""The options of a reader entry in ``config.json``, checked one way for every reader kind: unknown
keys refused (a typo never falls back to a default silently), each number of its type and range.

A reader plugin declares its keys and ranges and calls ``check_reader_options``; the kernel checks its
own entries' numbers with ``check_number``. Every problem is a ``ValueError`` whose message names the
key, worded the same for every kind.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

# key -> (lowest, highest, whether only an integer will do)
NumberRanges = Mapping[str, tuple[float, float, bool]]


def check_number(key: str, value: Any, low: float, high: float, *, integer: bool) -> int | float:
    """``value`` as option ``key``: a number (a bool is not one), an integer where ``integer``, within
    ``[low, high]``; ``ValueError`` naming the key otherwise."""
    wrong_type = isinstance(value, bool) or not isinstance(value, int | float)
    if wrong_type or (integer and not isinstance(value, int)):
        raise ValueError(f"{key} must be {'an integer' if integer else 'a number'}")
    if not low <= value <= high:
        raise ValueError(f"{key} must be between {low:g} and {high:g}, got {value:g}")
    return int(value) if integer else float(value)


def check_reader_options(raw: Mapping[str, Any], known: Collection[str], ranges: NumberRanges, *,
                         none_is_default: Collection[str] = ()) -> dict[str, int | float]:
    """The numbers of a reader entry's keys ``raw``: ``ValueError`` for a key not in ``known`` (all of
    them named), else each key of ``ranges`` that ``raw`` holds, checked (``check_number``). A key in
    ``none_is_default`` may be null, which leaves it out (its default holds)."""
    unknown = sorted(set(raw) - set(known))
    if unknown:
        raise ValueError(f"unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    values: dict[str, int | float] = {}
    for key, (low, high, integer) in ranges.items():
        if key not in raw or (key in none_is_default and raw[key] is None):
            continue
        values[key] = check_number(key, raw[key], low, high, integer=integer)
    return values
