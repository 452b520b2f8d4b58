"""Reading a ``.knowledge.json`` graph once, bounded and strict; every failure is a clean error at ``$``."""

from __future__ import annotations

from itertools import chain
from pathlib import Path
from typing import Any

import attrs

from episteme_core.api import paused_cycle_gc

MIB = 1024 * 1024
DEFAULT_MAX_BYTES = 64 * MIB
MAX_DEPTH = 256


@attrs.frozen
class LoadedGraph:
    """A parsed graph, the bytes it came from, and the name to report it by."""

    name: str
    data: bytes
    value: Any
    keys: frozenset[str] | None = None  # every object key in the document, gathered while parsing

    @property
    def sha256(self) -> str:
        from episteme_core.api import sha256_hex

        return sha256_hex(self.data)


def read_bytes(source: str | Path, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The bytes of a file (or ``-``, stdin) up to ``max_bytes`` (``LIMIT_EXCEEDED`` past it)."""
    from episteme_core.api import read_input

    return read_input(str(source), max_bytes)


class _Refused(ValueError):
    pass


def object_keys(value: Any, max_depth: int | None = None) -> frozenset[str]:
    """Every key of every object in ``value``, walking one nesting level at a time (only containers
    are visited); ``_Refused`` past ``max_depth`` levels."""
    containers = (dict, list)
    dicts: list[dict[str, Any]] = [value] if type(value) is dict else []
    lists: list[list[Any]] = [value] if type(value) is list else []
    keys: set[str] = set()
    depth = 0
    while dicts or lists:
        depth += 1
        if max_depth is not None and depth > max_depth:
            raise _Refused(f"nesting deeper than {max_depth}")
        keys.update(chain.from_iterable(dicts))
        children = [c for d in dicts for c in d.values() if type(c) in containers]
        children += [c for items in lists for c in items if type(c) in containers]
        dicts = [c for c in children if type(c) is dict]
        lists = [c for c in children if type(c) is list]
    return frozenset(keys)


def parse(data: bytes, name: str) -> Any:
    """Strict JSON by the kernel's rules (``api.loads_strict``: no duplicate keys, NaN or Infinity,
    lone surrogates, invalid UTF-8, nesting past 256, numbers of more than 4,300 digits)."""
    return parse_with_keys(data, name)[0]


def parse_with_keys(data: bytes, name: str) -> tuple[Any, frozenset[str]]:
    """``parse``, and every object key of the document (the private-reasoning rule needs them). A
    refusal is the kernel's ``INVALID_INPUT``, with the JSON path ``$`` added to its details."""
    from episteme_core.api import EpistemeError, loads_strict

    try:
        with paused_cycle_gc():
            value = loads_strict(data, source=name, max_depth=MAX_DEPTH)
            return value, object_keys(value)
    except EpistemeError as error:
        raise EpistemeError(error.code, error.message, details={**(error.details or {}), "path": "$"},
                            hint=error.hint) from None


def load(
    source: str | Path | bytes, *, name: str | None = None, max_bytes: int = DEFAULT_MAX_BYTES
) -> LoadedGraph:
    """Read and parse a graph from a path, ``-``, or bytes already in memory."""
    from episteme_core.api import EpistemeError

    if isinstance(source, bytes | bytearray):
        data = bytes(source)
        label = name or "graph"
        if len(data) > max_bytes:
            raise EpistemeError(
                "LIMIT_EXCEEDED",
                f"{label} is larger than {max_bytes} bytes",
                details={"source": label, "maxBytes": max_bytes, "path": "$"},
            )
    else:
        label = name or ("stdin" if str(source) == "-" else str(source))
        data = read_bytes(source, max_bytes)
    value, keys = parse_with_keys(data, label)
    return LoadedGraph(label, data, value, keys)


def load_object(
    source: str | Path | bytes, *, name: str | None = None, max_bytes: int = DEFAULT_MAX_BYTES
) -> LoadedGraph:
    """``load``, refusing anything but a JSON object at the top."""
    from episteme_core.api import EpistemeError

    graph = load(source, name=name, max_bytes=max_bytes)
    if not isinstance(graph.value, dict):
        raise EpistemeError(
            "INVALID_INPUT",
            f"{graph.name}: a graph is a JSON object, not {type(graph.value).__name__}",
            details={"source": graph.name, "path": "$"},
        )
    return graph
