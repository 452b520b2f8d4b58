"""The one cattrs converter: attrs records (snake_case) to JSON objects (camelCase) and back.

The converter is built on first use (cattrs costs a new process about 8 ms to import, and every
record class it meets some more to compile). The read path (``query``, ``ask``, ``show``,
``sources``) never builds it: ``plain`` gives a result record the same JSON data by walking its
fields (``tests/kernel/test_plain_records.py`` holds the two equal on every result record).
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

from episteme_core.errors import EpistemeError

if TYPE_CHECKING:
    import cattrs

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
    from cattrs.gen import override

    return {a.name: override(rename=camel(a.name)) for a in attrs.fields(cls)}


@cache
def get_converter() -> cattrs.Converter:
    """The converter (built once, on first use)."""
    import cattrs
    from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn

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
    # a field typed ``Sequence[T]`` (a record's paragraphs: a list, or spans of a text) is read back
    # from JSON as a list, as a ``list[T]`` field is (cattrs would make a tuple)
    conv.register_structure_hook_factory(
        _is_abstract_sequence,
        lambda hint: conv.get_structure_hook(list[hint.__args__[0]]),  # type: ignore[name-defined]
    )
    return conv


def _is_abstract_sequence(hint: Any) -> bool:
    import collections.abc
    import typing

    return typing.get_origin(hint) is collections.abc.Sequence and len(typing.get_args(hint)) == 1


def __getattr__(name: str) -> Any:
    if name == "converter":  # the module attribute it was before it was built lazily
        return get_converter()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def unstructure(record: Any) -> Any:
    """A record as plain JSON-ready data with camelCase keys."""
    return get_converter().unstructure(record)


@cache
def _fields(cls: type) -> tuple[tuple[str, str], ...]:
    return tuple((a.name, camel(a.name)) for a in attrs.fields(cls))


def record_fields(cls: type) -> tuple[tuple[str, str], ...]:
    """An attrs record class's fields as (attribute name, JSON key) pairs, in declaration order."""
    return _fields(cls)


def plain(value: Any) -> Any:
    """``unstructure(value)`` for records of JSON values (strings, numbers, booleans, None, lists,
    tuples, dicts and records of them), without the converter: records become camelCase dicts,
    lists and tuples lists, dicts dicts, everything else stays as it is."""
    cls = type(value)
    if cls in (str, int, float, bool) or value is None:
        return value
    if cls is list or cls is tuple:
        return [plain(item) for item in value]
    if cls is dict:
        return {key: plain(item) for key, item in value.items()}
    if attrs.has(cls):
        return {key: plain(getattr(value, name)) for name, key in _fields(cls)}
    return value


def structure(data: Any, cls: type[T], *, source: str) -> T:
    """Build ``cls`` from JSON data, or raise ``INVALID_INPUT`` naming ``source`` and the problem."""
    try:
        return get_converter().structure(data, cls)
    except Exception as exc:  # cattrs raises ClassValidationError, KeyError, TypeError...
        reason = _describe(exc)
        raise EpistemeError(
            "INVALID_INPUT",
            f"{source}: {reason}",
            details={"source": source, "reason": reason},
        ) from exc


def _describe(exc: BaseException) -> str:
    import cattrs

    if isinstance(exc, cattrs.BaseValidationError):
        messages = cattrs.transform_error(exc)
        return "; ".join(messages)
    return f"{type(exc).__name__}: {exc}"
