"""Reading a ``.knowledge.json`` graph once, bounded and strict; every failure is a clean error at ``$``."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import attrs

MIB = 1024 * 1024
DEFAULT_MAX_BYTES = 64 * MIB
MAX_DEPTH = 256


@attrs.frozen
class LoadedGraph:
    """A parsed graph, the bytes it came from, and the name to report it by."""

    name: str
    data: bytes
    value: Any

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


def _check(value: Any, text: str) -> None:
    """Depth within the bound (only containers are walked) and, only where the text escapes a
    surrogate at all, no lone surrogate in any string."""
    containers = (dict, list)
    stack: list[tuple[Any, int]] = [(value, 1)] if type(value) in containers else []
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise _Refused(f"nesting deeper than {MAX_DEPTH}")
        children = item.values() if type(item) is dict else item
        stack.extend((child, depth + 1) for child in children if type(child) in containers)
    if _SURROGATE_ESCAPE.search(text):
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise _Refused("string holds a lone surrogate") from None


def parse(data: bytes, name: str) -> Any:
    """Strict JSON by the kernel's rules (no duplicate keys, NaN or Infinity, lone surrogates, invalid
    UTF-8, nesting past 256), plus numbers of at most 4,300 digits, checked in C-speed passes: the
    kernel's ``loads_strict`` walks every value in Python, half a second on a 20 MB graph."""
    from episteme_core.api import EpistemeError

    try:
        text = data.decode("utf-8")
        if text.startswith("\ufeff"):
            text = text[1:]
        value = json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant, parse_float=_float)
        _check(value, text)
        return value
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
    return LoadedGraph(label, data, parse(data, label))


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
