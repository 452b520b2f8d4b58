"""Canonical JSON text at the rate merges and exports need it: the kernel's form, one encoder.

A merge or an export encodes tens of thousands of small values (list items to compare, records to
embed). ``json.dumps`` with options builds a new encoder on every call, which costs more than the
encoding of a small value; this module keeps one. The text is exactly the kernel's canonical JSON
(``episteme_core.api.canonical_text``: keys sorted, no spaces, UTF-8 characters as they are, no NaN
or Infinity), which a test holds equal on the reference graphs and on generated values.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

import attrs

_ENCODER = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
# The C encoder behind JSONEncoder.encode (CPython's json.encoder.c_make_encoder, the same arguments
# encode() gives it), made once: encode() makes it again on every call, which costs more than
# encoding a small record (a 10,000-concept export encodes 52,000). Without the C accelerator, or
# should its signature change, encode() serves. No circular-reference table: JSON read from bytes
# has no cycles, and a cyclic value still stops with RecursionError.
_MAKE_ENCODER: Any = getattr(json.encoder, "c_make_encoder", None)
try:
    _C_ENCODE: Any = _MAKE_ENCODER(
        None, _ENCODER.default, json.encoder.encode_basestring, None, ":", ",", True, False, False
    )
    if "".join(_C_ENCODE({"b": [1.5, None], "a": "\u00e9"}, 0)) != _ENCODER.encode(
        {"b": [1.5, None], "a": "\u00e9"}
    ):
        _C_ENCODE = None
except TypeError:  # no C accelerator (None is not callable), or other arguments
    _C_ENCODE = None


def canonical(value: Any) -> str:
    """The canonical JSON text of ``value``, without a newline. A value JSON cannot hold (NaN,
    Infinity) is ``INVALID_INPUT``, as in the kernel. Lone surrogates pass here: a graph read by
    ``load`` never holds one, and writing the text as UTF-8 refuses them."""
    try:
        if _C_ENCODE is None:
            return _ENCODER.encode(value)
        return "".join(_C_ENCODE(value, 0))
    except ValueError as exc:
        from episteme_core.api import EpistemeError

        raise EpistemeError("INVALID_INPUT", f"value cannot be written as canonical JSON: {exc}") from exc


LINE_BREAKERS = {"\u0085": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def one_line(text: str) -> str:
    """Canonical JSON text on one physical line: U+0085, U+2028 and U+2029 escaped too (JSON allows
    them raw; a line reader may not)."""
    if any(char in text for char in LINE_BREAKERS):
        for char, escaped in LINE_BREAKERS.items():
            text = text.replace(char, escaped)
    return text


@attrs.frozen
class EncodedGraph:
    """A graph's canonical JSON text and the text of each item of its top-level lists, each encoded
    once. Canonical JSON is compositional (a list is its items' texts joined by commas, an object its
    members sorted by key), so the whole is assembled from the parts an export embeds anyway."""

    text: str
    parts: dict[int, str]  # id() of a top-level list item -> its canonical text
    breaks_lines: bool = attrs.field(init=False)

    @breaks_lines.default
    def _breaks_lines(self) -> bool:
        return any(char in self.text for char in LINE_BREAKERS)

    def of(self, item: Any) -> str:
        """The canonical text of ``item``: looked up when it is a top-level list item of the graph."""
        found = self.parts.get(id(item))
        return found if found is not None else canonical(item)

    def line_of(self, item: Any) -> str:
        """``one_line(of(item))``; the line breakers are looked for once in the whole graph rather
        than in each of its items."""
        found = self.parts.get(id(item))
        if found is None:
            return one_line(canonical(item))
        return one_line(found) if self.breaks_lines else found

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


def encode_graph(graph: Any) -> EncodedGraph:
    """``EncodedGraph`` of ``graph``; ``text`` equals ``canonical(graph)``. Valid while the graph is
    not changed (parts are found by object identity)."""
    if not isinstance(graph, dict) or not all(type(key) is str for key in graph):
        return EncodedGraph(canonical(graph), {})
    members: list[str] = []
    parts: dict[int, str] = {}
    for key in sorted(graph):
        value = graph[key]
        if type(value) is list:
            texts = list(map(canonical, value))
            parts.update(zip(map(id, value), texts, strict=True))
            members.append(f"{canonical(key)}:[{','.join(texts)}]")
        else:
            members.append(f"{canonical(key)}:{canonical(value)}")
    return EncodedGraph("{" + ",".join(members) + "}", parts)


_ENCODE_STRING: Any = json.encoder.encode_basestring  # the C function where the accelerator is built


class _Unusual(Exception):
    """A value the fast indenting writer leaves to ``json.dumps`` (a key that is not a string, a
    type JSON read from bytes never holds)."""


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    kind = type(value)
    if kind is int:
        return int.__repr__(value)
    if kind is float:
        if value != value or value in (math.inf, -math.inf):
            raise ValueError(f"Out of range float values are not JSON compliant: {value!r}")
        return float.__repr__(value)
    raise _Unusual


def _indented(value: Any, level: int) -> str:
    """One value at nesting ``level``; strings (most leaves) are encoded in the loops themselves,
    without a call per leaf."""
    kind = type(value)
    if kind is str:
        return str(_ENCODE_STRING(value))
    if kind is not dict and kind is not list:
        return _scalar(value)
    if not value:
        return "{}" if kind is dict else "[]"
    encode, inner = _ENCODE_STRING, level + 1
    parts = []
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str:
                raise _Unusual
            parts.append(encode(key) + ": " + (encode(item) if type(item) is str else _indented(item, inner)))
    else:
        parts = [encode(item) if type(item) is str else _indented(item, inner) for item in value]
    pad = "\n" + "  " * inner
    opening, closing = ("{", "}") if kind is dict else ("[", "]")
    return opening + pad + ("," + pad).join(parts) + "\n" + "  " * level + closing


def indented(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, indent=2, allow_nan=False)``, the same text, about four
    times faster: ``json.dumps`` runs its pure-Python encoder whenever ``indent`` is set (13 s for a
    200 MB graph); this writer joins strings per container and encodes strings in C."""
    try:
        return _indented(value, 0)
    except _Unusual:
        return json.dumps(value, ensure_ascii=False, indent=2, allow_nan=False)
