"""No rule of validation or merge is super-linear: counted, not timed.

Every string of a generated graph (its metadata aside) is replaced by a string subclass that counts
its comparisons. A set lookup compares an id once; a list scan (``x in concepts``) compares it with
each item. So a linear rule makes about four times as many comparisons for a graph four times as
large, a quadratic one sixteen times: the tests allow eight.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from episteme_graph.audit import audit_merge
from episteme_graph.generate import synthetic_graph
from episteme_graph.jsontext import indented
from episteme_graph.merge import merge_graphs
from episteme_graph.validate import validate_value

COMPARISONS = [0]
GROWTH = 8  # a graph 4x larger may cost this many times the comparisons (linear: 4, quadratic: 16)


class CountedStr(str):
    """A string that counts each time it is compared (``==`` or ``!=``)."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        COMPARISONS[0] += 1
        return str.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        COMPARISONS[0] += 1
        return str.__ne__(self, other)

    __hash__ = str.__hash__


def counted(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: counted(item) for key, item in value.items()}
    if isinstance(value, list):
        return [counted(item) for item in value]
    return CountedStr(value) if type(value) is str else value


def one_cluster(nodes: int) -> dict[str, Any]:
    """A valid graph whose concepts all sit in one cluster (where a list scan would show most)."""
    graph = synthetic_graph(nodes, clusters=1)
    # Many claims of one node, each a statement of it: the claim-projection rule's worst case.
    hub = graph["nodes"][0]
    for i in range(nodes // 4):
        statement = f"N0 is also described as number {i}. [1]"
        hub["statements"].append(statement)
        graph["claims"].append({**graph["claims"][0], "id": f"claim:hub:{i}", "statement": statement})
        hub["claim_ids"].append(f"claim:hub:{i}")
    from episteme_graph.merge import recompute

    recompute(graph)
    return {
        **{key: counted(value) for key, value in graph.items() if key != "metadata"},
        "metadata": graph["metadata"],
    }


def comparisons(step: Any) -> int:
    COMPARISONS[0] = 0
    step()
    return COMPARISONS[0]


def growth(step_for: Any) -> float:
    small, large = comparisons(step_for(500)), comparisons(step_for(2000))
    return large / max(small, 1)


def test_validation_grows_linearly_in_a_clusters_size() -> None:
    graphs = {n: one_cluster(n) for n in (500, 2000)}
    assert validate_value(graphs[500]).ok, validate_value(graphs[500]).findings[:3]
    assert growth(lambda n: lambda: validate_value(graphs[n])) < GROWTH


def test_merging_a_graph_into_itself_grows_linearly() -> None:
    graphs = {n: one_cluster(n) for n in (500, 2000)}

    def merged(n: int) -> Any:
        def step() -> None:
            report = merge_graphs(graphs[n], graphs[n])
            assert not audit_merge(graphs[n], graphs[n], report)

        return step

    assert growth(merged) < GROWTH


def test_facts_in_one_large_group_get_a_linear_number_of_conflicts() -> None:
    """Facts of one concept, metric and time with different values: every pair is a conflict up to
    16 facts; past that, each fact is joined to one other, never to every other."""
    from episteme_graph.merge import PAIRWISE_GROUP

    def with_facts(count: int) -> dict[str, Any]:
        graph = synthetic_graph(2, clusters=1)
        template = graph["facts"][0]
        graph["facts"] = [{**template, "id": f"fact-{i}", "value": str(i)} for i in range(count)]
        return graph

    small = merge_graphs(with_facts(4), with_facts(4))
    assert len(small.recorded_conflicts) == 6  # every pair
    large = merge_graphs(with_facts(200), with_facts(200))
    assert 200 - 1 <= len(large.recorded_conflicts) < 2 * 200
    assert PAIRWISE_GROUP < 200


def test_unique_items_is_linear_and_means_json_equality() -> None:
    from episteme_graph.schema import _json_equal, _unique

    assert _unique(list(range(100_000)))  # a pairwise check would take minutes
    assert not _unique([1, 1.0]) and _unique([1, True]) and not _unique([{"a": [1]}, {"a": [1.0]}])
    assert _unique([{"a": 1, "b": 2}, {"a": 2, "b": 1}]) and not _unique([{"a": 1, "b": 2}, {"b": 2, "a": 1}])
    values = [0, False, None, "0", [0], {"0": 0}, 0.0, [False]]
    for i, a in enumerate(values):
        for b in values[i + 1 :]:
            assert _unique([a, b]) is not _json_equal(a, b), (a, b)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(JSON)
def test_the_fast_indented_writer_gives_json_dumps_text(value: Any) -> None:
    assert indented(value) == json.dumps(value, ensure_ascii=False, indent=2, allow_nan=False)
