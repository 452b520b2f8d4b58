"""Strict parsing of manifests (``[{url, family?, authority?, extractor?}]``) and manual-ingest maps
(``[{sourceUrl, localPath, contentType?}]``): every error names the entry index and the field."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any

import attrs

from episteme_core.capture.urls import UrlError, normalise_url
from episteme_core.errors import EpistemeError
from episteme_core.records.canonical import loads_strict

AUTHORITIES = ("normative", "informative")
EXTRACTORS = ("html", "pdf", "text", "xml")
FAMILY_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
CONTENT_TYPE_PATTERN = re.compile(
    r"^[A-Za-z0-9!#$&^_.+-]+/[A-Za-z0-9!#$&^_.+-]+(\s*;\s*[A-Za-z0-9!#$&^_.+-]+=(\"[^\"\\]*\"|[^\s;\"]+))*$"
)
MANIFEST_FIELDS = ("url", "family", "authority", "extractor")
MAP_FIELDS = ("sourceUrl", "localPath", "contentType")


@attrs.frozen
class ManifestEntry:
    """One source to snapshot: the normalised URL (no fragment) and its options."""

    index: int
    url: str
    fragment: str | None = None
    family: str | None = None
    authority: str | None = None
    extractor: str | None = None

    @property
    def options(self) -> dict[str, Any]:
        values = {"family": self.family, "authority": self.authority,
                  "extractor": self.extractor, "fragment": self.fragment}
        return {k: v for k, v in values.items() if v is not None}


@attrs.frozen
class MapEntry:
    """One local file to ingest as the representation of ``source_url``."""

    index: int
    source_url: str
    local_path: str
    fragment: str | None = None
    content_type: str | None = None


def _fail(what: str, index: int | None, field: str | None, message: str, code: str = "INVALID_INPUT",
          **details: Any) -> EpistemeError:
    where = what if index is None else f"{what}[{index}]"
    if field:
        where += f".{field}"
    return EpistemeError(code, f"{where}: {message}",
                         details={"input": what, "entry": index, "field": field, **details})


def _load_array(data: bytes, what: str, max_sources: int) -> list[Any]:
    value = loads_strict(data, source=what)
    if not isinstance(value, list):
        raise _fail(what, None, None, f"must be a JSON array, not {type(value).__name__}")
    if len(value) > max_sources:
        raise _fail(what, max_sources, None,
                    f"{len(value)} entries is more than --max-sources {max_sources}",
                    code="LIMIT_EXCEEDED", entries=len(value), limit=max_sources)
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            raise _fail(what, index, None, f"must be an object, not {type(item).__name__}")
    return value


def _string(what: str, index: int, item: dict[str, Any], field: str, required: bool) -> str | None:
    if field not in item:
        if required:
            raise _fail(what, index, field, "is required")
        return None
    value = item[field]
    if not isinstance(value, str):
        raise _fail(what, index, field, f"must be a string, not {_json_type(value)}")
    if not value:
        raise _fail(what, index, field, "must not be empty")
    return value


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "boolean", int: "number", float: "number", list: "array", dict: "object"}.get(
        type(value), type(value).__name__)


def _unknown_keys(what: str, index: int, item: dict[str, Any], allowed: tuple[str, ...]) -> None:
    for key in sorted(item):
        if key not in allowed:
            raise _fail(what, index, key, f"unknown field (allowed: {', '.join(allowed)})")


def _unique_url(
    source: str, index: int, item: dict[str, Any], field: str, seen: dict[str, int]
) -> tuple[str, str | None]:
    """The entry's normalised http(s) URL and fragment; a URL seen before is a duplicate."""
    raw_url = _string(source, index, item, field, True)
    assert raw_url is not None
    try:
        url, fragment = normalise_url(raw_url)
    except UrlError as exc:
        raise _fail(source, index, field, str(exc), value=raw_url) from None
    if url in seen:
        raise _fail(source, index, field, f"duplicates entry {seen[url]} ({url})",
                    duplicateOf=seen[url], value=raw_url)
    seen[url] = index
    return url, fragment


def parse_manifest(data: bytes, *, source: str = "manifest", max_sources: int = 1000,
                   known: Mapping[str, Sequence[str]] | None = None) -> list[ManifestEntry]:
    """A strict manifest: http(s) URLs without duplicates after normalisation, known options only.

    ``known`` names the registered families and extractors (``{"family": [...], "extractor":
    [...]}``): a manifest naming another is refused here, naming the entry and the known names, so a
    bad value never reaches a commit (without it, the builtin extractors' names and any family name
    of the right form pass)."""
    entries: list[ManifestEntry] = []
    families = sorted(known["family"]) if known and "family" in known else None
    extractors = sorted(known["extractor"]) if known and "extractor" in known else list(EXTRACTORS)
    seen: dict[str, int] = {}
    for index, item in enumerate(_load_array(data, source, max_sources)):
        _unknown_keys(source, index, item, MANIFEST_FIELDS)
        url, fragment = _unique_url(source, index, item, "url", seen)
        family = _string(source, index, item, "family", False)
        if family is not None and not FAMILY_PATTERN.match(family):
            raise _fail(source, index, "family", f"{family!r} is not a family name ([a-z0-9][a-z0-9._-]*)")
        if family is not None and families is not None and family not in families:
            raise _fail(source, index, "family", f"{family!r} is not a known family (known: "
                        f"{', '.join(families)}; a plugin may add more: episteme plugins)",
                        value=family, known=families)
        authority = _string(source, index, item, "authority", False)
        if authority is not None and authority not in AUTHORITIES:
            raise _fail(source, index, "authority", f"{authority!r} is not one of {', '.join(AUTHORITIES)}")
        extractor = _string(source, index, item, "extractor", False)
        if extractor is not None and extractor not in extractors:
            raise _fail(source, index, "extractor", f"{extractor!r} is not a known extractor (known: "
                        f"{', '.join(extractors)}; a plugin may add more: episteme plugins)",
                        value=extractor, known=extractors)
        entries.append(ManifestEntry(index, url, fragment, family, authority, extractor))
    return entries


def parse_map(data: bytes, *, source: str = "map", max_sources: int = 1000) -> list[MapEntry]:
    """A strict manual-ingest map. ``localPath`` is relative to the root or absolute, never holds a
    ``..`` segment or starts with ``~``; files (and, with ``--root``, confinement) are checked later."""
    entries: list[MapEntry] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(_load_array(data, source, max_sources)):
        _unknown_keys(source, index, item, MAP_FIELDS)
        url, fragment = _unique_url(source, index, item, "sourceUrl", seen)
        local = _string(source, index, item, "localPath", True)
        assert local is not None
        if "\x00" in local:
            raise _fail(source, index, "localPath", "contains a NUL character")
        posix = PurePosixPath(local.replace("\\", "/"))
        if ".." in posix.parts or local.startswith("~"):
            raise _fail(source, index, "localPath",
                        f"{local!r} must not hold a '..' segment or start with '~'", path=local)
        content_type = _string(source, index, item, "contentType", False)
        if content_type is not None and not CONTENT_TYPE_PATTERN.match(content_type.strip()):
            raise _fail(source, index, "contentType", f"{content_type!r} is not a media type")
        entries.append(MapEntry(index, url, posix.as_posix(), fragment, content_type))
    return entries


def read_manifest(path: str, *, max_input_bytes: int, max_sources: int,
                  known: Mapping[str, Sequence[str]] | None = None) -> list[ManifestEntry]:
    """Read (``-`` = stdin, bounded) and parse a manifest, naming it in every error."""
    from episteme_core.records.inputs import read_input

    name = "stdin" if path == "-" else path
    return parse_manifest(read_input(path, max_input_bytes), source=name, max_sources=max_sources,
                          known=known)


