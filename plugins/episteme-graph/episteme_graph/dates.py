"""The graph's flexible dates (``2024``, ``2024-12``, ``2024-12-31``, ``2024-Q4``, ``FY2024``, ``A/B``)
as day ranges, so months, days and intervals can be checked and compared."""

from __future__ import annotations

import re

from episteme_graph.schema import days_in_month

_PART = re.compile(r"^(?:FY(\d{4})|(\d{4})(?:-(?:Q([1-4])|(\d{2})(?:-(\d{2}))?))?)$")
Day = tuple[int, int, int]


def part_range(text: str) -> tuple[Day, Day] | str | None:
    """The first and last day of one date part; a message when it names no real day; None when it
    does not have the pattern at all (the schema reports that)."""
    match = _PART.match(text)
    if not match:
        return None
    fiscal, year_text, quarter, month_text, day_text = match.groups()
    year = int(fiscal or year_text)
    if quarter:
        first = (int(quarter) - 1) * 3 + 1
        return (year, first, 1), (year, first + 2, days_in_month(year, first + 2))
    if month_text is None:
        return (year, 1, 1), (year, 12, 31)
    month = int(month_text)
    if not 1 <= month <= 12:
        return f"month {month_text} does not exist"
    if day_text is None:
        return (year, month, 1), (year, month, days_in_month(year, month))
    day = int(day_text)
    if not 1 <= day <= days_in_month(year, month):
        return f"day {day_text} does not exist in {year}-{month_text}"
    return (year, month, day), (year, month, day)


def date_range(text: str) -> tuple[Day, Day] | str | None:
    """``part_range`` over a date or an interval ``A/B`` (which must not end before it starts)."""
    parts = text.split("/")
    if len(parts) > 2:
        return None
    ranges = []
    for part in parts:
        found = part_range(part)
        if found is None or isinstance(found, str):
            return found
        ranges.append(found)
    if len(ranges) == 2:
        if ranges[1][1] < ranges[0][0]:
            return "the interval ends before it starts"
        return ranges[0][0], ranges[1][1]
    return ranges[0]
