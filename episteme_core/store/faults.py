"""Fault injection: kill the process with SIGKILL at a named write step, so tests can prove that
every step of every writing command leaves the previous commit intact.

Every write the store makes passes through one of the points below (``fault(point)``). A test sets

    EPISTEME_FAULT=after-blob-write:3

and the process kills itself (``SIGKILL``: no cleanup, no ``finally``) the third time it reaches
``after-blob-write``. Several faults may be given, separated by commas; the first one reached wins.
``EPISTEME_FAULT_TRACE=FILE`` appends the name of every point reached to FILE (one per line), which
is how the crash-matrix test learns which steps a command takes and how often.

``EPISTEME_CRASH_AT=N`` (the older hook the laws use) kills at the Nth point of any name.

A command whose stage runs in worker processes (``episteme_core.executor``) shares its counts with
them (``share``/``join``): the Nth point is the Nth the command reaches in any of its processes, and
a worker that dies there takes the command's process with it, as a kill of a single process would.

Points (in the order a commit reaches them):

| point | where |
|---|---|
| ``temp-written`` | a temp file holds the new bytes, not yet renamed into place (any atomic write) |
| ``before-blob-write`` / ``after-blob-write`` | a blob under ``blobs/sha256/xx/`` is renamed into place |
| ``before-object-write`` / ``after-object-write`` | a stage object under ``<stage>/objects/xx/`` |
| ``before-bucket-write`` / ``after-bucket-write`` | a bucket of a large stage under ``<stage>/buckets/`` |
| ``before-log-append`` / ``after-log-append`` | lines appended to ``log.jsonl`` |
| ``before-index-write`` / ``after-index-write`` | a stage's ``index.json`` replaced: the commit itself |
| ``after-bucket-prune-one`` | the first bucket a new commit no longer names has been deleted |
| ``after-prune-one`` | the first object a new commit no longer names has been deleted |
| ``after-blob-delete-one`` | the first blob nothing names any more has been deleted (``forget``, ``gc``) |
| ``before-file-write`` / ``after-file-write`` | any other file written atomically (an export) |

Without either variable set, a point costs one dictionary lookup.

Start-up has signal points instead (``signal_at``): ``EPISTEME_SIGNAL_AT=<point>[@SIGINT]`` makes the
process send itself SIGTERM (or SIGINT) when it reaches that step of start-up (``start``, before the
first instruction of the CLI's run; ``plugin:<name>`` before a plugin is imported; ``hook:<name>``
before a hook's implementations register; ``plugins-loaded``; ``parsed``; ``command``, just before
the command runs), so a test can prove that a cancellation at any moment of start-up is exact.
``EPISTEME_SIGNAL_TRACE=FILE`` appends the name of every start-up point reached to FILE.
"""

from __future__ import annotations

import json
import os
import signal
from typing import Any

POINTS = (
    "temp-written",
    "before-blob-write",
    "after-blob-write",
    "before-object-write",
    "after-object-write",
    "before-bucket-write",
    "after-bucket-write",
    "before-log-append",
    "after-log-append",
    "before-index-write",
    "after-index-write",
    "after-bucket-prune-one",
    "after-prune-one",
    "after-blob-delete-one",
    "before-file-write",
    "after-file-write",
)

_counts: dict[str, int] = {}
_ordinal = 0
_shared: str | None = None  # a file holding the counts every process of the command shares
_command: int | None = None  # in a worker: the command's process, killed with the worker


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
    if _shared is not None:
        ordinal, seen = _count_shared(point)
    else:
        _ordinal += 1
        ordinal, seen = _ordinal, _counts.setdefault(point, 0) + 1
        _counts[point] = seen
    if trace:
        with open(trace, "a", encoding="utf-8") as handle:
            handle.write(point + "\n")
    if crash_at and str(ordinal) == crash_at.strip():
        _die()
    if spec and _targets(spec).get(point) == seen:
        _die()


def signal_at(point: str) -> None:
    """A named step of start-up: send this process the signal ``EPISTEME_SIGNAL_AT`` names for it
    (the handler runs as soon as ``os.kill`` returns, so the signal lands exactly here)."""
    environ = os.environ
    spec = environ.get("EPISTEME_SIGNAL_AT")
    trace = environ.get("EPISTEME_SIGNAL_TRACE")
    if not (spec or trace):
        return
    if trace:
        with open(trace, "a", encoding="utf-8") as handle:
            handle.write(point + "\n")
    for item in (spec or "").split(","):
        name, _, which = item.strip().partition("@")
        if name == point:
            os.kill(os.getpid(), signal.SIGINT if which.strip().upper() == "SIGINT" else signal.SIGTERM)


def _die() -> None:
    if _command is not None and _command != os.getpid():
        os.kill(_command, signal.SIGKILL)  # the command dies with its worker, as if it were one process
    os.kill(os.getpid(), signal.SIGKILL)


def _count_shared(point: str) -> tuple[int, int]:
    """Count ``point`` in the shared file, under an exclusive lock: (ordinal, times seen)."""
    import fcntl

    assert _shared is not None
    with open(_shared, "r+", encoding="utf-8") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        state = json.loads(handle.read() or "{}")
        counts = state.setdefault("counts", {})
        counts[point] = seen = int(counts.get(point, 0)) + 1
        state["ordinal"] = ordinal = int(state.get("ordinal", 0)) + 1
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps(state))
        handle.flush()
    return ordinal, seen


def share() -> dict[str, Any] | None:
    """What a worker process needs (``join``) to count points with this command; None when no fault
    is asked for. The counts so far move to a shared file until ``unshare``."""
    global _shared
    if not (os.environ.get("EPISTEME_FAULT") or os.environ.get("EPISTEME_CRASH_AT")):
        return None
    if _shared is None:
        import tempfile

        fd, path = tempfile.mkstemp(prefix="episteme-faults-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(json.dumps({"counts": _counts, "ordinal": _ordinal}))
        _shared = path
    return {"path": _shared, "command": os.getpid()}


def join(state: dict[str, Any] | None) -> None:
    """In a worker process: count points in the command's shared file and die with the command."""
    global _shared, _command
    if state is not None:
        _shared, _command = str(state["path"]), int(state["command"])


def unshare() -> None:
    """In the command's process, once its workers stopped: take the shared counts back."""
    global _shared, _ordinal
    if _shared is None or _command is not None:
        return
    path, _shared = _shared, None
    try:
        with open(path, encoding="utf-8") as handle:
            state = json.loads(handle.read() or "{}")
        _counts.clear()
        _counts.update({str(k): int(v) for k, v in state.get("counts", {}).items()})
        _ordinal = int(state.get("ordinal", _ordinal))
    finally:
        os.unlink(path)


def reset() -> None:
    """Forget the counts (for a test that runs several commands in one process)."""
    global _ordinal, _shared
    _counts.clear()
    _ordinal = 0
    if _shared is not None and _command is None:
        os.unlink(_shared)
    _shared = None


__all__ = ["POINTS", "fault", "join", "reset", "share", "signal_at", "unshare"]
