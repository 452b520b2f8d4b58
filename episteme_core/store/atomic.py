"""Atomic file writes: temp file, fsync, rename, fsync the directory; crash points for the laws.

``EPISTEME_CRASH_AT=N`` (a test hook) kills the process with SIGKILL at the Nth crash point it
reaches, so a law can prove that every step of a commit leaves the previous commit intact.
"""

from __future__ import annotations

import contextlib
import os
import signal
import uuid
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


def atomic_write(target: Path, data: bytes) -> None:
    """Replace ``target`` with ``data`` so that readers see the old bytes or the new, never a mix."""
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = temp_path_for(target)
    try:
        with open(temp, "xb") as handle:
            handle.write(data)
            handle.flush()
            crashpoint()
            os.fsync(handle.fileno())
        crashpoint()
        os.replace(temp, target)
        crashpoint()
        fsync_dir(target.parent)
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
