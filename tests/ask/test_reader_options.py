"""A reader entry's options are checked one way for every kind: unknown keys refused, numbers of
their type, at their bounds accepted and just past them refused, with messages naming the key."""

from __future__ import annotations

import pytest

from episteme_core.api import check_number, check_reader_options

RANGES = {"top": (1, 50, True), "weight": (0.0, 1.0, False), "threads": (1, 64, True)}
KNOWN = {"model", *RANGES}


@pytest.mark.parametrize(("raw", "expected"), [
    ({"top": 1, "weight": 0.0}, {"top": 1, "weight": 0.0}),
    ({"top": 50, "weight": 1}, {"top": 50, "weight": 1.0}),  # an integer will do for a number
    ({"model": "m"}, {}),
])
def test_numbers_at_their_bounds_are_taken(raw: dict[str, object], expected: dict[str, float]) -> None:
    values = check_reader_options(raw, KNOWN, RANGES)
    assert values == expected and all(type(values[k]) is type(expected[k]) for k in expected)


@pytest.mark.parametrize(("raw", "message"), [
    ({"top": 0}, "top must be between 1 and 50, got 0"),
    ({"top": 51}, "top must be between 1 and 50, got 51"),
    ({"weight": 1.0001}, "weight must be between 0 and 1, got 1.0001"),
    ({"weight": -0.0001}, "weight must be between 0 and 1, got -0.0001"),
    ({"top": 2.0}, "top must be an integer"),
    ({"top": True}, "top must be an integer"),
    ({"weight": False}, "weight must be a number"),
    ({"weight": "0.5"}, "weight must be a number"),
    ({"threads": None}, "threads must be an integer"),
    ({"temperature": 0.7, "topp": 1},
     "unknown key(s) temperature, topp (known: model, threads, top, weight)"),
])
def test_a_number_out_of_range_or_of_another_type_and_an_unknown_key_are_refused(
        raw: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError) as raised:
        check_reader_options(raw, KNOWN, RANGES)
    assert str(raised.value) == message


def test_a_key_whose_null_means_its_default_is_left_out() -> None:
    assert check_reader_options({"threads": None, "top": 3}, KNOWN, RANGES, none_is_default=("threads",)) == {
        "top": 3}
    with pytest.raises(ValueError, match="threads must be between 1 and 64, got 0"):
        check_reader_options({"threads": 0}, KNOWN, RANGES, none_is_default=("threads",))


def test_one_number_is_checked_alone() -> None:
    assert check_number("n", 7, 0, 7, integer=True) == 7
    with pytest.raises(ValueError, match="n must be between 0 and 7, got 8"):
        check_number("n", 8, 0, 7, integer=True)
