"""Merging two graphs without losing or overwriting anything.

Identity: sources, clusters, facts, evidence, claims, assessments, chunks and fact conflicts by id;
nodes by resource, then id; edges by (source, type, target) after aliasing. Values merge by one rule
(``merge_value``); a contradiction fails naming both JSON paths, except facts, which may be kept side
by side with an explicit conflict. Derived fields (counts, scores, cluster membership, edge ids) are
recomputed afterwards.
"""

from __future__ import annotations

import hashlib
import json
import operator
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from episteme_graph import jsontext
from episteme_graph.policy import At, MergePolicy, Path, Resolution, render
from episteme_graph.rules import canonical_edge_id

if TYPE_CHECKING:
    from episteme_graph.validate import Validation

POLICIES = ("error", "record")
MERGEABLE_VERSIONS = ("1.0", "1.1")
ID_COLLECTIONS = ("evidence", "claims", "assessments", "chunks")
DERIVED_METADATA = (
    "concept_count",
    "relationship_count",
    "cluster_count",
    "fact_count",
    "quality_score",
    "conformance_score",
    "mode",
    "distillation_date",
    "distiller_spec_version",
    "sources",
)
# Facts of one concept, metric and time with different values: up to this many in a group, a conflict
# joins every pair of different values; past it, each fact is joined to one other (see _merge_facts).
PAIRWISE_GROUP = 16
CONFLICT_REASON = "Conflicting fact payloads were retained during deterministic merge; review required."
_MARKER = re.compile(r"\[(\d+)\]")


class MergeConflict(Exception):
    """Two values that cannot both be kept: ``path`` says where (as text; ``steps`` as a path), the
    message what. ``base`` and ``incoming`` are the two values; ``resolvable`` says whether a
    ``--prefer`` policy could settle it (an identity conflict cannot be)."""

    def __init__(
        self,
        path: Path,
        message: str,
        *,
        base: Any = None,
        incoming: Any = None,
        resolvable: bool = False,
    ) -> None:
        super().__init__(f"{render(path)}: {message}")
        self.steps = path
        self.path = render(path)
        self.base = base
        self.incoming = incoming
        self.resolvable = resolvable


Resolve = Callable[[Path, Any, Any], Any]


def refuse(path: Path, left: Any, right: Any) -> Any:
    """The default policy: a contradiction fails, naming its path and both values."""
    raise MergeConflict(
        path,
        f"conflicting values {_short(left)} and {_short(right)}; merge refused",
        base=left,
        incoming=right,
        resolvable=True,
    )


def canonical(value: Any) -> str:
    """Canonical JSON text (sorted keys, no spaces, UTF-8): the kernel's form, without its newline."""
    return jsontext.canonical(value)


def same_json(left: Any, right: Any) -> bool:
    """Equal as JSON: Python's ``==`` plus the types it blurs (``1 == 1.0 == True``). The same object
    is equal without a look, and so is an object whose values are the very same objects (a record
    copied without its id); two ``repr``s that agree settle the rest without encoding; only values
    whose reprs differ (keys in another order) are compared as canonical JSON."""
    if left is right:
        return True
    if type(left) is not type(right) or left != right:
        return False
    if not isinstance(left, dict | list):
        return True
    if isinstance(left, dict) and all(map(operator.is_, left.values(), map(right.__getitem__, left))):
        return True
    return repr(left) == repr(right) or canonical(left) == canonical(right)


def value_key(value: Any) -> Any:
    """A hashable identity of a JSON value, equal exactly when the canonical JSON is (scalars fast)."""
    kind = type(value)
    if kind is str:
        return value
    if kind is bool or kind is int or kind is float or value is None:
        return (kind.__name__, value)
    return ("json", canonical(value))


def clone(value: Any) -> Any:
    """A deep copy of JSON data, at the speed of the C encoder and decoder."""
    return json.loads(json.dumps(value, ensure_ascii=False, allow_nan=False))


def sha(value: Any) -> str:
    return hashlib.sha256(canonical(value).encode("utf-8")).hexdigest()


def empty(value: Any) -> bool:
    return value is None or value == ""


def merge_value(left: Any, right: Any, path: Path, resolve: Resolve = refuse) -> Any:
    """Equal keeps; empty takes the other; lists union stably; objects merge by key; anything else
    is a conflict, which ``resolve`` settles (returns the value kept) or refuses (raises)."""
    if same_json(left, right):
        return left
    if empty(left):
        return right
    if empty(right):
        return left
    if isinstance(left, list) and isinstance(right, list):
        return union(left, right)
    if isinstance(left, dict) and isinstance(right, dict):
        merged = dict(left)
        for name, value in right.items():
            merged[name] = merge_value(left[name], value, (*path, name), resolve) if name in left else value
        return merged
    return resolve(path, left, right)


def _short(value: Any) -> str:
    text = canonical(value)
    return text if len(text) <= 60 else text[:59] + "…"


def union(left: list[Any], right: list[Any]) -> list[Any]:
    """Base order, then the new items in their order; items compared as canonical JSON."""
    seen = {value_key(item) for item in left}
    out = list(left)
    for item in right:
        identity = value_key(item)
        if identity not in seen:
            seen.add(identity)
            out.append(item)
    return out


@attrs.define
class MergeReport:
    """What a merge did: the new graph, what was added or enriched, the aliases it followed."""

    graph: dict[str, Any]
    added: dict[str, list[str]] = attrs.field(factory=dict)
    enriched: dict[str, list[str]] = attrs.field(factory=dict)
    node_aliases: dict[str, str] = attrs.field(factory=dict)
    fact_aliases: dict[str, str] = attrs.field(factory=dict)
    resource_enrichments: dict[str, str] = attrs.field(factory=dict)
    conflict_aliases: dict[str, str] = attrs.field(factory=dict)
    validation: Validation | None = None
    recorded_conflicts: list[str] = attrs.field(factory=list)
    source_renumbering: dict[int, int] = attrs.field(factory=dict)
    resolutions: list[Resolution] = attrs.field(factory=list)
    policy: MergePolicy = attrs.field(factory=MergePolicy)

    def note(self, kind: str, collection: str, ident: str) -> None:
        target = self.added if kind == "added" else self.enriched
        target.setdefault(collection, []).append(ident)


def _list(graph: dict[str, Any], key: str) -> list[dict[str, Any]]:
    value = graph.get(key)
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _merge_by_id(
    base: list[dict[str, Any]],
    incoming: list[dict[str, Any]],
    collection: str,
    report: MergeReport,
    path: Path,
    resolve: Resolve = refuse,
) -> list[dict[str, Any]]:
    out = base
    index = {item.get("id"): i for i, item in enumerate(out)}
    for item in incoming:
        ident = item.get("id")
        if ident in index:
            before = out[index[ident]]
            out[index[ident]] = merge_value(out[index[ident]], item, (*path, At(str(ident))), resolve)
            if out[index[ident]] != before:
                report.note("enriched", collection, str(ident))
        else:
            index[ident] = len(out)
            out.append(item)
            report.note("added", collection, str(ident))
    return out


def _renumber(text: str, mapping: dict[int, int]) -> str:
    return _MARKER.sub(
        lambda m: (
            f"[{mapping.get(int(m.group(1)), int(m.group(1)))}]" if len(m.group(1)) <= 9 else m.group(0)
        ),
        text,
    )


def renumber_citations(graph: dict[str, Any], mapping: dict[int, int]) -> None:
    """Rewrite ``[n]`` markers and ``citations[].n`` of ``graph`` (in place) through ``mapping``."""
    for node in _list(graph, "nodes"):
        if isinstance(node.get("statements"), list):
            node["statements"] = [
                _renumber(s, mapping) if isinstance(s, str) else s for s in node["statements"]
            ]
        for citation in _list(node, "citations"):
            if isinstance(citation.get("n"), int):
                citation["n"] = mapping.get(citation["n"], citation["n"])
    for claim in _list(graph, "claims"):
        if isinstance(claim.get("statement"), str):
            claim["statement"] = _renumber(claim["statement"], mapping)


def merge_graphs(
    base: dict[str, Any], incoming: dict[str, Any], policy: str | MergePolicy = "error"
) -> MergeReport:
    """Merge ``incoming`` into ``base`` (both already validated); raise ``MergeConflict`` on a
    contradiction the policy does not settle (a string is the fact policy alone, the seed's rule).
    Neither input is changed."""
    if isinstance(policy, str):
        policy = MergePolicy(fact_conflicts=policy)
    if policy.fact_conflicts not in POLICIES:
        raise ValueError(policy.fact_conflicts)
    # The inputs are never changed: whatever is rewritten below is copied first.
    incoming = dict(incoming)
    report = MergeReport(graph={}, policy=policy)
    base_meta, in_meta = base["metadata"], incoming["metadata"]

    def resolve(path: Path, left: Any, right: Any) -> Any:
        chosen = policy.choose(path)
        if chosen is None:
            return refuse(path, left, right)
        side, rule = chosen
        report.resolutions.append(Resolution(path, left, right, side, rule))
        return left if side == "base" else right

    # Sources by id; incoming citation numbers follow their source to its merged position.
    sources = _merge_by_id(
        _list(base_meta, "sources"),
        _list(in_meta, "sources"),
        "sources",
        report,
        ("metadata", "sources"),
        resolve,
    )
    position = {s["id"]: i + 1 for i, s in enumerate(sources)}
    mapping = {i + 1: position[s["id"]] for i, s in enumerate(_list(in_meta, "sources"))}
    report.source_renumbering = {k: v for k, v in mapping.items() if k != v}
    if report.source_renumbering:
        incoming["nodes"] = [clone(n) for n in _list(incoming, "nodes")]
        incoming["claims"] = [dict(c) for c in _list(incoming, "claims")]
        renumber_citations(incoming, mapping)

    # Metadata: base kept; other keys merged (a different title fails); derived keys recomputed.
    meta = dict(base_meta)
    for key, value in in_meta.items():
        if key in DERIVED_METADATA:
            continue
        meta[key] = merge_value(meta[key], value, ("metadata", key), resolve) if key in meta else value
    meta["sources"] = sources
    meta["mode"] = "merge"
    dates = [
        d
        for d in (base_meta.get("distillation_date"), in_meta.get("distillation_date"))
        if isinstance(d, str)
    ]
    if dates:
        meta["distillation_date"] = max(dates)

    clusters = _merge_by_id(
        _list(base, "clusters"), _list(incoming, "clusters"), "clusters", report, ("clusters",), resolve
    )
    clusters = [dict(c) for c in clusters]  # recompute rewrites their concepts

    # Nodes: resource first, then id; the base's id wins on a resource match.
    nodes = list(_list(base, "nodes"))
    by_id = {n["id"]: i for i, n in enumerate(nodes)}
    by_resource = {n["resource"]: i for i, n in enumerate(nodes) if not empty(n.get("resource"))}
    for node in _list(incoming, "nodes"):
        resource = node.get("resource")
        at = by_resource.get(resource) if not empty(resource) else None
        if at is None and node["id"] in by_id:
            at = by_id[node["id"]]
            existing = nodes[at].get("resource")
            if not empty(existing) and not empty(resource) and existing != resource:
                raise MergeConflict(
                    ("nodes", At(node["id"]), "resource"),
                    f"node {node['id']!r} is {existing!r} in the base but {resource!r} "
                    "incoming; merge refused (an identity conflict: no policy settles it)",
                    base=existing,
                    incoming=resource,
                )
            if empty(existing) and not empty(resource):
                if resource in by_resource:
                    raise MergeConflict(
                        ("nodes", At(node["id"]), "resource"),
                        f"resource {resource!r} already names another node (an identity conflict: "
                        "no policy settles it)",
                        incoming=resource,
                    )
                report.resource_enrichments[node["id"]] = str(resource)
                by_resource[resource] = at
        if at is None:
            by_id[node["id"]] = len(nodes)
            if not empty(resource):
                by_resource[resource] = len(nodes)
            nodes.append(node)
            report.note("added", "nodes", node["id"])
            continue
        target = nodes[at]
        if target["id"] != node["id"]:
            if node["id"] in by_id and by_id[node["id"]] != at:
                raise MergeConflict(
                    ("nodes", At(node["id"])),
                    f"incoming node {node['id']!r} has the resource of base node "
                    f"{target['id']!r} but its id names another base node (an identity conflict: "
                    "no policy settles it)",
                )
            report.node_aliases[node["id"]] = target["id"]
        payload = {k: v for k, v in node.items() if k != "id"}
        before = target
        merged = merge_value(
            {k: v for k, v in target.items() if k != "id"}, payload, ("nodes", At(target["id"])), resolve
        )
        nodes[at] = {"id": target["id"], **merged}
        if nodes[at] != before:
            report.note("enriched", "nodes", target["id"])

    def alias(node_id: Any) -> Any:
        return report.node_aliases.get(node_id, node_id) if isinstance(node_id, str) else node_id

    if report.node_aliases:
        for collection in ("nodes", "claims", "facts", "chunks"):
            incoming[collection] = [dict(item) for item in _list(incoming, collection)]
    for node in _list(incoming, "nodes"):
        node["id"] = alias(node["id"])
    for claim in _list(incoming, "claims"):
        claim["node"] = alias(claim.get("node"))
    for fact in _list(incoming, "facts"):
        if "concept" in fact:
            fact["concept"] = alias(fact["concept"])
    for chunk in _list(incoming, "chunks"):
        if isinstance(chunk.get("concepts"), list):
            chunk["concepts"] = [alias(c) for c in chunk["concepts"]]

    # Edges by (source, type, target), endpoints sorted for tension; ids are recomputed.
    def edge_key(edge: dict[str, Any]) -> str:
        return canonical_edge_id(alias(edge["source"]), edge["type"], alias(edge["target"]))

    edges = [dict(e) for e in _list(base, "edges")]  # recompute rewrites their ids
    edge_index = {edge_key(e): i for i, e in enumerate(edges)}
    for edge in _list(incoming, "edges"):
        edge = {**edge, "source": alias(edge["source"]), "target": alias(edge["target"])}
        if edge["type"] == "tension" and edge["target"] < edge["source"]:
            edge["source"], edge["target"] = edge["target"], edge["source"]
        key = edge_key(edge)
        if key in edge_index:
            current = edges[edge_index[key]]
            before = current
            merged = merge_value(
                {k: v for k, v in current.items() if k != "id"},
                {k: v for k, v in edge.items() if k != "id"},
                ("edges", At(key)),
                resolve,
            )
            edges[edge_index[key]] = {"id": key, **merged} if "id" in current or "id" in edge else merged
            if edges[edge_index[key]] != before:
                report.note("enriched", "edges", key)
        else:
            edge_index[key] = len(edges)
            edges.append({"id": key, **{k: v for k, v in edge.items() if k != "id"}})
            report.note("added", "edges", key)

    facts, conflicts = _merge_facts(base, incoming, policy.fact_conflicts, report, resolve)

    graph: dict[str, Any] = {}
    for key, value in base.items():
        graph[key] = value
    graph.update({"metadata": meta, "clusters": clusters, "nodes": nodes, "edges": edges})
    if facts or "facts" in base or "facts" in incoming:
        graph["facts"] = facts
    for collection in ID_COLLECTIONS:
        if collection in base or collection in incoming:
            graph[collection] = _merge_by_id(
                _list(base, collection),
                _list(incoming, collection),
                collection,
                report,
                (collection,),
                resolve,
            )
    if conflicts or "fact_conflicts" in base or "fact_conflicts" in incoming:
        graph["fact_conflicts"] = conflicts
    if "open_questions" in base or "open_questions" in incoming:
        graph["open_questions"] = union(
            graph.get("open_questions", []) if isinstance(graph.get("open_questions"), list) else [],
            incoming.get("open_questions", []) if isinstance(incoming.get("open_questions"), list) else [],
        )
    handled = {
        "metadata",
        "clusters",
        "nodes",
        "edges",
        "facts",
        "fact_conflicts",
        "open_questions",
        *ID_COLLECTIONS,
    }
    for key, value in incoming.items():
        if key in handled:
            continue
        graph[key] = merge_value(graph[key], value, (key,), resolve) if key in graph else value
    needs_11 = any(graph.get(k) for k in ("evidence", "claims", "assessments", "fact_conflicts"))
    versions = {base_meta.get("distiller_spec_version"), in_meta.get("distiller_spec_version")}
    meta["distiller_spec_version"] = "1.1" if needs_11 or "1.1" in versions else "1.0"
    report.validation = recompute(graph)
    report.graph = graph
    return report


def _merge_facts(
    base: dict[str, Any], incoming: dict[str, Any], policy: str, report: MergeReport, resolve: Resolve
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    facts = list(_list(base, "facts"))
    index = {f["id"]: i for i, f in enumerate(facts)}
    for fact in _list(incoming, "facts"):
        ident = fact["id"]
        if ident not in index:
            index[ident] = len(facts)
            facts.append(fact)
            report.note("added", "facts", ident)
            continue
        settled = len(report.resolutions)
        try:
            before = facts[index[ident]]
            facts[index[ident]] = merge_value(facts[index[ident]], fact, ("facts", At(ident)), resolve)
            if facts[index[ident]] != before:
                report.note("enriched", "facts", ident)
        except MergeConflict:
            del report.resolutions[settled:]  # the fact is kept whole, aside: nothing of it was chosen
            if policy == "error":
                raise
            kept = f"{ident}--conflict-{sha(fact)}"
            report.fact_aliases[ident] = kept
            if kept not in index:
                index[kept] = len(facts)
                facts.append({**fact, "id": kept})
                report.note("added", "facts", kept)
    conflicts = list(_list(base, "fact_conflicts"))
    conflict_index = {c["id"]: i for i, c in enumerate(conflicts)}
    for original in _list(incoming, "fact_conflicts"):
        conflict = dict(original)
        if isinstance(conflict.get("facts"), list):
            conflict["facts"] = [report.fact_aliases.get(f, f) for f in conflict["facts"]]
        ident = conflict["id"]
        if ident in conflict_index:
            current = conflicts[conflict_index[ident]]
            if canonical(current.get("facts")) == canonical(conflict.get("facts")):
                conflicts[conflict_index[ident]] = merge_value(
                    current, conflict, ("fact_conflicts", At(ident)), resolve
                )
                continue
            if canonical(current.get("facts")) != canonical(original.get("facts")):
                raise MergeConflict(
                    ("fact_conflicts", At(ident), "facts"),
                    "a fact conflict's facts never change; merge refused",
                    base=current.get("facts"),
                    incoming=original.get("facts"),
                )
            # The same conflict, about the incoming version of a fact kept aside: kept aside too.
            ident = f"{ident}--conflict-{sha(conflict)}"
            conflict["id"] = ident
            report.conflict_aliases[original["id"]] = ident
            if ident in conflict_index:
                continue
        conflict_index[ident] = len(conflicts)
        conflicts.append(conflict)
        report.note("added", "fact_conflicts", ident)
    pairs = {
        (c.get("relation"), canonical(sorted(c["facts"])))
        for c in conflicts
        if isinstance(c.get("facts"), list) and all(isinstance(f, str) for f in c["facts"])
    }

    def add_conflict(a: dict[str, Any], b: dict[str, Any]) -> None:
        pair = sorted([a["id"], b["id"]])
        if ("tension", canonical(pair)) in pairs:
            return
        pairs.add(("tension", canonical(pair)))
        ident = f"fact-conflict-{sha(pair)}"
        evidence = union(
            [e for e in a.get("evidence", []) if isinstance(e, str)],
            [e for e in b.get("evidence", []) if isinstance(e, str)],
        )
        conflict = {"id": ident, "facts": pair, "relation": "tension", "reason": CONFLICT_REASON}
        if evidence:
            conflict["evidence"] = evidence
        conflicts.append(conflict)
        report.recorded_conflicts.append(ident)
        report.note("added", "fact_conflicts", ident)

    facts_by_id = {f["id"]: f for f in facts}
    for fact_id, kept_id in sorted(report.fact_aliases.items()):
        add_conflict(facts_by_id[fact_id], facts_by_id[kept_id])
    # Same concept, metric and temporal but a different value: both kept, a conflict recorded.
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for fact in facts:
        concept, metric = fact.get("concept"), fact.get("metric")
        if isinstance(concept, str) and concept and isinstance(metric, str) and metric:
            groups.setdefault((concept, metric, canonical(fact.get("temporal"))), []).append(fact)
    for group in groups.values():
        if len(group) <= PAIRWISE_GROUP:
            for i, a in enumerate(group):
                for b in group[i + 1 :]:
                    if a.get("value") != b.get("value"):
                        add_conflict(a, b)
            continue
        # A large group: each fact joined to the group's first fact, or, where it has that fact's
        # value, to the first fact of another value (a linear number of conflicts, not one per pair).
        first = group[0]
        other = next((f for f in group if f.get("value") != first.get("value")), None)
        for fact in group[1:]:
            if fact.get("value") != first.get("value"):
                add_conflict(first, fact)
            elif other is not None:
                add_conflict(other, fact)
    return facts, conflicts


def recompute(graph: dict[str, Any]) -> Validation:
    """Derived fields from the graph itself: cluster membership, edge ids, counts, scores. Returns the
    graph's validation (with the stored scores now equal to what its findings give)."""
    from episteme_graph.validate import validate_value

    nodes = _list(graph, "nodes")
    members: dict[str, list[str]] = {}
    for node in nodes:
        if isinstance(node.get("cluster"), str):
            members.setdefault(node["cluster"], []).append(node["id"])
    for cluster in _list(graph, "clusters"):
        cluster["concepts"] = members.get(cluster["id"], [])
    for edge in _list(graph, "edges"):
        if "id" in edge:
            edge["id"] = canonical_edge_id(edge["source"], edge["type"], edge["target"])
    meta = graph["metadata"]
    meta["concept_count"] = len(nodes)
    meta["relationship_count"] = len(_list(graph, "edges"))
    meta["cluster_count"] = len(_list(graph, "clusters"))
    if "facts" in graph or "fact_count" in meta:
        meta["fact_count"] = len(_list(graph, "facts"))
    meta["quality_score"] = 0
    if meta.get("distiller_spec_version") == "1.1" or "conformance_score" in meta:
        meta["conformance_score"] = 0
    validation = validate_value(graph, check_stored_scores=False)
    score = validation.score
    meta["quality_score"] = score
    if "conformance_score" in meta:
        meta["conformance_score"] = score
    return validation
