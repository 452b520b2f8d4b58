"""Reading a bearer token from a file that only its owner can read, and comparing it in constant time.

``graph view --token-file`` follows exactly the rule of ``episteme serve --token-file``: a regular
file (not a symlink) owned by this user, mode 0600 or 0400, at most 1 KiB, holding one RFC 6750
token (``A-Z a-z 0-9 - . _ ~ + /``, then ``=`` padding) of at least 16 characters, whitespace around
it dropped; a refusal is ``INVALID_INPUT`` (exit 3), a file too large ``LIMIT_EXCEEDED``. The kernel
holds that rule in its serve guard, which a plugin may not import; ``read_token`` calls
``episteme_core.api.read_token_file`` as soon as the kernel exposes it, and until then this module's
copy of the rule, which a test holds equal to ``episteme serve``'s refusals.
"""

from __future__ import annotations

import hmac
import os
import re
import stat
from pathlib import Path
from typing import Any

MAX_TOKEN_FILE_BYTES = 1024
MIN_TOKEN_CHARS = 16
TOKEN = re.compile(r"^[A-Za-z0-9\-._~+/]+=*$")  # RFC 6750 b64token
HINT = (
    "keep the token in a file of your own, mode 0600 or 0400, e.g. umask 077; "
    "python3 -c 'import secrets; print(secrets.token_urlsafe(32))' > FILE"
)


def _refuse(path: Path, problem: str, code: str = "INVALID_INPUT") -> Exception:
    from episteme_core.api import EpistemeError

    return EpistemeError(code, f"--token-file {path}: {problem}", details={"path": str(path)}, hint=HINT)


def read_token(path: Path) -> str:
    """The token in ``path``, by the kernel's rule (``episteme serve --token-file``)."""
    from episteme_core import api

    kernel: Any = getattr(api, "read_token_file", None)  # not exposed yet: see the module docstring
    if callable(kernel):
        return str(kernel(path))
    return read_token_file(path)


def read_token_file(path: Path) -> str:
    """This plugin's copy of the kernel's token-file rule (the module docstring states it)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0) | os.O_NONBLOCK)
    except FileNotFoundError:
        raise _refuse(path, "does not exist") from None
    except OSError as exc:
        if os.path.islink(path):
            raise _refuse(path, "is a symbolic link; give the file itself") from None
        raise _refuse(path, f"cannot be opened: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _refuse(path, "is not a regular file")
        if info.st_uid != os.getuid():
            raise _refuse(path, f"is owned by uid {info.st_uid}, not by this user ({os.getuid()})")
        mode = stat.S_IMODE(info.st_mode)
        if mode not in (0o600, 0o400):
            raise _refuse(path, f"has mode {mode:04o}; it must be 0600 or 0400 (chmod 600 FILE)")
        if info.st_size > MAX_TOKEN_FILE_BYTES:
            raise _refuse(path, f"is {info.st_size} bytes; at most {MAX_TOKEN_FILE_BYTES}", "LIMIT_EXCEEDED")
        raw = os.read(fd, MAX_TOKEN_FILE_BYTES + 1)
    finally:
        os.close(fd)
    if len(raw) > MAX_TOKEN_FILE_BYTES:
        raise _refuse(path, f"is over {MAX_TOKEN_FILE_BYTES} bytes", "LIMIT_EXCEEDED")
    try:
        token = raw.decode("ascii").strip()
    except UnicodeDecodeError:
        raise _refuse(path, "holds bytes that are not ASCII") from None
    if not TOKEN.match(token):
        raise _refuse(path, "must hold one token of A-Z a-z 0-9 - . _ ~ + / (and trailing =), nothing else")
    if len(token) < MIN_TOKEN_CHARS:
        raise _refuse(path, f"holds a token of {len(token)} characters; use at least {MIN_TOKEN_CHARS}")
    return token


def same_token(given: str, expected: str) -> bool:
    """Constant-time comparison (no early exit on the first differing byte)."""
    return hmac.compare_digest(given.encode("utf-8", "replace"), expected.encode("ascii"))
