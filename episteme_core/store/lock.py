"""The writer lock: one writer per home; a dead holder's lock is broken, a live one refuses."""

from __future__ import annotations

import contextlib
import os
import socket
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from episteme_core.canonical import canonical_bytes, loads_strict
from episteme_core.convert import structure, unstructure
from episteme_core.errors import EpistemeError
from episteme_core.records import LockOwner
from episteme_core.store.atomic import fsync_dir, temp_path_for

Warn = Callable[[str, str], None]


def pid_is_alive(pid: int) -> bool:
    """True when ``pid`` names a running (not zombie) process on this host."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        state = stat.rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except (OSError, IndexError):
        return True


def hostname() -> str:
    return os.environ.get("HOSTNAME") or socket.gethostname()


def read_owner(path: Path) -> LockOwner | None:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    return structure(loads_strict(raw, source=str(path)), LockOwner, source=str(path))


class WriterLock:
    """Context manager taking ``home/writer.lock`` for ``command``; ``RESOURCE_BUSY`` when held."""

    def __init__(self, path: Path, command: str, warn: Warn | None = None) -> None:
        self.path = path
        self.command = command
        self.warn = warn or (lambda code, message: None)
        self.owner: LockOwner | None = None

    def acquire(self) -> LockOwner:
        owner = LockOwner(
            pid=os.getpid(),
            host=hostname(),
            command=self.command,
            token=uuid.uuid4().hex,
            acquired_at=datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temp = temp_path_for(self.path)
        temp.write_bytes(canonical_bytes(unstructure(owner)))
        try:
            for attempt in range(2):
                try:
                    os.link(temp, self.path)  # atomic: the lock appears complete or not at all
                except FileExistsError:
                    if attempt == 0 and self._break_if_stale():
                        continue
                    self._refuse()
                fsync_dir(self.path.parent)
                self.owner = owner
                return owner
        finally:
            with contextlib.suppress(FileNotFoundError):
                temp.unlink()
        raise AssertionError("unreachable")

    def _break_if_stale(self) -> bool:
        try:
            holder = read_owner(self.path)
        except EpistemeError:
            return False
        if holder is None:
            return True  # released meanwhile
        if holder.host != hostname() or pid_is_alive(holder.pid):
            return False
        # Move it aside first so two breakers cannot both delete a fresh lock.
        aside = self.path.with_name(f".{self.path.name}.broken.{uuid.uuid4().hex}.tmp")
        try:
            os.rename(self.path, aside)
        except FileNotFoundError:
            return True
        try:
            moved = read_owner(aside)
        except EpistemeError:
            moved = None
        if moved is not None and moved.token != holder.token:
            # We moved a lock a live writer took meanwhile: put it back and refuse.
            with contextlib.suppress(FileExistsError):
                os.link(aside, self.path)
            aside.unlink()
            return False
        aside.unlink()
        self.warn(
            "STALE_LOCK_BROKEN",
            f"broke the writer lock of dead process {holder.pid} ({holder.command}) "
            f"taken at {holder.acquired_at}",
        )
        return True

    def _refuse(self) -> None:
        try:
            holder = read_owner(self.path)
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
        """Remove the lock if it is still ours (same token)."""
        if self.owner is None:
            return
        try:
            holder = read_owner(self.path)
        except EpistemeError:
            holder = None
        if holder is not None and holder.token == self.owner.token:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
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
