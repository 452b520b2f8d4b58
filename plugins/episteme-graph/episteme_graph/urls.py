"""URL rules for graphs: which schemes a field allows, no userinfo, no credentials in the query."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, unquote, urlsplit

CREDENTIAL_NAMES = frozenset(
    {
        "accesskey",
        "apikey",
        "auth",
        "authorization",
        "awsaccesskeyid",
        "clientsecret",
        "credential",
        "jwt",
        "password",
        "passwd",
        "secret",
        "secretkey",
        "sessionid",
        "sig",
        "signature",
        "token",
    }
)
CREDENTIAL_SUFFIXES = ("token", "apikey", "secret", "password", "credential", "signature")
IDENTIFIER_SCHEMES = ("urn", "iso", "wikidata")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_NON_ALNUM = re.compile(r"[^a-z0-9]")


def credential_name(name: str) -> bool:
    """A query parameter whose normalised name says it carries a secret."""
    normal = _NON_ALNUM.sub("", unquote(name).lower())
    return normal in CREDENTIAL_NAMES or normal.endswith(CREDENTIAL_SUFFIXES)


def problem(value: str, *, identifier: bool = False) -> str | None:
    """Why ``value`` is not a safe link (or identifier), or None when it is."""
    if value != value.strip():
        return "leading or trailing whitespace"
    if _CONTROL.search(value):
        return "control characters"
    scheme = value.split(":", 1)[0].lower() if ":" in value else ""
    if identifier and scheme in IDENTIFIER_SCHEMES:
        return None if len(value) > len(scheme) + 1 and " " not in value else "an empty or spaced identifier"
    if scheme not in ("http", "https"):
        allowed = "http(s), urn:, iso: or wikidata:" if identifier else "http or https"
        shown = f"{scheme}:" if scheme else "no scheme"
        return f"scheme {shown} is not allowed (only {allowed})"
    try:
        parts = urlsplit(value)
        host = parts.hostname
        _ = parts.port
    except ValueError as exc:
        return f"not a URL ({exc})"
    if not value.lower().startswith(f"{scheme}://") or not host:
        return "no host"
    if "@" in parts.netloc:
        return "userinfo (user:password@) in the URL"
    if " " in value:
        return "whitespace inside the URL"
    for name, _value in parse_qsl(parts.query, keep_blank_values=True):
        if credential_name(name):
            return f"a credential-like query parameter {name!r}"
    return None
