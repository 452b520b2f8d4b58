"""The bearer token of ``reader serve``: read from a private file, compared in constant time.

Binding anything but a loopback address needs a token, and the token lives in a file that only its
owner can read: a regular file (not a symlink, not a device), owned by the user running the server,
with no permission for group or others (mode 0600 or 0400), at most ``MAX_BYTES`` long, holding one
token of at least ``MIN_CHARS`` visible ASCII characters (a trailing newline is allowed).
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import stat

from episteme_core.api import EpistemeError

MAX_BYTES = 1024
MIN_CHARS = 16
LOOPBACK_NAMES = frozenset({"localhost", "localhost.", "ip6-localhost", "ip6-loopback"})


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or address, IPv6 possibly in brackets) is this machine only."""
    name = host.strip().strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _refuse(path: str, why: str) -> EpistemeError:
    return EpistemeError(
        "INVALID_INPUT", f"token file {path}: {why}", details={"tokenFile": path},
        hint="write one token of 16+ characters to a file of your own and chmod 600 it, e.g. "
             "python -c 'import secrets; print(secrets.token_urlsafe(32))' > F && chmod 600 F",
    )


def read_token(path: str) -> str:
    """The token in ``path``, after every check in the module docstring; INVALID_INPUT otherwise."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise _refuse(path, "does not exist") from None
    except OSError as exc:
        if os.path.islink(path):
            raise _refuse(path, "is a symbolic link; name the file itself") from None
        raise _refuse(path, f"cannot be opened ({exc.strerror})") from None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise _refuse(path, "is not a regular file")
        if info.st_uid != os.getuid():
            raise _refuse(path, f"is owned by uid {info.st_uid}, not by this user (uid {os.getuid()})")
        if info.st_mode & 0o077:
            raise _refuse(path, f"has mode {stat.S_IMODE(info.st_mode):04o}; group and others must have no "
                                "access (chmod 600)")
        raw = os.read(descriptor, MAX_BYTES + 1)
    finally:
        os.close(descriptor)
    if len(raw) > MAX_BYTES:
        raise _refuse(path, f"is larger than {MAX_BYTES} bytes")
    text = raw.decode("ascii", "replace")
    token = text[:-1] if text.endswith("\n") else text
    token = token[:-1] if token.endswith("\r") else token
    if not token or any(not ("!" <= ch <= "~") for ch in token):
        raise _refuse(path, "must hold one token of visible ASCII characters (no spaces), and nothing else")
    if len(token) < MIN_CHARS:
        raise _refuse(path, f"holds a token of {len(token)} characters; at least {MIN_CHARS} are needed")
    return token


def authorized(header: str | None, token: str) -> bool:
    """Whether an ``Authorization`` header carries ``Bearer <token>`` (compared in constant time)."""
    if not header:
        return False
    scheme, _, given = header.partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.strip().encode("utf-8", "replace"), token.encode("ascii"))
