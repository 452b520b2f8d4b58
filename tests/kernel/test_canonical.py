"""Canonical JSON bytes, fingerprints, and the strict JSON reader."""

from __future__ import annotations

import json

import pytest

from episteme_core.errors import EpistemeError
from episteme_core.records.canonical import (
    MAX_JSON_DEPTH,
    canonical_bytes,
    fingerprint,
    loads_strict,
    sha256_hex,
)


def test_canonical_bytes_sort_keys_use_utf8_and_end_in_newline() -> None:
    data = canonical_bytes({"b": 1, "a": ["é", {"d": None, "c": True}]})
    assert data == '{"a":["é",{"c":true,"d":null}],"b":1}\n'.encode()


def test_key_order_does_not_change_bytes_or_fingerprint() -> None:
    one = {"x": 1, "y": {"p": 2, "q": 3}}
    two = {"y": {"q": 3, "p": 2}, "x": 1}
    assert canonical_bytes(one) == canonical_bytes(two)
    assert fingerprint(one) == fingerprint(two) == sha256_hex(canonical_bytes(one))


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "\ud800"])
def test_values_json_cannot_carry_are_refused(bad: object) -> None:
    with pytest.raises(EpistemeError) as caught:
        canonical_bytes({"v": bad})
    assert caught.value.code == "INVALID_INPUT"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"a": 1, "a": 2}', "duplicate key 'a'"),
        ('{"a": NaN}', "NaN is not valid JSON"),
        ('[Infinity]', "Infinity is not valid JSON"),
        ('[-Infinity]', "-Infinity is not valid JSON"),
        ('["\\ud800"]', "lone surrogate"),
        ('{"a": ', "Expecting value"),
    ],
)
def test_strict_reader_refuses_with_invalid_input_naming_the_source(text: str, reason: str) -> None:
    with pytest.raises(EpistemeError) as caught:
        loads_strict(text.encode(), source="manifest.json")
    assert caught.value.code == "INVALID_INPUT"
    assert caught.value.message.startswith("manifest.json: ")
    assert reason in caught.value.message


def test_invalid_utf8_is_refused() -> None:
    with pytest.raises(EpistemeError) as caught:
        loads_strict(b'{"a": "\xff"}', source="x")
    assert "invalid UTF-8" in caught.value.message


def test_depth_at_the_bound_is_accepted_and_one_past_is_refused() -> None:
    at_bound = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert loads_strict(at_bound, source="deep") is not None
    past = "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1)
    with pytest.raises(EpistemeError, match="nesting deeper than 256"):
        loads_strict(past, source="deep")
    objects = '{"a":' * (MAX_JSON_DEPTH + 1) + "1" + "}" * (MAX_JSON_DEPTH + 1)
    with pytest.raises(EpistemeError, match="nesting deeper"):
        loads_strict(objects, source="deep")


def test_very_deep_input_is_refused_not_crashed() -> None:
    text = "[" * 200_000 + "]" * 200_000
    with pytest.raises(EpistemeError) as caught:
        loads_strict(text, source="deep")
    assert caught.value.code == "INVALID_INPUT"


def test_a_bom_is_tolerated_and_valid_json_round_trips() -> None:
    value = {"url": "https://example.org/", "n": [1, 2.5, None, False]}
    assert loads_strict(b"\xef\xbb\xbf" + json.dumps(value).encode(), source="x") == value


def test_canonical_pieces_refuse_what_canonical_bytes_refuses() -> None:
    from episteme_core.records.canonical import canonical_pieces

    for bad in ({"a": [1.0, float("nan")]}, {"b": {"c": "\ud800"}}):
        with pytest.raises(EpistemeError) as whole:
            canonical_bytes(bad)
        with pytest.raises(EpistemeError) as pieces:
            b"".join(canonical_pieces(bad))
        assert whole.value.code == pieces.value.code == "INVALID_INPUT"
