"""The writer lock: one writer per home; a dead holder's lock is broken, a live one refuses."""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import NoReturn

from episteme_core.errors import Cancelled, EpistemeError, clear_cancel
from episteme_core.records.canonical import canonical_bytes, loads_strict
from episteme_core.records.convert import structure, unstructure
from episteme_core.records.storage import LockOwner
from episteme_core.store.atomic import fsync_dir
from episteme_core.store.processes import hostname

Warn = Callable[[str, str], None]


def read_owner(path: Path) -> LockOwner | None:
    """Who the lock file names; ``None`` when there is no lock file or it is empty."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    if not raw:
        return None
    return structure(loads_strict(raw, source=str(path)), LockOwner, source=str(path))


class WriterLock:
    """Context manager taking ``home/writer.lock`` for ``command``; ``RESOURCE_BUSY`` when held.

    Exclusion comes from ``flock`` on the lock file, which the kernel drops when a holder dies, so a
    crashed writer can never leave the home locked; the file's content (pid, host, command, token)
    says who holds it. Content left by a dead holder on this host is replaced with a warning; content
    naming another host is never broken (that host may still be writing over a shared filesystem).
    """

    def __init__(self, path: Path, command: str, warn: Warn | None = None) -> None:
        self.path = path
        self.command = command
        self.warn = warn or (lambda code, message: None)
        self.owner: LockOwner | None = None
        self.inherited = False  # the lock file still named a holder that did not finish (killed)
        self._fd: int | None = None

    def acquire(self) -> LockOwner:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:  # closed on any way out but holding: a caller that survives a signal keeps no lock
                if self._locked(fd):
                    self._take_over(fd)
                    self._fd = fd
                    return self.owner  # type: ignore[return-value]
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)  # the previous holder removed the file meanwhile: lock the new one

    def _locked(self, fd: int) -> bool:
        """Take ``flock`` on ``fd`` (``RESOURCE_BUSY`` when another holds it); False when the file
        was removed or replaced meanwhile."""
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._refuse()
        try:
            return os.fstat(fd).st_ino == os.stat(self.path).st_ino
        except FileNotFoundError:
            return False

    def _take_over(self, fd: int) -> None:
        left = _read_fd(fd)
        self.inherited = bool(left)
        if left:
            try:
                holder = structure(loads_strict(left, source=str(self.path)), LockOwner,
                                   source=str(self.path))
            except Cancelled:
                raise  # a signal while reading the holder is the run's, never an unreadable file
            except EpistemeError:
                holder = None
            if holder is not None and holder.host != hostname():
                self._refuse()
            described = (
                f"dead process {holder.pid} ({holder.command}) taken at {holder.acquired_at}"
                if holder is not None else "an unreadable lock file"
            )
            self.warn("STALE_LOCK_BROKEN", f"broke the writer lock of {described}")
        owner = LockOwner(
            pid=os.getpid(),
            host=hostname(),
            command=self.command,
            token=uuid.uuid4().hex,
            acquired_at=datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        )
        data = canonical_bytes(unstructure(owner))
        # written over the old content, then cut to length: the file is never empty once a holder
        # wrote it, so a taker killed here still leaves content (and the next taker sweeps)
        os.pwrite(fd, data, 0)
        os.ftruncate(fd, len(data))
        os.fsync(fd)
        fsync_dir(self.path.parent)
        self.owner = owner

    def _refuse(self) -> NoReturn:
        try:
            holder = read_owner(self.path)
        except Cancelled:
            raise
        except EpistemeError:
            holder = None
        details: dict[str, object] = {"path": str(self.path)}
        if holder is not None:
            details["owner"] = unstructure(holder)
            message = (
                f"the home is being written by {holder.command} "
                f"(pid {holder.pid} on {holder.host} since {holder.acquired_at})"
            )
        else:
            message = f"the writer lock {self.path} is held"
        raise EpistemeError(
            "RESOURCE_BUSY",
            message,
            details=details,
            hint="wait for the other writer to finish, then retry",
        )

    def release(self) -> None:
        """Remove the lock file and drop the lock (closing the descriptor releases ``flock``)."""
        if self._fd is None:
            return
        try:
            with contextlib.suppress(FileNotFoundError):
                if os.fstat(self._fd).st_ino == os.stat(self.path).st_ino:
                    self.path.unlink()
        finally:
            os.close(self._fd)
            self._fd = None
            self.owner = None

    def __enter__(self) -> WriterLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


def _read_fd(fd: int) -> bytes:
    chunks: list[bytes] = []
    offset = 0
    while True:
        chunk = os.pread(fd, 65536, offset)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        offset += len(chunk)


# Locks this process holds: resolved lock path -> [thread ident, nesting depth].
_HELD: dict[str, list[int]] = {}
_HELD_GUARD = threading.Lock()


@contextlib.contextmanager
def holding(path: Path, command: str, warn: Warn | None = None,
            recover: Callable[[], object] | None = None) -> Iterator[bool]:
    """Hold the writer lock at ``path`` for the block; yields True where this call took it.

    ``recover`` is called under the lock, before the block, when the lock file still named a
    previous holder: a writer that did not finish (killed), whose temp files may be left. A writer
    that finishes removes the lock file, so the next one has nothing to recover.

    Re-entrant for the thread that holds it: a nested ``holding`` of the same lock runs under the
    lock already taken (a source taking the lock inside ``ingest --reshard`` is not refused by its
    own process). Another thread, like another process, gets ``RESOURCE_BUSY``.
    """
    key = str(path.parent.resolve() / path.name)
    me = threading.get_ident()
    with _HELD_GUARD:
        held = _HELD.get(key)
        nested = held is not None and held[0] == me
        if nested:
            held[1] += 1  # type: ignore[index]
    if nested:
        try:
            yield False
        finally:
            with _HELD_GUARD:
                _HELD[key][1] -= 1
        return
    # a write run starts afresh: a cancel request counts for the run it interrupts, so an earlier
    # run's is forgotten here, before the lock is taken (one that arrives while taking it is this run's)
    clear_cancel()
    with WriterLock(path, command, warn=warn) as lock:
        with _HELD_GUARD:
            _HELD[key] = [me, 1]
        try:
            if lock.inherited and recover is not None:
                recover()
            yield True
        finally:
            with _HELD_GUARD:
                del _HELD[key]
