"""Reading a ``.knowledge.json`` graph once, bounded and strict; every failure is a clean error at ``$``."""

from __future__ import annotations

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


def parse(data: bytes, name: str) -> Any:
    """Strict JSON: no duplicate keys, NaN, lone surrogates, invalid UTF-8, depth past 256, huge numbers."""
    from episteme_core.api import EpistemeError, loads_strict

    try:
        return loads_strict(data, source=name, max_depth=MAX_DEPTH)
    except EpistemeError as error:
        raise EpistemeError(
            error.code, error.message, details={**(error.details or {}), "path": "$"}
        ) from error
    except (ValueError, RecursionError, MemoryError) as exc:
        # int() refuses numbers of more than 4,300 digits with a plain ValueError.
        reason = str(exc).split("\n")[0] or type(exc).__name__
        raise EpistemeError(
            "INVALID_INPUT",
            f"{name}: not valid JSON: {reason}",
            details={"source": name, "reason": reason, "path": "$"},
        ) from exc


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
