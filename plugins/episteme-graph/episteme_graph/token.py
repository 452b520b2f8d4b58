"""Reading a bearer token from a file that only its owner can read, and comparing it in constant time.

``graph view --token-file`` follows exactly the rule of ``episteme serve --token-file``, because it is
the kernel's one rule (``episteme_core.api.read_token_file``): a regular file (not a symlink) owned by
this user, mode 0600 or 0400, at most 1 KiB, holding one RFC 6750 token (``A-Z a-z 0-9 - . _ ~ + /``,
then ``=`` padding) of at least 16 characters, whitespace around it dropped; a refusal is
``INVALID_INPUT`` (exit 3), a file too large ``LIMIT_EXCEEDED``.
"""

from __future__ import annotations

import hmac
from pathlib import Path


def read_token(path: Path) -> str:
    """The token in ``path``, by the kernel's rule (``episteme serve --token-file``)."""
    from episteme_core.api import read_token_file

    return read_token_file(path)


def same_token(given: str, expected: str) -> bool:
    """Constant-time comparison (no early exit on the first differing byte)."""
    return hmac.compare_digest(given.encode("utf-8", "replace"), expected.encode("ascii"))
