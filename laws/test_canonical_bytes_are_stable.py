"""CanonicalBytesAreStable: the same value gives the same canonical bytes, whatever the dict order or PYTHONHASHSEED.

Checked in this process over reordered dicts, and across new processes whose hash seeds differ.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from episteme_core.records.canonical import (
    canonical_bytes,
    canonical_pieces,
    fingerprint,
    fingerprint_pieces,
    loads_strict,
)
from episteme_core.testing.strategies import json_values


def _shuffled(value: Any, rng: random.Random) -> Any:
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {k: _shuffled(v, rng) for k, v in items}
    if isinstance(value, list):
        return [_shuffled(v, rng) for v in value]
    return value


@given(json_values, st.integers(min_value=0, max_value=2**32))
def test_dict_order_never_changes_the_bytes(value: Any, seed: int) -> None:
    assert canonical_bytes(_shuffled(value, random.Random(seed))) == canonical_bytes(value)


@given(json_values, st.integers(min_value=0, max_value=5), st.integers(min_value=1, max_value=64))
def test_canonical_pieces_join_to_the_canonical_bytes(value: Any, depth: int, piece_bytes: int) -> None:
    """What a large document is hashed and written from, in pieces, is the same bytes."""
    pieces = list(canonical_pieces(_shuffled(value, random.Random(depth)), depth=depth, piece_bytes=piece_bytes))
    assert b"".join(pieces) == canonical_bytes(value)
    assert fingerprint_pieces(value) == fingerprint(value)


@given(json_values)
def test_canonical_bytes_read_back_to_the_same_value_and_bytes(value: Any) -> None:
    data = canonical_bytes(value)
    assert data.endswith(b"\n") and b"\n" not in data[:-1]
    assert canonical_bytes(loads_strict(data, source="law")) == data


_CHILD = """
import json, sys
from episteme_core.records.canonical import canonical_bytes
values = json.load(sys.stdin)
# Route every dict through a set of keys, whose order follows PYTHONHASHSEED.
def rebuild(v):
    if isinstance(v, dict):
        return {k: rebuild(v[k]) for k in set(v)}
    if isinstance(v, list):
        return [rebuild(x) for x in v]
    return v
sys.stdout.buffer.write(b"".join(canonical_bytes(rebuild(v)) for v in values))
"""


@settings(max_examples=5, deadline=None)
@given(st.lists(json_values, min_size=1, max_size=20))
def test_hash_seed_never_changes_the_bytes(values: list[Any]) -> None:
    payload = json.dumps(values).encode()
    outputs = set()
    for seed in ("1", "987654"):
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD], input=payload, capture_output=True, check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        outputs.add(proc.stdout)
    assert outputs == {b"".join(canonical_bytes(v) for v in values)}
