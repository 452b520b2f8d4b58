"""Fuzzing profiles and the count of inputs each fuzzed parser ran, for the kernel's tests and plugins'.

The default (fast) profile runs a few dozen to a few hundred inputs per parser in a test suite;
``EPISTEME_FUZZ=long`` (``tox -e fuzz``) runs fifty times as many. ``EPISTEME_FUZZ_COUNTS=FILE``
appends, at exit, one JSON line per parser with the inputs it ran (``{"parser", "inputs"}``): the
reliability report sums them. Needs hypothesis (the ``test`` extra).
"""

from __future__ import annotations

import atexit
import json
import os
from collections import Counter
from typing import Any

LONG = os.environ.get("EPISTEME_FUZZ") == "long"
_counts: Counter[str] = Counter()


def fuzz_settings(examples: int) -> Any:
    """Hypothesis settings for a fuzz test of ``examples`` inputs (fifty times more when long)."""
    from hypothesis import HealthCheck, settings

    return settings(max_examples=examples * (50 if LONG else 1), deadline=None, derandomize=not LONG,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


def count_input(parser: str) -> None:
    """Count one input given to ``parser`` (written to ``EPISTEME_FUZZ_COUNTS`` at exit)."""
    _counts[parser] += 1


@atexit.register
def _write_counts() -> None:
    path = os.environ.get("EPISTEME_FUZZ_COUNTS")
    if path and _counts:
        with open(path, "a", encoding="utf-8") as out:
            for parser, inputs in sorted(_counts.items()):
                out.write(json.dumps({"parser": parser, "inputs": inputs}) + "\n")
