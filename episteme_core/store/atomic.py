"""Atomic file writes: temp file, fsync, rename, fsync the directory; crash points for the laws.

``EPISTEME_CRASH_AT=N`` (a test hook) kills the process with SIGKILL at the Nth crash point it
reaches, so a law can prove that every step of a commit leaves the previous commit intact.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import uuid
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from functools import cache
from pathlib import Path

TEMP_SUFFIX = ".tmp"
_crash_counter = 0


def crashpoint() -> None:
    """Die here with SIGKILL if ``EPISTEME_CRASH_AT`` names this crash point's ordinal."""
    global _crash_counter
    target = os.environ.get("EPISTEME_CRASH_AT")
    if not target:
        return
    _crash_counter += 1
    if str(_crash_counter) == target:
        os.kill(os.getpid(), signal.SIGKILL)


def fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems refuse fsync on directories; the rename is still atomic
    finally:
        os.close(fd)


def temp_path_for(target: Path) -> Path:
    return target.with_name(f".{target.name}.{os.getpid()}.{uuid.uuid4().hex}{TEMP_SUFFIX}")


def is_temp_file(path: Path) -> bool:
    return path.name.startswith(".") and path.name.endswith(TEMP_SUFFIX)


class DeferredSync:
    """Many new files made durable by one ``syncfs`` instead of two fsyncs each.

    Inside ``deferred_sync(root)``, ``atomic_write`` still writes a temp file and renames it, but
    leaves durability to ``flush_pending()``, which the store calls before anything that names
    those files (a stage's ``index.json``, a log line). So the commit order is unchanged: data
    durable first, then the index. Where ``syncfs`` is unavailable, writes fsync as usual.
    """

    def __init__(self, syncfs: Callable[[int], int]) -> None:
        self.syncfs = syncfs
        self.pending: dict[int, Path] = {}  # one directory per file system written to

    def note(self, directory: Path) -> None:
        self.pending.setdefault(os.stat(directory).st_dev, directory)

    def flush(self) -> None:
        for directory in self.pending.values():
            fd = os.open(directory, os.O_RDONLY)
            try:
                if self.syncfs(fd) != 0:
                    raise OSError(ctypes_errno(), f"syncfs failed on {directory}")
            finally:
                os.close(fd)
        self.pending.clear()


_deferred: ContextVar[DeferredSync | None] = ContextVar("episteme_deferred_sync", default=None)


def ctypes_errno() -> int:
    import ctypes

    return ctypes.get_errno()


@cache
def _syncfs() -> Callable[[int], int] | None:
    """libc ``syncfs`` on Linux, else None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes
        import ctypes.util

        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        function = libc.syncfs
        function.argtypes = [ctypes.c_int]
        return function  # type: ignore[no-any-return]
    except (OSError, AttributeError):
        return None


@contextlib.contextmanager
def deferred_sync() -> Iterator[None]:
    """Batch the durability of files written in the block (see ``DeferredSync``); flush at the end."""
    syncfs = _syncfs()
    if syncfs is None or _deferred.get() is not None:
        yield
        return
    batch = DeferredSync(syncfs)
    token = _deferred.set(batch)
    try:
        yield
        batch.flush()
    finally:
        _deferred.reset(token)


def flush_pending() -> None:
    """Make every file written so far in this ``deferred_sync`` block durable."""
    batch = _deferred.get()
    if batch is not None:
        batch.flush()


def sync_file(fd: int) -> None:
    """fsync a file written for a later rename, unless durability is deferred to the batch."""
    if _deferred.get() is None:
        os.fsync(fd)


def sync_after_rename(directory: Path) -> None:
    """Make a rename into ``directory`` durable now, or at the batch's flush."""
    batch = _deferred.get()
    if batch is None:
        fsync_dir(directory)
    else:
        batch.note(directory)


def atomic_write(target: Path, data: bytes) -> None:
    """Replace ``target`` with ``data`` so that readers see the old bytes or the new, never a mix."""
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = temp_path_for(target)
    batch = _deferred.get()
    try:
        with open(temp, "xb") as handle:
            handle.write(data)
            handle.flush()
            crashpoint()
            if batch is None:
                os.fsync(handle.fileno())
        crashpoint()
        os.replace(temp, target)
        crashpoint()
        if batch is None:
            fsync_dir(target.parent)
        else:
            batch.note(target.parent)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()


def sweep_temp_files(directory: Path) -> int:
    """Remove temp files a killed writer left behind; call only while holding the writer lock."""
    removed = 0
    if not directory.exists():
        return 0
    for path in directory.rglob(f"*{TEMP_SUFFIX}"):
        if is_temp_file(path):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                removed += 1
    return removed
