"""The append-only log: one whole JSON line per observation, written with one call and fsync'd.

The one exception is ``forget``, which rewrites the lines of what it forgets (``redact``) and appends
its tombstone, in one atomic replace of the file."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from episteme_core.records.canonical import canonical_bytes
from episteme_core.records.convert import unstructure
from episteme_core.store.atomic import atomic_write, flush_pending
from episteme_core.store.faults import fault

if TYPE_CHECKING:  # a reader's freshness check (``captured_kinds_after``) creates no record class
    from episteme_core.records.storage import LogEntry, Tombstone


def append_line(path: Path, data: bytes) -> None:
    """Append one whole line with a single ``write`` on an O_APPEND descriptor, then fsync.

    Files the line may name (written under ``deferred_sync``) are made durable first.
    """
    flush_pending()
    path.parent.mkdir(parents=True, exist_ok=True)
    fault("before-log-append")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    fault("after-log-append")


class Log:
    """``log.jsonl`` of a home; nothing is ever rewritten."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def append(self, entry: LogEntry) -> None:
        append_line(self.path, canonical_bytes(unstructure(entry)))

    def entries(self) -> Iterator[LogEntry | Tombstone]:
        """Every complete, valid line (an observation, or a tombstone ``forget`` left); a torn last
        line (a crash mid-append) is not an entry."""
        from episteme_core.store.tombstones import iter_log

        for _, entry in iter_log(self.path):
            yield entry

    def redact(self, lines: dict[int, LogEntry], tombstone: Tombstone) -> None:
        """``forget``'s one rewrite: each numbered line (1-based) replaced by the entry given, and the
        tombstone appended, in one atomic replace (a reader sees the old log or the new, whole).
        Call under the writer lock; a torn last line is dropped."""
        data = self.path.read_bytes() if self.path.exists() else b""
        whole = data[: data.rfind(b"\n") + 1].split(b"\n")[:-1]
        for number, entry in lines.items():
            if not 1 <= number <= len(whole):
                raise ValueError(f"log line {number} is not in {self.path}")
            whole[number - 1] = canonical_bytes(unstructure(entry))[:-1]
        body = b"".join(line + b"\n" for line in whole) + canonical_bytes(unstructure(tombstone))
        flush_pending()
        fault("before-log-append")
        atomic_write(self.path, body, kind="file-write")
        fault("after-log-append")

    def captured_kinds_after(self, offset: int) -> set[str] | None:
        """Capture kinds of the ``captured`` lines past byte ``offset``; None when the log is shorter.

        Derived stages record the log's size when they were built; captures past it make them stale.
        Only whole lines count, and a line that is not JSON is skipped (``verify`` reports it).
        """
        try:
            with open(self.path, "rb") as handle:
                size = handle.seek(0, 2)
                if size < offset:
                    return None
                handle.seek(offset)
                tail = handle.read()
        except FileNotFoundError:
            return None if offset > 0 else set()
        kinds: set[str] = set()
        for line in tail.split(b"\n")[:-1]:
            if b'"captured"' not in line:
                continue
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict) and entry.get("status") == "captured":
                kinds.add(str(entry.get("source")))
        return kinds

    def position(self) -> int:
        """How many whole lines the log holds: the position a derived stage records."""
        if not self.path.exists():
            return 0
        with open(self.path, "rb") as handle:
            return sum(1 for line in handle if line.endswith(b"\n"))
