"""The one cattrs converter: attrs records (snake_case) to JSON objects (camelCase) and back."""

from __future__ import annotations

from typing import Any, TypeVar

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from episteme_core.errors import EpistemeError

T = TypeVar("T")


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def words(name: str) -> str:
    """A camelCase JSON key as words for people (``logLines`` -> ``log lines``); the inverse of
    ``camel`` for what human output shows (JSON keeps camelCase)."""
    out: list[str] = []
    for char in name:
        if char.isupper() and out and out[-1] != " ":
            out.append(" ")
        out.append(char.lower() if char.isupper() else char)
    return "".join(out)


def _renames(cls: type) -> dict[str, Any]:
    return {a.name: override(rename=camel(a.name)) for a in attrs.fields(cls)}


def _make_converter() -> cattrs.Converter:
    conv = cattrs.Converter(forbid_extra_keys=True)
    conv.register_unstructure_hook_factory(
        attrs.has, lambda cls: make_dict_unstructure_fn(cls, conv, **_renames(cls))
    )
    conv.register_structure_hook_factory(
        attrs.has,
        lambda cls: make_dict_structure_fn(
            cls, conv, _cattrs_forbid_extra_keys=True, **_renames(cls)
        ),
    )
    return conv


converter = _make_converter()


def unstructure(record: Any) -> Any:
    """A record as plain JSON-ready data with camelCase keys."""
    return converter.unstructure(record)


def structure(data: Any, cls: type[T], *, source: str) -> T:
    """Build ``cls`` from JSON data, or raise ``INVALID_INPUT`` naming ``source`` and the problem."""
    try:
        return converter.structure(data, cls)
    except Exception as exc:  # cattrs raises ClassValidationError, KeyError, TypeError...
        reason = _describe(exc)
        raise EpistemeError(
            "INVALID_INPUT",
            f"{source}: {reason}",
            details={"source": source, "reason": reason},
        ) from exc


def _describe(exc: BaseException) -> str:
    if isinstance(exc, cattrs.BaseValidationError):
        messages = cattrs.transform_error(exc)
        return "; ".join(messages)
    return f"{type(exc).__name__}: {exc}"
