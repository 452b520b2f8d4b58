"""The .knowledge.json parser and validator under hypothesis: every input ends in a result or a clean
EpistemeError, the two schema engines agree, and every export renders whatever validates or not."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from helpers import fixture_graph
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from episteme_core.api import EpistemeError
from episteme_graph import schema
from episteme_graph.exporters import EXPORTERS
from episteme_graph.load import load
from episteme_graph.validate import validate_loaded, validate_value

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=20,
)
KEYS = st.sampled_from(
    [
        "id",
        "label",
        "source",
        "target",
        "type",
        "weight",
        "cluster",
        "evidence",
        "n",
        "statements",
        "citations",
        "url",
        "resource",
        "selector",
        "place",
        "facts",
        "concepts",
        "metadata",
        "sources",
        "temporal",
        "valid_from",
        "reasoning",
        "kind",
        "text",
    ]
)
BASES = [fixture_graph("minimal"), fixture_graph("contextual")]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            found += _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            found += _paths(child, (*prefix, i))
    return found


@st.composite
def mutated_graphs(draw: st.DrawFn) -> dict[str, Any]:
    """A reference graph with a few subtrees replaced, keys added or removed."""
    graph = copy.deepcopy(draw(st.sampled_from(BASES)))
    for _ in range(draw(st.integers(1, 4))):
        paths = _paths(graph)
        path = draw(st.sampled_from(paths))
        if not path:
            continue
        parent = graph
        for key in path[:-1]:
            parent = parent[key]
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "replace":
            parent[path[-1]] = draw(JSON)
        elif action == "delete":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(KEYS)] = draw(JSON)
    return graph


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300))
def test_any_bytes_give_a_result_or_a_clean_error(data: bytes) -> None:
    try:
        graph = load(data)
    except EpistemeError as error:
        assert error.code in ("INVALID_INPUT", "LIMIT_EXCEEDED")
        return
    validate_value(graph.value).report()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(JSON)
def test_any_json_value_validates_without_a_crash(value: Any) -> None:
    report = validate_value(value).report()
    assert report["conformanceScore"] == max(0, 100 - 10 * report["errorCount"] - 2 * report["warningCount"])


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_graphs())
def test_mutated_graphs_validate_the_same_under_both_engines(graph: dict[str, Any]) -> None:
    compiled = validate_value(graph, engine="compiled")
    assert compiled.findings == validate_value(graph, engine="jsonschema").findings
    data = json.dumps(graph, ensure_ascii=False).encode("utf-8")
    loaded = load(data)
    assert validate_value(loaded.value).findings == compiled.findings
    assert validate_loaded(loaded).findings == compiled.findings  # the keys the reader gathered


SCALARS = (
    st.sampled_from(
        ["", " ", "x", "2024-13", "2024-Q5", "FY24", "1.1", "4.0", "a b", "Kebab-Case", "-a", "high"]
    )
    | st.sampled_from(
        ["http://h/p", "javascript:x", "urn:x", "sha256:" + "a" * 64, "A" * 64, "2024-01-01T00:00:00Z"]
    )
    | st.text(max_size=8)
    | st.integers(-2, 3)
    | st.sampled_from([None, True, False, 0.5, 1.5, -0.0, 2.0, [], {}, [1], ["a", "a"]])
)


@st.composite
def leaf_mutated_graphs(draw: st.DrawFn) -> dict[str, Any]:
    """A reference graph with one to three scalar values replaced by edge-case values."""
    graph = copy.deepcopy(draw(st.sampled_from(BASES)))
    leaves = [p for p in _paths(graph) if p and not isinstance(_at(graph, p), dict | list)]
    for path in draw(st.lists(st.sampled_from(leaves), min_size=1, max_size=3)):
        _at(graph, path[:-1])[path[-1]] = draw(SCALARS)
    return graph


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_graphs() | leaf_mutated_graphs())
def test_the_generated_schema_test_passes_exactly_what_jsonschema_passes(graph: dict[str, Any]) -> None:
    """The compiled engine gathers errors only where the generated test fails: the two must agree."""
    reference = schema.jsonschema_validator(private_walk=False)
    assert schema.valid(graph) == reference.is_valid(graph)
    for key in ("nodes", "edges", "evidence", "claims", "facts", "chunks"):
        for item in graph.get(key, []) if isinstance(graph.get(key), list) else []:
            alone = {**graph, key: [item]}
            assert schema.valid(alone) == reference.is_valid(alone), (key, item)


@pytest.mark.parametrize("exporter", EXPORTERS, ids=lambda e: e.graph_format)
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(graph=mutated_graphs())
def test_every_export_renders_a_broken_graph_best_effort(exporter: Any, graph: dict[str, Any]) -> None:
    assert isinstance(exporter.render(graph, {}), bytes)


@st.composite
def json_like_bytes(draw: st.DrawFn) -> bytes:
    """JSON text, sometimes cut, spliced or given a duplicate key, NaN or a lone surrogate."""
    text = json.dumps(draw(JSON), ensure_ascii=draw(st.booleans()))
    if draw(st.booleans()) and text:
        at = draw(st.integers(0, len(text)))
        text = (
            text[:at]
            + draw(st.sampled_from(['{"a":1,"a":2}', "NaN", '"\\udc00"', "[", "}", "1e999", ""]))
            + text[at:]
        )
    return text.encode("utf-8", "surrogatepass")


@settings(max_examples=300, deadline=None)
@given(json_like_bytes())
def test_the_reader_agrees_with_the_kernels_strict_json(data: bytes) -> None:
    from episteme_core.api import loads_strict
    from episteme_graph.load import parse

    try:
        kernel: Any = loads_strict(data, source="x")
    except EpistemeError:
        kernel = EpistemeError
    try:
        ours: Any = parse(data, "x")
    except EpistemeError:
        ours = EpistemeError
    if kernel is not EpistemeError and ours is EpistemeError:
        assert "Infinity" in json.dumps(kernel)  # only non-finite numbers are refused beyond the kernel
    else:
        assert ours == kernel
