"""The plugin's canonical JSON text is the kernel's, whole or assembled from a graph's parts."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import fixture_graph
from hypothesis import given, settings
from hypothesis import strategies as st

from episteme_core.api import EpistemeError, canonical_text
from episteme_graph.generate import synthetic_graph
from episteme_graph.jsontext import canonical, encode_graph, one_line

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=25,
)


@settings(max_examples=200, deadline=None)
@given(JSON)
def test_canonical_is_the_kernels_text(value: Any) -> None:
    assert canonical(value) == canonical_text(value)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=8), JSON | st.lists(JSON, max_size=5), max_size=6))
def test_a_graph_assembled_from_its_parts_is_the_kernels_text(graph: dict[str, Any]) -> None:
    encoded = encode_graph(graph)
    assert encoded.text == canonical_text(graph)
    for value in graph.values():
        for item in value if isinstance(value, list) else []:
            assert encoded.of(item) == canonical_text(item)


@pytest.mark.parametrize(
    "graph", [fixture_graph("minimal"), fixture_graph("contextual"), synthetic_graph(40)]
)
def test_reference_graphs_encode_as_the_kernel_does(graph: dict[str, Any]) -> None:
    encoded = encode_graph(graph)
    assert encoded.text == canonical_text(graph)
    assert all(encoded.of(node) == canonical_text(node) for node in graph["nodes"])
    assert not encoded.breaks_lines


def test_line_breakers_are_escaped_in_lines_wherever_they_are() -> None:
    graph = {"nodes": [{"id": "a", "label": "one\u2028two"}, {"id": "b"}], "x": "\u0085"}
    encoded = encode_graph(graph)
    assert encoded.breaks_lines
    assert encoded.line_of(graph["nodes"][0]) == '{"id":"a","label":"one\\u2028two"}'
    assert encoded.line_of({"other": "\u2029"}) == '{"other":"\\u2029"}'  # not a part: encoded now
    assert one_line(canonical("\u0085")) == '"\\u0085"'


def test_a_value_json_cannot_hold_is_a_clean_error() -> None:
    with pytest.raises(EpistemeError) as caught:
        canonical({"weight": float("nan")})
    assert caught.value.code == "INVALID_INPUT"
