"""Bounded reading of input files and of ``-`` (stdin): never more than the bound in memory."""

from __future__ import annotations

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


def read_input(path: str, max_bytes: int = DEFAULT_MAX_INPUT_BYTES) -> bytes:
    """Read ``path`` (or stdin for ``-``) up to ``max_bytes``; past the bound is ``LIMIT_EXCEEDED``."""
    if path == "-":
        return _read_bounded(sys.stdin.buffer, max_bytes, "stdin")
    try:
        info = os.stat(path)
    except FileNotFoundError as exc:
        raise EpistemeError(
            "INVALID_INPUT", f"{path}: no such file", details={"path": path}
        ) from exc
    except OSError as exc:
        raise EpistemeError(
            "INVALID_INPUT", f"{path}: cannot read: {exc.strerror}", details={"path": path}
        ) from exc
    if not stat.S_ISREG(info.st_mode):
        raise EpistemeError(
            "INVALID_INPUT", f"{path}: not a regular file", details={"path": path}
        )
    with open(path, "rb") as handle:
        return _read_bounded(handle, max_bytes, path)
