"""Bounded reading of input files and of ``-`` (stdin): never more than the bound in memory."""

from __future__ import annotations

import errno
import os
import stat
import sys
from typing import BinaryIO

from episteme_core.errors import EpistemeError

MIB = 1024 * 1024
GIB = 1024 * MIB
DEFAULT_MAX_INPUT_BYTES = 64 * MIB


def _read_bounded(stream: BinaryIO, max_bytes: int, source: str) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = stream.read(min(1 << 20, max_bytes + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        if total > max_bytes:
            raise EpistemeError(
                "LIMIT_EXCEEDED",
                f"{source} is larger than {max_bytes} bytes",
                details={"source": source, "maxBytes": max_bytes},
                hint="raise --max-input-bytes if this input is expected",
            )
    return b"".join(chunks)


def open_regular(path: str | os.PathLike[str], *, follow_symlinks: bool = True) -> int:
    """A read descriptor of ``path``, which must be a regular file, checked on the opened descriptor.

    The open itself never blocks (``O_NONBLOCK``: a FIFO or device swapped in after an earlier check
    cannot hang the caller) and, unless ``follow_symlinks``, never follows a symlink
    (``O_NOFOLLOW``). What was opened is then checked with ``fstat``, so no swap between a check and
    the open can slip through; the returned descriptor reads in blocking mode again.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    shown = os.fsencode(path).decode("utf-8", "backslashreplace")
    try:
        fd = os.open(path, flags)
    except FileNotFoundError as exc:
        raise EpistemeError("INVALID_INPUT", f"{shown}: no such file", details={"path": shown}) from exc
    except OSError as exc:
        symlink = exc.errno == errno.ELOOP
        reason = "a symbolic link (not followed)" if symlink else f"cannot read: {exc.strerror}"
        raise EpistemeError("INVALID_INPUT", f"{shown}: {reason}", details={"path": shown}) from exc
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file (device, fifo or socket)"
            raise EpistemeError("INVALID_INPUT", f"{shown}: {kind}", details={"path": shown})
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_input(path: str, max_bytes: int = DEFAULT_MAX_INPUT_BYTES) -> bytes:
    """Read ``path`` (or stdin for ``-``) up to ``max_bytes``; past the bound is ``LIMIT_EXCEEDED``."""
    if path == "-":
        return _read_bounded(sys.stdin.buffer, max_bytes, "stdin")
    with open(open_regular(path), "rb") as handle:
        return _read_bounded(handle, max_bytes, os.fsencode(path).decode("utf-8", "backslashreplace"))
