"""One canonical JSON form for every artifact, fingerprints over it, and strict JSON input.

Canonical bytes: keys sorted, UTF-8, separators "," and ":", no NaN or Infinity, one trailing newline.
Derived bytes depend only on the value, never on dict order or PYTHONHASHSEED.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator
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


def canonical_pieces(
    value: Any, *, depth: int = 4, piece_bytes: int = 1 << 20, omit: tuple[str, ...] = ()
) -> Iterator[bytes | memoryview]:
    """``canonical_bytes`` of ``value`` (or of its record's JSON: an attrs record is read as
    ``plain`` makes it, camelCase keys) in pieces of about ``piece_bytes``, leaving out the
    top-level keys in ``omit``. The top ``depth`` levels of dicts, lists and records are walked
    here, each value below them made plain and written by ``json.dumps``: a book's document (a
    section of 100,000 blocks) is hashed or written without its JSON, or a tree of dicts of it, ever
    held whole. The pieces joined are the canonical bytes, byte for byte."""

    def encoded() -> Iterator[bytes]:
        for text in _pieces(value, depth, omit, piece_bytes):
            yield text.encode("utf-8")
        yield b"\n"

    try:
        yield from gathered(encoded(), piece_bytes)
    except (ValueError, UnicodeEncodeError) as exc:
        raise EpistemeError("INVALID_INPUT", f"value cannot be written as canonical JSON: {exc}") from exc


def gathered(chunks: Iterable[bytes | memoryview], piece_bytes: int) -> Iterator[bytes | memoryview]:
    """``chunks`` gathered into pieces of about ``piece_bytes`` (what a writer hashes and writes); a
    chunk at least that large goes out as it is, after what was gathered before it, never copied."""
    piece = bytearray()
    for chunk in chunks:
        if len(chunk) >= piece_bytes:
            if piece:
                yield bytes(piece)
                piece.clear()
            yield chunk
            continue
        piece += chunk
        if len(piece) >= piece_bytes:
            yield bytes(piece)
            piece.clear()
    if piece:
        yield bytes(piece)


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _pieces(value: Any, depth: int, omit: tuple[str, ...] = (), piece_bytes: int = 1 << 20) -> Iterator[str]:
    import attrs

    from episteme_core.records.convert import plain, record_fields

    if attrs.has(type(value)):
        if depth <= 0:
            yield _dumps(plain(value))
            return
        pairs = sorted((key, name) for name, key in record_fields(type(value)) if key not in omit)
        yield from _object(((key, getattr(value, name)) for key, name in pairs), depth, piece_bytes)
    elif depth <= 0 or not isinstance(value, dict | list | tuple) or not value:
        yield _dumps(plain(value) if isinstance(value, dict | list | tuple) else value)
    elif isinstance(value, dict):
        if not all(isinstance(key, str) for key in value):  # json's own key coercion and order
            yield _dumps({key: item for key, item in value.items() if key not in omit})
            return
        items = ((key, value[key]) for key in sorted(value) if key not in omit)
        yield from _object(items, depth, piece_bytes)
    elif depth == 1:  # items written by json.dumps in groups of about piece_bytes (a call each costs more)
        start, size = 0, 16
        while start < len(value):
            group = _dumps([plain(item) for item in value[start : start + size]])
            yield ("[" if start == 0 else ",") + group[1:-1]
            start += size
            size = max(1, min(_GROUP, size * piece_bytes // max(1, len(group))))
        yield "]"
    else:
        opener = "["
        for item in value:
            yield opener
            yield from _pieces(item, depth - 1, (), piece_bytes)
            opener = ","
        yield "]"


_GROUP = 256


def _object(pairs: Iterator[tuple[str, Any]], depth: int, piece_bytes: int) -> Iterator[str]:
    opener = "{"
    for key, item in pairs:
        yield opener + json.dumps(key, ensure_ascii=False) + ":"
        yield from _pieces(item, depth - 1, (), piece_bytes)
        opener = ","
    yield "{}" if opener == "{" else "}"


def fingerprint_pieces(value: Any, *, omit: tuple[str, ...] = ()) -> str:
    """``fingerprint`` of ``value`` (less its top-level keys in ``omit``), hashed from
    ``canonical_pieces``: never the whole JSON at once."""
    digest = hashlib.sha256()
    for piece in canonical_pieces(value, omit=omit):
        digest.update(piece)
    return digest.hexdigest()


def _reject_constant(name: str) -> Any:
    raise _StrictError(f"{name} is not valid JSON")


class _StrictError(ValueError):
    pass


def _pairs_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):  # only then look for which key came twice
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _StrictError(f"duplicate key {key!r}")
            seen.add(key)
    return result


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise _StrictError(f"the number {text[:40]} is too large for a double")
    return value


def _check_depth(value: Any, max_depth: int) -> None:
    """Refuse nesting past ``max_depth``, one level at a time, visiting containers only."""
    level = [value] if type(value) in (dict, list) else []
    depth = 0
    while level:
        depth += 1
        if depth > max_depth:
            raise _StrictError(f"nesting deeper than {max_depth}")
        children: list[Any] = []
        for item in level:
            values = item.values() if type(item) is dict else item
            children.extend(c for c in values if type(c) in (dict, list))
        level = children


# A lone surrogate can only enter through an escape (``\ud800``) when the input was valid UTF-8.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def loads_strict(data: bytes | str, *, source: str, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """Parse JSON strictly or raise ``INVALID_INPUT`` naming ``source``.

    Refused: invalid UTF-8, duplicate keys, NaN/Infinity (and numbers too large for a double),
    integers of more than 4,300 digits, lone surrogates, nesting past ``max_depth``. A syntax error
    says where: ``details`` holds its ``line``, ``column`` and character ``offset``. The checks run at
    C speed (a 20 MB document in about the time of ``json.loads``): only where an object has fewer
    keys than pairs is it searched for the duplicate, only containers are walked for depth, and
    strings are re-encoded only where the text escapes a surrogate.
    """
    where: dict[str, int] = {}
    try:
        if isinstance(data, bytes):
            text = data.decode("utf-8")
        else:
            text = data
            text.encode("utf-8")  # a str may hold a lone surrogate itself
        if text.startswith("\ufeff"):
            text = text[1:]
        value = json.loads(text, object_pairs_hook=_pairs_without_duplicates,
                           parse_constant=_reject_constant, parse_float=_finite_float)
        _check_depth(value, max_depth)
        if _SURROGATE_ESCAPE.search(text):
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        return value
    except UnicodeDecodeError as exc:
        reason = f"invalid UTF-8 at byte {exc.start}"
    except UnicodeEncodeError:
        reason = "string holds a lone surrogate"
    except RecursionError:
        reason = f"nesting deeper than {max_depth}"
    except _StrictError as exc:
        reason = str(exc)
    except json.JSONDecodeError as exc:
        reason = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
        where = {"line": exc.lineno, "column": exc.colno, "offset": exc.pos}
    except ValueError as exc:  # int() refuses more than 4,300 digits (CVE-2020-10735)
        digits = re.search(r"value has (\d+) digits", str(exc))
        if digits is None:
            raise
        reason = f"an integer of {digits.group(1)} digits (at most {MAX_INT_DIGITS})"
    raise EpistemeError(
        "INVALID_INPUT",
        f"{source}: not valid JSON: {reason}",
        details={"source": source, "reason": reason, **where},
    )
