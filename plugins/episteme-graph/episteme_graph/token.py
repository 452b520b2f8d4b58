"""Reading a bearer token from a file that only its owner can read, and comparing it in constant time."""

from __future__ import annotations

import hmac
import os
import stat
from pathlib import Path

MAX_FILE_BYTES = 1024
MIN_TOKEN, MAX_TOKEN = 32, 512


def _refuse(path: Path, why: str) -> Exception:
    from episteme_core.api import EpistemeError

    return EpistemeError(
        "INVALID_USAGE",
        f"--token-file {path}: {why}",
        details={"path": str(path)},
        hint="a regular file of your own, mode 0600 or 0400, holding 32-512 visible ASCII characters",
    )


def read_token(path: Path) -> str:
    """The token in ``path``: a regular file (not a symlink), owned by this user, mode 0600 or 0400,
    at most 1 KiB, 32 to 512 visible ASCII characters (one trailing newline dropped)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise _refuse(path, "no such file") from None
    except OSError as exc:
        raise _refuse(path, f"cannot open ({exc.strerror}; symlinks are refused)") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _refuse(path, "not a regular file")
        if hasattr(os, "getuid") and info.st_uid != os.getuid():
            raise _refuse(path, "not owned by you")
        if stat.S_IMODE(info.st_mode) not in (0o600, 0o400):
            raise _refuse(path, f"mode {stat.S_IMODE(info.st_mode):04o}; only 0600 or 0400")
        if info.st_size > MAX_FILE_BYTES:
            raise _refuse(path, f"larger than {MAX_FILE_BYTES} bytes")
        data = os.read(fd, MAX_FILE_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_FILE_BYTES:
        raise _refuse(path, f"larger than {MAX_FILE_BYTES} bytes")
    if data.endswith(b"\n"):
        data = data[:-1]
    if not MIN_TOKEN <= len(data) <= MAX_TOKEN or not all(0x21 <= b <= 0x7E for b in data):
        raise _refuse(path, f"the token must be {MIN_TOKEN}-{MAX_TOKEN} visible ASCII characters")
    return data.decode("ascii")


def same_token(given: str, expected: str) -> bool:
    """Constant-time comparison (no early exit on the first differing byte)."""
    return hmac.compare_digest(given.encode("utf-8", "replace"), expected.encode("ascii"))
