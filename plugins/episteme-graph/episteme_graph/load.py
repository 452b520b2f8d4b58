"""Reading a ``.knowledge.json`` graph once, bounded and strict; every failure is a clean error at ``$``."""

from __future__ import annotations

import json
import math
import re
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


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Refused(f"duplicate key {key!r}")
            seen.add(key)
    return value


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"{text[:20]} is beyond a finite number")
    return value


def _constant(name: str) -> Any:
    raise _Refused(f"{name} is not valid JSON")


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


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


def _check(value: Any, text: str) -> frozenset[str]:
    """Depth within the bound and, only where the text escapes a surrogate at all, no lone
    surrogate in any string; the document's keys, which the private-reasoning rule needs."""
    keys = object_keys(value, MAX_DEPTH)
    if _SURROGATE_ESCAPE.search(text):
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise _Refused("string holds a lone surrogate") from None
    return keys


def parse(data: bytes, name: str) -> Any:
    """Strict JSON by the kernel's rules (no duplicate keys, NaN or Infinity, lone surrogates, invalid
    UTF-8, nesting past 256), plus numbers of at most 4,300 digits, checked in C-speed passes: the
    kernel's ``loads_strict`` walks every value in Python, half a second on a 20 MB graph."""
    return parse_with_keys(data, name)[0]


def parse_with_keys(data: bytes, name: str) -> tuple[Any, frozenset[str]]:
    """``parse``, and every object key of the document (gathered by the depth check's walk)."""
    from episteme_core.api import EpistemeError

    try:
        text = data.decode("utf-8")
        if text.startswith("\ufeff"):
            text = text[1:]
        with paused_cycle_gc():
            value = json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant, parse_float=_float)
            return value, _check(value, text)
    except UnicodeDecodeError as exc:
        reason = f"invalid UTF-8 at byte {exc.start}"
    except RecursionError:
        reason = f"nesting deeper than {MAX_DEPTH}"
    except _Refused as exc:
        reason = str(exc)
    except json.JSONDecodeError as exc:
        reason = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    except (ValueError, MemoryError) as exc:  # int() refuses numbers of more than 4,300 digits
        reason = str(exc).split("\n")[0] or type(exc).__name__
    raise EpistemeError(
        "INVALID_INPUT",
        f"{name}: not valid JSON: {reason}",
        details={"source": name, "reason": reason, "path": "$"},
    )


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
