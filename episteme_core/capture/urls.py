"""URL normalisation: the one spelling of a source URL that the store keys snapshots by."""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit, urlunsplit

DEFAULT_PORTS = {"http": 80, "https": 443}
MAX_URL_CHARS = 8192  # RFC 9110 asks for at least 8,000 octets; longer is refused, never sent
MAX_HOST_CHARS = 253
_CONTROL = re.compile(r"[\x00-\x20\x7f]")
_HOST_ASCII = re.compile(r"^[a-z0-9_.-]+$")
_NUMERIC_LABEL = re.compile(r"^(?:[0-9]+|0x[0-9a-f]*)$")


class UrlError(ValueError):
    """Why a URL was refused (a message for people)."""


def normalise_url(text: str, *, schemes: tuple[str, ...] = ("http", "https")) -> tuple[str, str | None]:
    """``(url without fragment, fragment or None)``; refuses other schemes, credentials, no host.

    Scheme and host are lower-cased, a default port is dropped, an empty path becomes ``/``; the
    path and query are kept byte for byte (no re-encoding, so the server sees what was written).
    """
    if not isinstance(text, str) or not text:
        raise UrlError("must be a non-empty string")
    if len(text) > MAX_URL_CHARS:
        raise UrlError(f"is {len(text)} characters long, more than {MAX_URL_CHARS}")
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
    if ":" in host:  # IPv6 literal (urlsplit checked it)
        host = f"[{host}]"
    else:
        check_host(host)
    netloc = host if port is None or DEFAULT_PORTS.get(scheme) == port else f"{host}:{port}"
    path = parts.path or "/"
    url = urlunsplit((scheme, netloc, path, parts.query, ""))
    if "?" in text.split("#", 1)[0] and not parts.query:
        url += "?"  # keep an explicit empty query: it is a different resource to some servers
    fragment = parts.fragment if "#" in text else None
    return url, (fragment or None)


def check_host(host: str) -> None:
    """Refuse host names no resolver should be handed: odd IPv4 spellings, empty or long labels.

    A host whose last label is a number is an IPv4 address (as browsers read it) and must be
    written as four decimal numbers without leading zeros: ``0177.0.0.1``, ``127.1``,
    ``2130706433`` and ``0x7f.0.0.1`` (all 127.0.0.1 to some resolver) are refused, not guessed.
    """
    if len(host) > MAX_HOST_CHARS:
        raise UrlError(f"host is longer than {MAX_HOST_CHARS} characters")
    labels = host[:-1].split(".") if host.endswith(".") else host.split(".")
    if any(not label for label in labels):
        raise UrlError(f"host {host!r} has an empty label")
    if any(len(label) > 63 for label in labels):
        raise UrlError(f"host {host[:80]!r} has a label longer than 63 characters")
    if _NUMERIC_LABEL.match(labels[-1]):
        try:
            ipaddress.IPv4Address(host.rstrip("."))
        except ValueError:
            raise UrlError(
                f"host {host!r} is a number but not an IPv4 address written a.b.c.d "
                "(decimal, no leading zeros)"
            ) from None
        return
    if host.isascii():
        if not _HOST_ASCII.match(host):
            raise UrlError(f"host {host!r} holds characters a host name cannot hold")
        if "xn--" not in host:
            return
    try:
        import idna  # what httpx encodes hosts with: a name it refuses is refused here

        idna.encode(host.rstrip("."))
    except (UnicodeError, ValueError) as exc:
        raise UrlError(f"host {host!r} is not a valid internationalised name ({exc})") from None
