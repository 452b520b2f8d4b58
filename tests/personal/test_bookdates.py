"""A book's own date from its Project Gutenberg header or sidecar, read in one pass: the written
forms headers use, the original publication year before the release date, the value bound, and no
quadratic backtracking on a long line of spaces."""

from __future__ import annotations

import time

import pytest

from episteme_core.personal.bookdates import (
    MAX_VALUE_CHARS,
    gutenberg_date,
    header_values,
    parse_date,
    sidecar_date,
)


@pytest.mark.parametrize(("text", "parts"), [
    ("June 1, 1998", (1998, 6, 1)),
    ("July 1, 2001 ", (2001, 7, 1)),
    ("9 June 2008", (2008, 6, 9)),
    ("May, 1994", (1994, 5, None)),
    ("Sept 1999", (1999, 9, None)),
    ("2008-06-09", (2008, 6, 9)),
    ("1813", (1813, None, None)),
    ("London: T. Egerton, 1813", (1813, None, None)),
    ("February 30, 2001", (2001, 2, None)),  # no such day: the month stands
    ("no date here", None),
    ("", None),
])
def test_written_dates(text: str, parts: tuple[int, int | None, int | None] | None) -> None:
    assert parse_date(text) == parts


def test_the_header_lines_and_which_date_wins() -> None:
    header = ("Title: Pride and Prejudice\nAuthor: Jane Austen\n\n"
              "Release date: June 1, 1998 [eBook #1342]\n"
              "                Most recently updated: April 14, 2023\n"
              "Original publication: London: T. Egerton, 1813\n")
    assert header_values(header) == {"releaseDate": "June 1, 1998",
                                     "originalPublication": "London: T. Egerton, 1813"}
    found = gutenberg_date(header)
    assert found is not None and (found.time, found.precision, found.source) == (
        "1813-01-01T00:00:00Z", "year", "originalPublication")
    released = gutenberg_date("Release Date: March, 1994  [EBook #42]\n")
    assert released is not None and (released.time, released.precision) == ("1994-03-01T00:00:00Z", "month")
    assert gutenberg_date("Title: no dates\n") is None
    assert gutenberg_date("Posting Date: August 22, 2008 [EBook #1]\n").time == "2008-08-22T00:00:00Z"


def test_a_value_at_the_bound_is_read_and_one_past_it_is_not() -> None:
    at = "x" * (MAX_VALUE_CHARS - 4) + "1998"
    assert len(at) == MAX_VALUE_CHARS and parse_date(at) == (1998, None, None)
    assert parse_date("x" + at) is None
    assert header_values("Release Date: " + "y" * 500 + " 1998")["releaseDate"] == "y" * MAX_VALUE_CHARS


def test_a_long_line_of_spaces_is_read_in_linear_time() -> None:
    """The regular expression this replaces backtracked quadratically on ``Release Date: x<spaces>y``.
    Against a hang only: a million spaces take milliseconds here; the bound is a thousand times that."""
    header = "Release Date: x" + " " * 1_000_000 + "y\n"
    started = time.monotonic()
    assert gutenberg_date(header) is None
    assert time.monotonic() - started < 30


def test_sidecar_values() -> None:
    assert sidecar_date("1851-10-18").time == "1851-10-18T00:00:00Z"  # type: ignore[union-attr]
    assert sidecar_date("1851-10-18T12:00:00+02:00").time == "1851-10-18T10:00:00Z"  # type: ignore[union-attr]
    assert sidecar_date("October 18, 1851").precision == "day"  # type: ignore[union-attr]
    for bad in (1851, None, "", "soon"):
        assert sidecar_date(bad) is None
