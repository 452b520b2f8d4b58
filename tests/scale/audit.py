"""What a command run in this process opened or listed under a folder, from the interpreter's
audit hooks (one hook for the whole test session: hooks cannot be removed)."""

from __future__ import annotations

import sys
from pathlib import Path

from episteme_core.cli.main import run

_seen: list[tuple[str, str]] = []
_watching: list[str] = []  # the folder whose opens and listings are recorded (empty: none)
_EVENTS = ("open", "os.scandir", "os.listdir")


def _audit(event: str, args: tuple[object, ...]) -> None:
    if not _watching or event not in _EVENTS:
        return
    where = args[0]
    if isinstance(where, bytes):
        where = where.decode()
    if isinstance(where, str) and where.startswith(_watching[0]):
        _seen.append((event, where))


sys.addaudithook(_audit)  # it records only while _watching is set


def touched_while(folder: Path, args: list[str]) -> list[tuple[str, str]]:
    """Run ``episteme ARGS`` in this process (it must succeed); the distinct (event, path) pairs it
    opened (``open``) or listed (``os.scandir``, ``os.listdir``) under ``folder``, sorted."""
    _seen.clear()
    _watching[:] = [str(folder)]
    try:
        code = run(args)
    finally:
        _watching.clear()
    assert code == 0
    return sorted(set(_seen))


def opened_while(folder: Path, args: list[str]) -> list[str]:
    """The files under ``folder`` that ``episteme ARGS`` opened, sorted."""
    return sorted({path for event, path in touched_while(folder, args) if event == "open"})
