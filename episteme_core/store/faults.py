"""Fault injection: kill the process with SIGKILL at a named write step, so tests can prove that
every step of every writing command leaves the previous commit intact.

Every write the store makes passes through one of the points below (``fault(point)``). A test sets

    EPISTEME_FAULT=after-blob-write:3

and the process kills itself (``SIGKILL``: no cleanup, no ``finally``) the third time it reaches
``after-blob-write``. Several faults may be given, separated by commas; the first one reached wins.
``EPISTEME_FAULT_TRACE=FILE`` appends the name of every point reached to FILE (one per line), which
is how the crash-matrix test learns which steps a command takes and how often.

``EPISTEME_CRASH_AT=N`` (the older hook the laws use) kills at the Nth point of any name.

Points (in the order a commit reaches them):

| point | where |
|---|---|
| ``temp-written`` | a temp file holds the new bytes, not yet renamed into place (any atomic write) |
| ``before-blob-write`` / ``after-blob-write`` | a blob under ``blobs/sha256/xx/`` is renamed into place |
| ``before-object-write`` / ``after-object-write`` | a stage object under ``<stage>/objects/xx/`` |
| ``before-log-append`` / ``after-log-append`` | lines appended to ``log.jsonl`` |
| ``before-index-write`` / ``after-index-write`` | a stage's ``index.json`` replaced: the commit itself |
| ``after-prune-one`` | the first object a new commit no longer names has been deleted |
| ``before-file-write`` / ``after-file-write`` | any other file written atomically (an export) |

Without either variable set, a point costs one dictionary lookup.
"""

from __future__ import annotations

import os
import signal

POINTS = (
    "temp-written",
    "before-blob-write",
    "after-blob-write",
    "before-object-write",
    "after-object-write",
    "before-log-append",
    "after-log-append",
    "before-index-write",
    "after-index-write",
    "after-prune-one",
    "before-file-write",
    "after-file-write",
)

_counts: dict[str, int] = {}
_ordinal = 0


def _targets(spec: str) -> dict[str, int]:
    """``after-blob-write:3,before-index-write`` -> {point: occurrence}; occurrence 1 by default."""
    targets: dict[str, int] = {}
    for item in spec.split(","):
        name, _, count = item.strip().partition(":")
        if name:
            targets[name] = int(count) if count.strip().isdigit() else 1
    return targets


def fault(point: str) -> None:
    """A named write step: die here when ``EPISTEME_FAULT`` (or ``EPISTEME_CRASH_AT``) says so."""
    environ = os.environ
    spec = environ.get("EPISTEME_FAULT")
    crash_at = environ.get("EPISTEME_CRASH_AT")
    trace = environ.get("EPISTEME_FAULT_TRACE")
    if not (spec or crash_at or trace):
        return
    global _ordinal
    _ordinal += 1
    seen = _counts[point] = _counts.get(point, 0) + 1
    if trace:
        with open(trace, "a", encoding="utf-8") as handle:
            handle.write(point + "\n")
    if crash_at and str(_ordinal) == crash_at.strip():
        _die()
    if spec and _targets(spec).get(point) == seen:
        _die()


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def reset() -> None:
    """Forget the counts (for a test that runs several commands in one process)."""
    global _ordinal
    _counts.clear()
    _ordinal = 0


__all__ = ["POINTS", "fault", "reset"]
