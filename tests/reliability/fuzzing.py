"""Fuzzing profiles and the count of inputs run (for the reliability report).

The default (fast) profile runs a few dozen to a few hundred inputs per parser in the test suite;
``EPISTEME_FUZZ=long`` (``tox -e fuzz``) runs fifty times as many. ``EPISTEME_FUZZ_COUNTS=FILE``
appends, at exit, one JSON line per fuzz test with the inputs it ran.
"""

from __future__ import annotations

import atexit
import json
import os
from collections import Counter

from hypothesis import HealthCheck, settings

LONG = os.environ.get("EPISTEME_FUZZ") == "long"
_counts: Counter[str] = Counter()


def fuzz(examples: int) -> settings:
    """Hypothesis settings for a fuzz test of ``examples`` inputs (fifty times more when long)."""
    return settings(max_examples=examples * (50 if LONG else 1), deadline=None, derandomize=not LONG,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


def ran(name: str) -> None:
    """Count one input given to the parser ``name``."""
    _counts[name] += 1


@atexit.register
def _write() -> None:
    path = os.environ.get("EPISTEME_FUZZ_COUNTS")
    if path and _counts:
        with open(path, "a", encoding="utf-8") as out:
            for name, n in sorted(_counts.items()):
                out.write(json.dumps({"parser": name, "inputs": n}) + "\n")
