"""A book's own date: its Project Gutenberg header's original publication or release date, read in
one pass over the header's lines (no regular expression that can backtrack), or a sidecar's.

``Original publication: London: T. Egerton, 1813`` gives 1813 (the year the text was published),
which a header's ``Release date: June 1, 1998 [eBook #1342]`` (the day the e-book was posted) only
stands in for. A date is returned as UTC midnight of its first day with its precision (``day``,
``month`` or ``year``), so ``--since`` and the time order compare it with any other time.
"""

from __future__ import annotations

from typing import Any

import attrs

MONTHS = {name: number for number, names in enumerate((
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
    ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"),
    ("october", "oct"), ("november", "nov"), ("december", "dec")), start=1) for name in names}
MAX_VALUE_CHARS = 200  # a header value longer than this is not a date line
MIN_YEAR, MAX_YEAR = 1, 9999
RELEASE = ("release date", "posting date", "first posted", "posted")
ORIGINAL = ("original publication", "originally published", "first published", "published")


@attrs.frozen
class BookDate:
    """A date found for a book: ISO time (UTC midnight), how precise, and where it came from."""

    time: str
    precision: str  # day | month | year
    source: str  # sidecar | frontMatter | originalPublication | releaseDate

    def metadata(self) -> dict[str, Any]:
        return {"timeFrom": self.source, "timePrecision": self.precision}


def _tokens(text: str) -> list[str]:
    """Runs of letters or of digits, lowercased: one pass."""
    found: list[str] = []
    current: list[str] = []
    kind = ""
    for char in text:
        now = "d" if char.isascii() and char.isdigit() else "a" if char.isalpha() else ""
        if now != kind and current:
            found.append("".join(current))
            current = []
        if now:
            current.append(char.lower())
        kind = now
    if current:
        found.append("".join(current))
    return found


def parse_date(text: str) -> tuple[int, int | None, int | None] | None:
    """(year, month, day) of a written date (``June 9, 2008``, ``9 June 2008``, ``May, 1994``,
    ``2008-06-09``, ``1813``); the last four-digit year counts; None without one. Linear."""
    if len(text) > MAX_VALUE_CHARS:
        return None
    tokens = _tokens(text)
    years = [i for i, t in enumerate(tokens)
             if len(t) == 4 and t.isdigit() and MIN_YEAR <= int(t) <= MAX_YEAR]
    if not years:
        return None
    at = years[-1]
    year = int(tokens[at])
    month = day = None
    if at + 2 < len(tokens) and tokens[at + 1].isdigit() and tokens[at + 2].isdigit():  # 2008-06-09
        m, d = int(tokens[at + 1]), int(tokens[at + 2])
        if 1 <= m <= 12 and 1 <= d <= 31 and len(tokens[at + 1]) <= 2 and len(tokens[at + 2]) <= 2:
            month, day = m, d
    if month is None:
        for i in range(max(0, at - 3), at):
            if tokens[i] in MONTHS:
                month = MONTHS[tokens[i]]
                around = [t for t in (tokens[i - 1] if i > 0 else "", tokens[i + 1] if i + 1 < at else "")
                          if t.isdigit() and len(t) <= 2 and 1 <= int(t) <= 31]
                day = int(around[0]) if around else None
    if month is not None and day is not None:
        import calendar

        if day > calendar.monthrange(year, month)[1]:
            day = None
    return year, month, day


def as_time(parts: tuple[int, int | None, int | None]) -> tuple[str, str]:
    """The ISO time (UTC midnight of the first day the date covers) and its precision."""
    year, month, day = parts
    precision = "day" if day is not None else "month" if month is not None else "year"
    return f"{year:04d}-{month or 1:02d}-{day or 1:02d}T00:00:00Z", precision


def header_values(header: str) -> dict[str, str]:
    """``Name: value`` lines of a Gutenberg header whose name is a release or publication date (the
    first of each kind), the ``[eBook #N]`` tail cut off. One pass over the lines."""
    found: dict[str, str] = {}
    for line in header.split("\n"):
        name, colon, value = line.partition(":")
        if not colon or len(name) > 40:
            continue
        key = " ".join(name.split()).lower()
        kind = "releaseDate" if key in RELEASE else "originalPublication" if key in ORIGINAL else None
        if kind is None or kind in found:
            continue
        cut = value.find("[")
        value = (value if cut < 0 else value[:cut]).strip()
        if value:
            found[kind] = value[:MAX_VALUE_CHARS]
    return found


def gutenberg_date(header: str) -> BookDate | None:
    """The original publication year where the header gives one, else its release date."""
    values = header_values(header)
    for kind in ("originalPublication", "releaseDate"):
        parts = parse_date(values.get(kind, ""))
        if parts is not None:
            if kind == "originalPublication":
                parts = (parts[0], None, None)  # the year: a place and a printer may come with it
            time, precision = as_time(parts)
            return BookDate(time, precision, kind)
    return None


def sidecar_date(value: Any) -> BookDate | None:
    """The ``date`` of a ``BOOK.meta.json`` sidecar: an ISO date or time, or a written date."""
    from episteme_core.personal.model import parse_time

    if not isinstance(value, str) or not value.strip():
        return None
    exact = parse_time(value)
    if exact is not None:
        return BookDate(exact, "day" if len(value.strip()) == 10 else "time", "sidecar")
    parts = parse_date(value)
    if parts is None:
        return None
    time, precision = as_time(parts)
    return BookDate(time, precision, "sidecar")


__all__ = ["BookDate", "as_time", "gutenberg_date", "header_values", "parse_date", "sidecar_date"]
