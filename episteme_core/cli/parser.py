"""argparse, made to raise INVALID_USAGE (with a hint) instead of exiting, plus ranged options."""

from __future__ import annotations

import argparse
import os
import re
import sys
from typing import Any, NoReturn

from episteme_core.errors import EpistemeError


def terminal_columns() -> int:
    """``shutil.get_terminal_size().columns`` without importing shutil (and with it bz2, lzma and
    zlib): ``$COLUMNS``, else the terminal's width, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class ArgumentParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are ``INVALID_USAGE`` with a "did you mean" hint."""

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse makes a formatter for every option it adds; its own finds the width with shutil
        return self.formatter_class(prog=self.prog, width=terminal_columns() - 2)  # type: ignore[call-arg]

    def error(self, message: str) -> NoReturn:
        hint = f"Run '{self.prog} --help'."
        suggestion = self._suggest(message)
        if suggestion:
            hint = f"Did you mean '{suggestion}'? " + hint
        raise EpistemeError("INVALID_USAGE", message, hint=hint)

    def _suggest(self, message: str) -> str | None:
        unknown = re.search(r"unrecognized arguments: (\S+)", message)
        if unknown:
            word = unknown.group(1).split("=", 1)[0]
            options = [s for a in self._actions for s in a.option_strings]
            for action in self._actions:
                if isinstance(action, argparse._SubParsersAction):
                    options.extend(action.choices)
            return _closest(word, options)
        choice = re.search(r"invalid choice: '([^']*)'", message)
        if choice:
            for action in self._actions:
                if isinstance(action, argparse._SubParsersAction):
                    return _closest(choice.group(1), list(action.choices))
        return None


def _closest(word: str, candidates: list[str]) -> str | None:
    import difflib

    matches = difflib.get_close_matches(word, candidates, n=1, cutoff=0.6)
    return matches[0] if matches else None


def int_range(low: int, high: int) -> Any:
    """An argparse type accepting integers in [low, high]; anything else is INVALID_USAGE."""

    def parse(text: str) -> int:
        try:
            value = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is not between {low} and {high}")
        return value

    parse.__name__ = "integer"
    return parse


def float_range(low: float, high: float) -> Any:
    """An argparse type accepting numbers in [low, high] (no NaN, no infinity); anything else is
    INVALID_USAGE naming the range."""
    import math

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if math.isnan(value) or not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text} is not between {low:g} and {high:g}")
        return value

    parse.__name__ = "number"
    return parse


def add_float_option(
    parser: argparse.ArgumentParser,
    flag: str,
    *,
    default: float | None,
    low: float,
    high: float,
    help: str,
    metavar: str = "X",
) -> None:
    """Add a number option whose default and range appear in ``--help``."""
    shown = "none" if default is None else f"{default:g}"
    parser.add_argument(flag, type=float_range(low, high), default=default, metavar=metavar,
                        help=f"{help} (default {shown}; {low:g}–{high:g})")


def add_int_option(
    parser: argparse.ArgumentParser,
    flag: str,
    *,
    default: int,
    low: int,
    high: int,
    help: str,
) -> None:
    """Add an integer option whose default and range appear in ``--help``."""
    parser.add_argument(
        flag,
        type=int_range(low, high),
        default=default,
        metavar="N",
        help=f"{help} (default {default}; {low}–{high})",
    )
