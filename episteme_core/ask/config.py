"""The ``readers`` section of the home's ``config.json``: checked strictly, turned into ReaderSpecs.

Shape (schema/reader-config.schema.json): ``{"readers": [{"name", "kind"?, "url"?, "model"?,
"slots"?, "timeout"?, "max_reply_bytes"?, "api_key_env"?, ...}]}``. ``kind`` defaults to ``http``;
kinds other than http and bm25 (plugin readers) keep their extra keys as options for their factory.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from episteme_core.ask.options import check_number
from episteme_core.errors import EpistemeError
from episteme_core.records.reading import ReaderSpec

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
DEFAULT_SLOTS = 1
MAX_SLOTS = 64
DEFAULT_TIMEOUT = 30.0
MIN_TIMEOUT, MAX_TIMEOUT = 0.05, 3600.0
DEFAULT_MAX_REPLY_BYTES = 1 << 20
MIN_REPLY_BYTES, MAX_REPLY_BYTES = 1024, 64 << 20
COMMON_KEYS = {"name", "kind", "slots", "timeout"}
HTTP_KEYS = COMMON_KEYS | {"url", "model", "max_reply_bytes", "api_key_env"}
BM25_KEYS = COMMON_KEYS | {"top", "ratio", "score_ratio", "min_score"}


def _fail(where: str, message: str) -> EpistemeError:
    return EpistemeError(
        "INVALID_INPUT",
        f"config.json: {where}: {message}",
        details={"where": where},
        hint="fix the readers section of config.json (see docs/ask.md)",
    )


def check_url(url: Any, where: str) -> str:
    """An http(s) URL with a host; anything else is a clear INVALID_INPUT."""
    if not isinstance(url, str) or not url:
        raise _fail(where, "url must be a non-empty string")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise _fail(where, f"url must be http:// or https://, not {parts.scheme or 'no scheme'!r}")
    if not parts.hostname:
        raise _fail(where, "url has no host")
    if parts.username or parts.password:
        raise _fail(where, "url must not hold credentials; name an environment variable in api_key_env")
    if parts.query or parts.fragment:
        raise _fail(where, "url must not have a query or fragment")
    return url


def _number(entry: Mapping[str, Any], key: str, default: float, low: float, high: float,
            where: str, *, integer: bool) -> Any:
    value = entry.get(key, default)
    try:
        check_number(key, value, low, high, integer=integer)
    except ValueError as problem:
        raise _fail(where, str(problem)) from None
    return value  # as written: an integer stays one where a number will do


def reader_specs(config: Mapping[str, Any]) -> list[ReaderSpec]:
    """The configured readers, in config order; INVALID_INPUT naming the entry on any problem."""
    raw = config.get("readers", [])
    if not isinstance(raw, list):
        raise _fail("readers", "must be a list")
    specs: list[ReaderSpec] = []
    seen: set[str] = set()
    for i, entry in enumerate(raw):
        where = f"readers[{i}]"
        if not isinstance(entry, dict):
            raise _fail(where, "must be an object")
        name = entry.get("name")
        if not isinstance(name, str) or not NAME.match(name):
            raise _fail(where, "name must be 1-64 letters, digits, '.', '_' or '-'")
        where = f"readers[{i}] ({name})"
        if name in seen:
            raise _fail(where, "two readers have this name")
        seen.add(name)
        kind = entry.get("kind", "http")
        if not isinstance(kind, str) or not NAME.match(kind):
            raise _fail(where, "kind must be a reader kind name such as 'http'")
        slots = _number(entry, "slots", DEFAULT_SLOTS, 1, MAX_SLOTS, where, integer=True)
        timeout = _number(entry, "timeout", DEFAULT_TIMEOUT, MIN_TIMEOUT, MAX_TIMEOUT, where, integer=False)
        options = {k: v for k, v in entry.items() if k not in COMMON_KEYS}
        if kind == "http":
            unknown = sorted(set(entry) - HTTP_KEYS)
            if unknown:
                raise _fail(where, f"unknown key(s) {', '.join(unknown)}")
            if "url" not in entry:
                raise _fail(where, "an http reader needs a url")
            options["url"] = check_url(entry["url"], where)
            model = entry.get("model", "episteme-reader")
            if not isinstance(model, str) or not model:
                raise _fail(where, "model must be a non-empty string")
            options["model"] = model
            options["max_reply_bytes"] = _number(
                entry, "max_reply_bytes", DEFAULT_MAX_REPLY_BYTES, MIN_REPLY_BYTES, MAX_REPLY_BYTES,
                where, integer=True,
            )
            env = entry.get("api_key_env")
            if env is not None and (not isinstance(env, str) or not ENV_NAME.match(env)):
                raise _fail(where, "api_key_env must name an environment variable")
        elif kind == "bm25":
            unknown = sorted(set(entry) - BM25_KEYS)
            if unknown:
                raise _fail(where, f"unknown key(s) {', '.join(unknown)}")
            from episteme_core.ask.bm25_reader import DEFAULT_RATIO, DEFAULT_SCORE_RATIO, DEFAULT_TOP

            # a configured bm25 reader's defaults are the builtin's (``bm25_reader``)
            for key, default, low, high, integer in (
                ("top", DEFAULT_TOP, 1, 100, True),
                ("ratio", DEFAULT_RATIO, 0.0, 1.0, False),
                ("score_ratio", DEFAULT_SCORE_RATIO, 0.0, 1.0, False),
                ("min_score", 0.0, 0.0, 1e9, False),
            ):
                options[key] = _number(entry, key, default, low, high, where, integer=integer)
        specs.append(ReaderSpec(name=name, kind=kind, slots=slots, timeout=float(timeout), options=options))
    return specs
