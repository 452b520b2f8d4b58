"""URL normalisation: the one spelling of a source URL that the store keys snapshots by."""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

DEFAULT_PORTS = {"http": 80, "https": 443}
_CONTROL = re.compile(r"[\x00-\x20\x7f]")


class UrlError(ValueError):
    """Why a URL was refused (a message for people)."""


def normalise_url(text: str, *, schemes: tuple[str, ...] = ("http", "https")) -> tuple[str, str | None]:
    """``(url without fragment, fragment or None)``; refuses other schemes, credentials, no host.

    Scheme and host are lower-cased, a default port is dropped, an empty path becomes ``/``; the
    path and query are kept byte for byte (no re-encoding, so the server sees what was written).
    """
    if not isinstance(text, str) or not text:
        raise UrlError("must be a non-empty string")
    if _CONTROL.search(text):
        raise UrlError("contains whitespace or control characters")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise UrlError(f"is not a valid URL ({exc})") from None
    scheme = parts.scheme.lower()
    if scheme not in schemes:
        raise UrlError(f"scheme {scheme or '(none)'!r} is not allowed (only {', '.join(schemes)})")
    if parts.username is not None or parts.password is not None:
        raise UrlError("must not carry credentials (user:password@)")
    host = (parts.hostname or "").lower()
    if not host:
        raise UrlError("has no host")
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = host if port is None or DEFAULT_PORTS.get(scheme) == port else f"{host}:{port}"
    path = parts.path or "/"
    url = urlunsplit((scheme, netloc, path, parts.query, ""))
    if "?" in text.split("#", 1)[0] and not parts.query:
        url += "?"  # keep an explicit empty query: it is a different resource to some servers
    fragment = parts.fragment if "#" in text else None
    return url, (fragment or None)
