"""One canonical JSON form for every artifact, fingerprints over it, and strict JSON input.

Canonical bytes: keys sorted, UTF-8, separators "," and ":", no NaN or Infinity, one trailing newline.
Derived bytes depend only on the value, never on dict order or PYTHONHASHSEED.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from episteme_core.errors import EpistemeError

MAX_JSON_DEPTH = 256
# Python refuses to convert longer digit strings (CVE-2020-10735); JSON input gets a clear refusal.
MAX_INT_DIGITS = 4300


def canonical_bytes(value: Any) -> bytes:
    """Encode ``value`` as canonical JSON bytes (with a trailing newline)."""
    try:
        text = json.dumps(
            value, sort_keys=True, ensure_ascii=False, allow_nan=False, separators=(",", ":")
        )
        return (text + "\n").encode("utf-8")
    except (ValueError, UnicodeEncodeError) as exc:
        raise EpistemeError(
            "INVALID_INPUT", f"value cannot be written as canonical JSON: {exc}"
        ) from exc


def canonical_text(value: Any) -> str:
    """Canonical JSON as one line of text, without the trailing newline."""
    return canonical_bytes(value)[:-1].decode("utf-8")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fingerprint(value: Any) -> str:
    """sha256 of the canonical bytes of ``value``."""
    return sha256_hex(canonical_bytes(value))


def _reject_constant(name: str) -> Any:
    raise _StrictError(f"{name} is not valid JSON")


class _StrictError(ValueError):
    pass


def _pairs_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _StrictError(f"duplicate key {key!r}")
        result[key] = value
    return result


def _bounded_int(text: str) -> int:
    digits = len(text) - (text[:1] == "-")
    if digits > MAX_INT_DIGITS:
        raise _StrictError(f"an integer of {digits} digits (at most {MAX_INT_DIGITS})")
    return int(text)


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise _StrictError(f"the number {text[:40]} is too large for a double")
    return value


def _check_tree(value: Any, max_depth: int) -> None:
    """Walk iteratively: refuse depth past the bound and strings holding lone surrogates."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            if depth > max_depth:
                raise _StrictError(f"nesting deeper than {max_depth}")
            for key, child in item.items():
                _check_string(key)
                stack.append((child, depth + 1))
        elif isinstance(item, list):
            if depth > max_depth:
                raise _StrictError(f"nesting deeper than {max_depth}")
            stack.extend((child, depth + 1) for child in item)
        elif isinstance(item, str):
            _check_string(item)


def _check_string(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _StrictError("string holds a lone surrogate") from exc


def loads_strict(data: bytes | str, *, source: str, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """Parse JSON strictly or raise ``INVALID_INPUT`` naming ``source``.

    Refused: invalid UTF-8, duplicate keys, NaN/Infinity (and numbers too large for a double),
    integers of more than 4,300 digits, lone surrogates, nesting past ``max_depth``.
    """
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        if text.startswith("\ufeff"):
            text = text[1:]
        value = json.loads(
            text,
            object_pairs_hook=_pairs_without_duplicates,
            parse_constant=_reject_constant,
            parse_int=_bounded_int,
            parse_float=_finite_float,
        )
        _check_tree(value, max_depth)
        return value
    except UnicodeDecodeError as exc:
        reason = f"invalid UTF-8 at byte {exc.start}"
    except RecursionError:
        reason = f"nesting deeper than {max_depth}"
    except _StrictError as exc:
        reason = str(exc)
    except json.JSONDecodeError as exc:
        reason = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    raise EpistemeError(
        "INVALID_INPUT",
        f"{source}: not valid JSON: {reason}",
        details={"source": source, "reason": reason},
    )
