"""Atomic file writes: temp file, fsync, rename, fsync the directory; the sweep of temp files.

Every write passes named fault points (``store.faults``): ``EPISTEME_FAULT=after-blob-write:3``
kills the process there, so a test can prove that every step leaves the previous commit intact.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from functools import cache
from pathlib import Path

from episteme_core.store.faults import fault

TEMP_SUFFIX = ".tmp"
# What an atomic write stores, naming its fault points (``before-<kind>`` and ``after-<kind>``).
WRITE_KINDS = ("blob-write", "object-write", "bucket-write", "index-write", "file-write")


def crashpoint(point: str = "after-log-append") -> None:
    """A fault point (see ``store.faults``); kept under this name for older callers."""
    fault(point)


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
    import uuid  # a writer's: readers never name a temp file

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

        # the process's own symbols (libc among them), not ctypes.util.find_library: that runs
        # `ldconfig -p` in a child process, milliseconds and a fork in every writing command
        libc = ctypes.CDLL(None, use_errno=True)
        function = libc.syncfs
        function.argtypes = [ctypes.c_int]
        return function  # type: ignore[no-any-return]
    except (OSError, AttributeError):
        return None


@contextlib.contextmanager
def deferred_sync(*, flush: bool = True) -> Iterator[None]:
    """Batch the durability of files written in the block (see ``DeferredSync``); flush at the end.

    ``flush=False`` leaves the flush to another process on the same machine: a worker of a command
    whose own batch ``syncfs`` will make the worker's files durable before its commit names them.
    """
    syncfs = _syncfs()
    if syncfs is None or _deferred.get() is not None:
        yield
        return
    batch = DeferredSync(syncfs)
    token = _deferred.set(batch)
    try:
        yield
        if flush:
            batch.flush()
    finally:
        _deferred.reset(token)


def syncing_later() -> bool:
    """True inside a ``deferred_sync`` block: files are made durable by a later ``flush_pending``."""
    return _deferred.get() is not None


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


def atomic_write(target: Path, data: bytes, kind: str = "file-write") -> None:
    """Replace ``target`` with ``data`` so that readers see the old bytes or the new, never a mix.

    ``kind`` (one of ``WRITE_KINDS``) names the fault points passed on the way.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = temp_path_for(target)
    batch = _deferred.get()
    try:
        with open(temp, "xb") as handle:
            handle.write(data)
            handle.flush()
            fault("temp-written")
            if batch is None:
                os.fsync(handle.fileno())
        _publish(temp, target, kind, batch)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()


def _publish(temp: Path, target: Path, kind: str, batch: DeferredSync | None) -> None:
    """Rename the written, flushed ``temp`` to ``target`` between the fault points of ``kind``, then
    make the rename durable: the folder fsynced now, or noted in the deferred ``batch``."""
    fault(f"before-{kind}")
    os.replace(temp, target)
    fault(f"after-{kind}")
    if batch is None:
        fsync_dir(target.parent)
    else:
        batch.note(target.parent)


def write_addressed(
    directory: Path, pieces: Iterable[bytes | memoryview], suffix: str = "", kind: str = "object-write"
) -> tuple[str, int]:
    """Store the pieces joined as ``directory/ab/<sha256><suffix>`` (once), hashing and writing each
    as it comes: a temp file in ``directory``, fsync, rename, fsync the folder (as ``atomic_write``,
    with its fault points). An object of the same bytes already there is kept and the temp file
    dropped. Returns (sha256, length)."""
    import hashlib

    directory.mkdir(parents=True, exist_ok=True)
    temp = temp_path_for(directory / "incoming")
    batch = _deferred.get()
    digest = hashlib.sha256()
    length = 0
    try:
        with open(temp, "xb") as handle:
            for piece in pieces:
                digest.update(piece)
                handle.write(piece)
                length += len(piece)
            handle.flush()
            fault("temp-written")
            sha = digest.hexdigest()
            target = directory / sha[:2] / f"{sha}{suffix}"
            if target.exists():
                return sha, length
            if batch is None:
                os.fsync(handle.fileno())
        target.parent.mkdir(parents=True, exist_ok=True)
        _publish(temp, target, kind, batch)
        return sha, length
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()


def sweep_temp_files(directories: Iterable[Path]) -> int:
    """Remove the temp files (``.NAME.PID.UUID.tmp``) a killed writer left directly in each folder.

    Call only while holding the writer lock. A temp file whose process still runs (a reader writing
    an export next to the store, say) is left alone; so is everything that is not a temp file.
    """
    from episteme_core.store.processes import pid_is_alive

    removed = 0
    me = os.getpid()
    for directory in directories:
        try:
            entries = list(os.scandir(directory))
        except (FileNotFoundError, NotADirectoryError):
            continue
        for entry in entries:
            name = entry.name
            if not (name.startswith(".") and name.endswith(TEMP_SUFFIX)):
                continue
            pid = temp_owner(name)
            if pid is not None and pid != me and pid_is_alive(pid):
                continue
            with contextlib.suppress(FileNotFoundError, IsADirectoryError, PermissionError):
                os.unlink(entry.path)
                removed += 1
    return removed


def temp_owner(name: str) -> int | None:
    """The pid a temp file name carries (``.NAME.PID.UUID.tmp``, or ``.NAME.PID.tmp`` as the home's
    write probe), or None when it carries none."""
    parts = name[: -len(TEMP_SUFFIX)].rsplit(".", 2)
    for part in reversed(parts[1:]):
        if part.isdigit() and len(part) <= 10:
            return int(part)
    return None


def fan_out(directory: Path) -> list[Path]:
    """``directory`` and its two-hex-digit subfolders (``objects/ab/``, ``blobs/sha256/ab/``)."""
    found = [directory]
    try:
        with os.scandir(directory) as entries:
            found += [Path(e.path) for e in entries if len(e.name) == 2 and e.is_dir(follow_symlinks=False)]
    except (FileNotFoundError, NotADirectoryError):
        pass
    return found
