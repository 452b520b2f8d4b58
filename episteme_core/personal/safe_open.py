"""Open a file of the user's folders once, then check what was opened: never a symlink, a FIFO or more
bytes than the check saw (no swap between a check and the read can hang a run or widen it)."""

from __future__ import annotations

import errno
import io
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from episteme_core.personal.plaintext import fs_text

_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class Refused(Exception):
    """A file that is not read: ``reason`` is the skip count's key (``symlink``, ``notRegular``,
    ``tooLarge``, ``missing``, ``unreadable``), ``message`` names the file for people."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


class _Capped(io.RawIOBase):
    """A descriptor read up to ``limit`` bytes and no further (what ``fstat`` saw when it was checked)."""

    def __init__(self, fd: int, limit: int) -> None:
        self._file = io.FileIO(fd, "rb", closefd=True)
        self._left = limit

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        if self._left <= 0:
            return 0
        view = memoryview(buffer).cast("B")
        got = self._file.readinto(view[: min(len(view), self._left)]) or 0
        self._left -= got
        return got

    def close(self) -> None:
        self._file.close()
        super().close()


def _open_beneath(path: str | os.PathLike[str], beneath: str | os.PathLike[str]) -> int:
    """``path`` opened from the folder ``beneath`` one name at a time, each folder on the way opened
    with ``O_NOFOLLOW`` relative to the last: a folder swapped for a symbolic link while a run walks
    is refused (``ELOOP``), never followed out of the folder the user named."""
    relative = Path(path).relative_to(beneath)  # ValueError: not beneath it
    *folders, name = relative.parts
    fd = os.open(beneath, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    try:
        for folder in folders:
            try:
                inner = os.open(folder, _FOLDER_FLAGS, dir_fd=fd)
            except NotADirectoryError:  # O_DIRECTORY tells a symlink so: say what it is
                if stat.S_ISLNK(os.lstat(folder, dir_fd=fd).st_mode):
                    raise OSError(errno.ELOOP, "a symbolic link") from None
                raise
            os.close(fd)
            fd = inner
        return os.open(name, _FLAGS, dir_fd=fd)
    finally:
        os.close(fd)


@contextmanager
def open_checked(
    path: str | os.PathLike[str], max_bytes: int, *, beneath: str | os.PathLike[str] | None = None
) -> Iterator[tuple[BinaryIO, os.stat_result]]:
    """``path`` opened once (``O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC``) and checked on the descriptor: a
    regular file of at most ``max_bytes``; the handle reads no more than the size checked. Else
    ``Refused``. With ``beneath`` (a folder above ``path``), no folder between the two is followed
    if it is, or becomes, a symbolic link."""
    shown = fs_text(os.fspath(path))
    try:
        fd = os.open(path, _FLAGS) if beneath is None else _open_beneath(path, beneath)
    except FileNotFoundError:
        raise Refused("missing", f"{shown}: no such file, skipped") from None
    except NotADirectoryError:  # a folder on the way is no longer a folder
        raise Refused("missing", f"{shown}: a folder on its path is not a folder now, skipped") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            what = "a symbolic link" if beneath is None else "a symbolic link (or a folder on its way is)"
            raise Refused("symlink", f"{shown}: {what}, skipped") from None
        if exc.errno in (errno.ENXIO, errno.EISDIR):
            raise Refused("notRegular", f"{shown}: not a regular file, skipped") from None
        raise Refused("unreadable", f"{shown}: cannot read: {exc.strerror or exc}, skipped") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Refused("notRegular", f"{shown}: not a regular file, skipped")
        if info.st_size > max_bytes:
            raise Refused("tooLarge", f"{shown}: larger than {max_bytes} bytes, skipped")
        os.set_blocking(fd, True)
        raw = _Capped(fd, info.st_size)
    except BaseException:
        os.close(fd)
        raise
    with io.BufferedReader(raw, buffer_size=1 << 16) as handle:
        yield handle, info  # type: ignore[misc]


def read_checked(
    path: str | os.PathLike[str], max_bytes: int, *, beneath: str | os.PathLike[str] | None = None
) -> tuple[bytes, os.stat_result]:
    """The bytes of ``path`` as ``open_checked`` opens it (at most the size checked), and its stat."""
    with open_checked(path, max_bytes, beneath=beneath) as (handle, info):
        return handle.read(), info


def is_symlink(path: Path) -> bool:
    """True when ``path`` itself is a symbolic link (``lstat``; a missing path is not one)."""
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:
        return False
