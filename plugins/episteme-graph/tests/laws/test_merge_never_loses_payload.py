"""MergeNeverLosesPayload: under every policy, a merge either fails cleanly, changing nothing, or its output holds every payload of both inputs, except each value a policy chose against, which its report records with its path."""  # noqa: E501

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from episteme_core.api import canonical_text
from episteme_core.testing import invoke
from episteme_graph.generate import synthetic_graph
from episteme_graph.merge import DERIVED_METADATA, MergeConflict, merge_graphs, recompute
from episteme_graph.policy import At, MergePolicy
from episteme_graph.validate import validate_value

TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=12)
FIELDS = ("label", "definition", "relevance", "note")


def leaves(value: Any, prefix: tuple[Any, ...] = ()) -> set[tuple[Any, ...]]:
    """Every non-empty scalar under its key path, and every list item (as canonical JSON) under its list."""
    found: set[tuple[Any, ...]] = set()
    if isinstance(value, dict):
        for key, child in value.items():
            found |= leaves(child, (*prefix, key))
    elif isinstance(value, list):
        for item in value:
            found.add((*prefix, "[]", canonical_text(item)))
    elif value is not None and value != "":
        found.add((*prefix, canonical_text(value)))
    return found


def entities(graph: dict[str, Any]) -> dict[tuple[str, str], Any]:
    """Each identified record of a graph, by (collection, identity)."""
    out: dict[tuple[str, str], Any] = {}
    out[("metadata", "")] = {k: v for k, v in graph["metadata"].items() if k not in DERIVED_METADATA}
    for source in graph["metadata"]["sources"]:
        out[("sources", source["id"])] = source
    for collection in ("nodes", "facts", "evidence", "claims", "chunks", "fact_conflicts"):
        for item in graph.get(collection, []):
            out[(collection, item["id"])] = item
    for cluster in graph["clusters"]:
        out[("clusters", cluster["id"])] = {k: v for k, v in cluster.items() if k != "concepts"}
    for edge in graph["edges"]:
        out[("edges", edge["id"])] = edge
    return out


@st.composite
def graph_pairs(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """A base graph and an incoming one that shares some records, enriches or contradicts some, and
    adds others."""
    size = draw(st.integers(2, 6))
    base = synthetic_graph(size, clusters=2, seed=draw(st.integers(0, 5)))
    incoming = copy.deepcopy(base)
    for node in incoming["nodes"]:
        action = draw(st.sampled_from(["keep", "enrich", "statement", "contradict"]))
        if action == "enrich":
            node["note"] = draw(TEXT)
        elif action == "statement":
            node["statements"].append(draw(TEXT).replace("[", "(") + " [1]")
        elif action == "contradict":
            node[draw(st.sampled_from(FIELDS))] = draw(TEXT)
    for fact in incoming["facts"]:
        if draw(st.booleans()):
            fact["value"] = draw(TEXT)  # a contradiction: fails, or is kept aside under "record"
    if draw(st.booleans()):
        incoming["metadata"]["title"] = draw(TEXT)
    for edge in incoming["edges"]:
        if draw(st.integers(0, 3)) == 0:
            edge["weight"] = draw(st.sampled_from([0.0, 0.25, 1.0]))
    extra = synthetic_graph(draw(st.integers(0, 3)), clusters=2, prefix="m", seed=draw(st.integers(0, 5)))
    for key in ("nodes", "edges", "evidence", "claims", "facts", "chunks"):
        incoming[key] = [*incoming[key], *extra[key]]
    incoming["open_questions"] = draw(st.lists(TEXT, max_size=2))
    recompute(incoming)
    return base, incoming


PATTERNS = (
    "metadata.title",
    "metadata",
    "nodes[*].definition",
    "nodes[*].label",
    "nodes[*]",
    "edges[*].weight",
    "facts[*].value",
    "facts[*]",
)


@st.composite
def policies(draw: st.DrawFn) -> MergePolicy:
    """The seed's policy (every contradiction fails), a side for every scalar conflict, preferences
    by path, or both, with either fact policy."""
    prefer = draw(st.sampled_from([[], ["base"], ["incoming"]]))
    paths = draw(st.lists(st.sampled_from(PATTERNS), max_size=3, unique=True))
    options = prefer + [f"{p}={draw(st.sampled_from(['base', 'incoming']))}" for p in paths]
    return MergePolicy.from_options(draw(st.sampled_from(["error", "record"])), options)


def recorded_losses(report: Any, side: str) -> dict[tuple[str, str], set[tuple[Any, ...]]]:
    """What the policy chose against, per record: the leaves of each value not kept, under their
    path inside the record (the law's own reading of ``report.resolutions``)."""
    out: dict[tuple[str, str], set[tuple[Any, ...]]] = {}
    for resolution in report.resolutions:
        if resolution.kept == side:
            continue
        steps = list(resolution.path)
        if steps[:2] == ["metadata", "sources"]:
            key, rest = ("sources", steps[2].ident), steps[3:]
        elif steps[0] == "metadata":
            key, rest = ("metadata", ""), steps[1:]
        else:
            assert isinstance(steps[1], At)
            key, rest = (steps[0], steps[1].ident), steps[2:]
        lost = resolution.base if side == "base" else resolution.incoming
        out.setdefault(key, set()).update(leaves(lost, tuple(rest)))
    return out


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graph_pairs(), policies())
def test_merge_never_loses_payload(pair: tuple[dict[str, Any], dict[str, Any]], policy: MergePolicy) -> None:
    base, incoming = pair
    assert validate_value(base).ok and validate_value(incoming).ok
    frozen = (canonical_text(base), canonical_text(incoming))
    try:
        report = merge_graphs(base, incoming, policy)
    except MergeConflict as conflict:
        assert (canonical_text(base), canonical_text(incoming)) == frozen  # inputs untouched
        settles = policy.choose(conflict.steps) is not None and conflict.steps[0] != "facts"
        assert not (settles and conflict.resolvable)  # what a policy settles is never refused
        event("refused")
        return
    event("merged, with settled conflicts" if report.resolutions else "merged")
    assert (canonical_text(base), canonical_text(incoming)) == frozen
    merged = entities(report.graph)
    for side, graph in (("base", base), ("incoming", incoming)):
        losses = recorded_losses(report, side)
        for key, record in entities(graph).items():
            if graph is incoming and key[0] == "facts" and key[1] in report.fact_aliases:
                key = ("facts", report.fact_aliases[key[1]])
                record = {**record, "id": key[1]}
            assert key in merged, key
            missing = leaves(record) - leaves(merged[key])
            derived = {leaf for leaf in missing if leaf[0] == "id"}  # edge ids are recomputed, equal anyway
            assert not missing - derived - losses.get(key, set()), (side, key, missing)
    for resolution in report.resolutions:  # only a policy chooses, and only where it says
        assert policy.choose(resolution.path) == (resolution.kept, resolution.rule)
    assert validate_value(report.graph).ok


def test_a_refused_merge_writes_no_file(tmp_path: Path) -> None:
    base = synthetic_graph(3)
    incoming = copy.deepcopy(base)
    incoming["nodes"][0]["definition"] = "Something else entirely."
    (tmp_path / "b.knowledge.json").write_text(json.dumps(base))
    (tmp_path / "i.knowledge.json").write_text(json.dumps(incoming))
    before = sorted(p.name for p in tmp_path.iterdir())
    result = invoke(
        "graph",
        "merge",
        str(tmp_path / "b.knowledge.json"),
        str(tmp_path / "i.knowledge.json"),
        "--out",
        str(tmp_path / "m.knowledge.json"),
    )
    assert result.exit_code == 3 and "merge refused" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before
