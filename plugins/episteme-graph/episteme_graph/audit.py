"""The merge audit: every payload of the base, and of the incoming graph (through its aliases and
renumbered citations), is still in the merged graph. It backs the law MergeNeverLosesPayload."""

from __future__ import annotations

from typing import Any

from episteme_graph.merge import DERIVED_METADATA, MergeReport, clone, renumber_citations, value_key
from episteme_graph.policy import At
from episteme_graph.rules import canonical_edge_id

KEYED = ("clusters", "facts", "evidence", "claims", "assessments", "chunks", "fact_conflicts")


def preserved(old: Any, new: Any) -> bool:
    """``new`` keeps ``old``: every key's value, every list item, every non-empty scalar. What the
    merge carried over as the very same object is kept without a look; list items are compared as
    canonical JSON only when the same object is not in the new list."""
    if old is new or old is None or old == "":
        return True
    if isinstance(old, dict):
        if not isinstance(new, dict):
            return False
        for key, value in old.items():
            kept = new.get(key)
            if value is not kept and not preserved(value, kept):
                return False
        return True
    if isinstance(old, list):
        if not isinstance(new, list):
            return False
        present = set(map(id, new))
        missing = [item for item in old if id(item) not in present]
        if not missing:
            return True
        have = set(map(value_key, new))
        return all(value_key(item) in have for item in missing)
    return type(old) is type(new) and old == new


def _by(items: Any, key: str = "id") -> dict[Any, dict[str, Any]]:
    return {i.get(key): i for i in items if isinstance(i, dict)} if isinstance(items, list) else {}


def _edge_key(edge: dict[str, Any]) -> str:
    return canonical_edge_id(edge["source"], edge["type"], edge["target"])


def audit_one(old: dict[str, Any], merged: dict[str, Any], label: str) -> list[str]:
    """What of ``old`` (already in the merged graph's terms) the merged graph lacks."""
    problems: list[str] = []
    old_meta, new_meta = old.get("metadata", {}), merged.get("metadata", {})
    for key, value in old_meta.items():
        if key not in DERIVED_METADATA and not preserved(value, new_meta.get(key)):
            problems.append(f"{label} metadata.{key} was not kept")
    new_sources = _by(new_meta.get("sources"))
    for ident, source in _by(old_meta.get("sources")).items():
        if not preserved(source, new_sources.get(ident)):
            problems.append(f"{label} source {ident!r} was dropped or changed")
    new_nodes = _by(merged.get("nodes"))
    for ident, node in _by(old.get("nodes")).items():
        if not preserved(node, new_nodes.get(ident)):
            problems.append(f"{label} node {ident!r} was dropped or changed")
    new_edges = {_edge_key(e): e for e in merged.get("edges", [])}
    for edge in old.get("edges", []):
        key = _edge_key(edge)
        payload = {k: v for k, v in edge.items() if k != "id"}
        if not preserved(payload, new_edges.get(key)):
            problems.append(f"{label} edge {key!r} was dropped or changed")
    for collection in KEYED:
        new_items = _by(merged.get(collection))
        for ident, item in _by(old.get(collection)).items():
            if collection == "clusters":
                item = {k: v for k, v in item.items() if k != "concepts"}
            if not preserved(item, new_items.get(ident)):
                problems.append(f"{label} {collection} {ident!r} was dropped or changed")
    if not preserved(old.get("open_questions"), merged.get("open_questions")):
        problems.append(f"{label} open_questions were not kept")
    for key, value in old.items():
        if key not in ("metadata", "nodes", "edges", "open_questions", *KEYED) and not preserved(
            value, merged.get(key)
        ):
            problems.append(f"{label} {key} was not kept")
    return problems


def in_merged_terms(incoming: dict[str, Any], report: MergeReport) -> dict[str, Any]:
    """The incoming graph as the merge saw it: node aliases, kept fact ids, renumbered citations."""
    graph = dict(incoming)  # copied where rewritten below: the input stays as it was
    mapping = {i + 1: i + 1 for i in range(len(graph.get("metadata", {}).get("sources", [])))}
    mapping.update(report.source_renumbering)
    if report.source_renumbering:
        graph["nodes"] = [clone(n) for n in graph.get("nodes", [])]
        graph["claims"] = [dict(c) for c in graph.get("claims", [])]
        renumber_citations(graph, mapping)
    for collection in ("nodes", "edges", "claims", "facts", "chunks", "fact_conflicts"):
        graph[collection] = [dict(item) for item in graph.get(collection, [])]
    aliases = report.node_aliases

    def alias(value: Any) -> Any:
        return aliases.get(value, value) if isinstance(value, str) else value

    for node in graph.get("nodes", []):
        node["id"] = alias(node["id"])
    for edge in graph.get("edges", []):
        edge["source"], edge["target"] = alias(edge["source"]), alias(edge["target"])
        if edge["type"] == "tension" and edge["target"] < edge["source"]:
            edge["source"], edge["target"] = edge["target"], edge["source"]
    for claim in graph.get("claims", []):
        claim["node"] = alias(claim.get("node"))
    for fact in graph.get("facts", []):
        if "concept" in fact:
            fact["concept"] = alias(fact["concept"])
        if fact["id"] in report.fact_aliases:
            fact["id"] = report.fact_aliases[fact["id"]]
    for chunk in graph.get("chunks", []):
        if isinstance(chunk.get("concepts"), list):
            chunk["concepts"] = [alias(c) for c in chunk["concepts"]]
    for conflict in graph.get("fact_conflicts", []):
        if isinstance(conflict.get("facts"), list):
            conflict["facts"] = [report.fact_aliases.get(f, f) for f in conflict["facts"]]
        conflict["id"] = report.conflict_aliases.get(conflict["id"], conflict["id"])
    return graph


def settled(graph: dict[str, Any], report: MergeReport, side: str) -> dict[str, Any]:
    """``graph`` (one input, in the merged graph's terms) with each value the policy did not keep
    replaced by the one it kept: what the merged graph must then hold whole. The values replaced
    are in ``report.resolutions``, both sides and the path, and so in the merge's diff. Only the
    records on a resolution's path are copied; the input stays as it was."""
    lost = [r for r in report.resolutions if r.kept != side]
    if not lost:
        return graph
    view = dict(graph)
    copied: dict[tuple[Any, ...], Any] = {}

    def record(collection: str, ident: str, nested: tuple[str, ...] = ()) -> Any:
        key = (collection, ident, *nested)
        if key in copied:
            return copied[key]
        holder = view["metadata"] if nested else view
        items = list(holder.get(collection) or [])
        holder[collection] = items
        for i, item in enumerate(items):
            found = _edge_key(item) if collection == "edges" else item.get("id")
            if found == ident:
                items[i] = clone(item)
                copied[key] = items[i]
                return items[i]
        raise KeyError(key)

    for resolution in lost:
        kept = resolution.incoming if side == "base" else resolution.base
        first, *steps = resolution.path
        if first == "metadata":
            if ("metadata",) not in copied:
                view["metadata"] = copied[("metadata",)] = dict(view["metadata"])
            target: Any = view["metadata"]
            if len(steps) > 1 and steps[0] == "sources" and isinstance(steps[1], At):
                target = record("sources", steps[1].ident, ("metadata",))
                steps = steps[2:]
        elif steps and isinstance(steps[0], At):
            target = record(str(first), steps[0].ident)
            steps = steps[1:]
        elif not steps:
            view[str(first)] = kept
            continue
        else:
            if (str(first),) not in copied:
                view[str(first)] = copied[(str(first),)] = clone(view.get(str(first)))
            target = view[str(first)]
        for step in steps[:-1]:
            target = target[step]
        if steps:
            target[steps[-1]] = kept
    return view


def audit_merge(base: dict[str, Any], incoming: dict[str, Any], report: MergeReport) -> list[str]:
    """Everything of either input that the merged graph lacks (empty: nothing was lost). A value a
    policy chose against is checked as the value chosen (it is recorded in the report instead)."""
    merged = report.graph
    base_view = settled(base, report, "base")
    problems = audit_one(base_view, merged, "base")
    if incoming is base and not report.resolutions:
        # A graph merged into itself: nothing is aliased, renumbered or settled, so the incoming
        # graph in the merged graph's terms is the base, already audited.
        return problems
    incoming_view = settled(in_merged_terms(incoming, report), report, "incoming")
    return problems + audit_one(incoming_view, merged, "incoming")
