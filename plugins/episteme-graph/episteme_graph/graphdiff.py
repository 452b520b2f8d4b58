"""``graph diff A B``: what B adds to A, what it lacks, what it changes, and where the two contradict,
without merging. Records are matched as a merge matches them (nodes by resource, then id; edges by
``source__type__target`` after aliasing; everything else by id), and B's citation numbers are read
against A's sources, so a diff lists what ``graph merge A B`` would meet: a conflict here is a place
where the merge would refuse, unless a ``--prefer`` policy settles it.
"""

from __future__ import annotations

from typing import Any

from episteme_graph import model
from episteme_graph.merge import DERIVED_METADATA, clone, empty, renumber_citations, same_json, value_key
from episteme_graph.policy import SIDES, At, Path, option_text, render
from episteme_graph.rules import canonical_edge_id

COLLECTIONS = (
    "sources",
    "clusters",
    "nodes",
    "edges",
    "facts",
    "evidence",
    "claims",
    "assessments",
    "chunks",
    "fact_conflicts",
)


def _label(collection: str, record: dict[str, Any], labels: dict[Any, Any]) -> str | None:
    if collection == "edges":
        source, target = record.get("source"), record.get("target")
        return f"{labels.get(source, source)} {record.get('type')} {labels.get(target, target)}"
    for key in ("label", "statement", "title", "file", "dimension"):
        if isinstance(record.get(key), str):
            return str(record[key])
    return None


def _records(graph: dict[str, Any], collection: str) -> list[dict[str, Any]]:
    return model.sources(graph) if collection == "sources" else model.items(graph, collection)


def _identity(collection: str, record: dict[str, Any], alias: dict[str, str]) -> str | None:
    if collection == "edges":
        source, target, kind = record.get("source"), record.get("target"), record.get("type")
        if not (isinstance(source, str) and isinstance(target, str) and isinstance(kind, str)):
            return None
        return canonical_edge_id(alias.get(source, source), kind, alias.get(target, target))
    ident = record.get("id")
    if collection == "nodes" and isinstance(ident, str):
        return alias.get(ident, ident)
    return ident if isinstance(ident, str) else None


def _node_aliases(a: dict[str, Any], b: dict[str, Any]) -> dict[str, str]:
    """B's node ids that name another A node through a shared resource: B id -> A id."""
    by_resource = {
        n["resource"]: n["id"]
        for n in model.items(a, "nodes")
        if isinstance(n.get("id"), str) and isinstance(n.get("resource"), str) and n["resource"]
    }
    out = {}
    for node in model.items(b, "nodes"):
        found = by_resource.get(node.get("resource")) if isinstance(node.get("resource"), str) else None
        if found is not None and isinstance(node.get("id"), str) and node["id"] != found:
            out[node["id"]] = found
    return out


def _in_a_terms(a: dict[str, Any], b: dict[str, Any], alias: dict[str, str]) -> dict[str, Any]:
    """B as a merge into A reads it: citation numbers against A's sources, node references
    through the aliases (B itself is not changed)."""
    order = [s.get("id") for s in model.sources(a)]
    order += [s.get("id") for s in model.sources(b) if s.get("id") not in order]
    position = {ident: i + 1 for i, ident in enumerate(order)}
    mapping = {i + 1: position[s.get("id")] for i, s in enumerate(model.sources(b))}
    b = dict(b)
    if any(k != v for k, v in mapping.items()):
        b["nodes"] = [clone(n) for n in model.items(b, "nodes")]
        b["claims"] = [dict(c) for c in model.items(b, "claims")]
        renumber_citations(b, mapping)
    if not alias:
        return b

    def to_a(value: Any) -> Any:
        return alias.get(value, value) if isinstance(value, str) else value

    edges = []
    for edge in model.items(b, "edges"):
        edge = {**edge, "source": to_a(edge.get("source")), "target": to_a(edge.get("target"))}
        if edge.get("type") == "tension" and str(edge["target"]) < str(edge["source"]):
            edge["source"], edge["target"] = edge["target"], edge["source"]
        edges.append(edge)
    b["edges"] = edges
    b["claims"] = [{**c, "node": to_a(c.get("node"))} if "node" in c else c for c in model.items(b, "claims")]
    b["facts"] = [
        {**f, "concept": to_a(f.get("concept"))} if "concept" in f else f for f in model.items(b, "facts")
    ]
    b["chunks"] = [
        {**c, "concepts": [to_a(x) for x in c["concepts"]]} if isinstance(c.get("concepts"), list) else c
        for c in model.items(b, "chunks")
    ]
    b["clusters"] = [
        {**c, "concepts": [to_a(x) for x in c["concepts"]]} if isinstance(c.get("concepts"), list) else c
        for c in model.items(b, "clusters")
    ]
    return b


class _Compare:
    """Walks two values and records each difference at its path."""

    def __init__(self) -> None:
        self.changes: list[dict[str, Any]] = []
        self.conflicts: list[tuple[Path, Any, Any]] = []

    def value(self, left: Any, right: Any, path: Path) -> None:
        if same_json(left, right):
            return
        if empty(left):
            self.changes.append({"path": render(path), "change": "filled", "b": right})
        elif empty(right):
            self.changes.append({"path": render(path), "change": "emptied", "a": left})
        elif isinstance(left, list) and isinstance(right, list):
            have_left, have_right = set(map(value_key, left)), set(map(value_key, right))
            added = [item for item in right if value_key(item) not in have_left]
            removed = [item for item in left if value_key(item) not in have_right]
            if added:
                self.changes.append({"path": render(path), "change": "items-added", "items": added})
            if removed:
                self.changes.append({"path": render(path), "change": "items-removed", "items": removed})
            if not added and not removed:
                self.changes.append({"path": render(path), "change": "reordered"})
        elif isinstance(left, dict) and isinstance(right, dict):
            for key, item in left.items():
                if key not in right:
                    self.changes.append({"path": render((*path, key)), "change": "key-removed", "a": item})
                else:
                    self.value(item, right[key], (*path, key))
            for key, item in right.items():
                if key not in left:
                    self.changes.append({"path": render((*path, key)), "change": "key-added", "b": item})
        else:
            self.conflicts.append((path, left, right))


def diff_graphs(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """The difference of two graphs as a JSON object (deterministic: sorted by collection order,
    then identity, then path)."""
    alias = _node_aliases(a, b)
    b = _in_a_terms(a, b, alias)
    labels = {n.get("id"): n.get("label") for n in model.items(a, "nodes") + model.items(b, "nodes")}
    added: dict[str, list[dict[str, Any]]] = {}
    removed: dict[str, list[dict[str, Any]]] = {}
    changed: list[dict[str, Any]] = []
    conflicts: list[dict[str, Any]] = []

    def named(collection: str, ident: str, record: dict[str, Any]) -> dict[str, Any]:
        return {"collection": collection, "id": ident, "label": _label(collection, record, labels)}

    meta_a, meta_b = model.metadata(a), model.metadata(b)
    compare = _Compare()
    for key in sorted(set(meta_a) | set(meta_b)):
        if key in DERIVED_METADATA:
            continue
        if key not in meta_b:
            compare.changes.append(
                {"path": render(("metadata", key)), "change": "key-removed", "a": meta_a[key]}
            )
        elif key not in meta_a:
            compare.changes.append(
                {"path": render(("metadata", key)), "change": "key-added", "b": meta_b[key]}
            )
        else:
            compare.value(meta_a[key], meta_b[key], ("metadata", key))
    if compare.changes:
        changed.append({"collection": "metadata", "id": None, "label": None, "changes": compare.changes})
    for path, left, right in compare.conflicts:
        conflicts.append(_conflict(path, left, right, None))

    for collection in COLLECTIONS:
        left = {}
        for record in _records(a, collection):
            ident = _identity(collection, record, {})
            if ident is not None:
                left.setdefault(ident, record)
        right = {}
        for record in _records(b, collection):
            ident = _identity(collection, record, alias)
            if ident is not None:
                right.setdefault(ident, record)
        prefix: Path = ("metadata", "sources") if collection == "sources" else (collection,)
        new = [named(collection, i, right[i]) for i in sorted(set(right) - set(left))]
        gone = [named(collection, i, left[i]) for i in sorted(set(left) - set(right))]
        if new:
            added[collection] = new
        if gone:
            removed[collection] = gone
        for ident in sorted(set(left) & set(right)):
            ignored = {"id"} if collection in ("nodes", "edges") else set()
            if collection == "clusters":
                ignored = {"concepts"}  # derived from node.cluster
            compare = _Compare()
            compare.value(
                {k: v for k, v in left[ident].items() if k not in ignored},
                {k: v for k, v in right[ident].items() if k not in ignored},
                (*prefix, At(ident)),
            )
            record = named(collection, ident, left[ident])
            if compare.changes:
                changed.append({**record, "changes": compare.changes})
            for path, one, other in compare.conflicts:
                conflicts.append(_conflict(path, one, other, record))
    return {
        "format": "episteme-graph-diff",
        "version": "1",
        "semanticAccuracyEvaluated": False,
        "aliases": {"nodes": dict(sorted(alias.items()))},
        "counts": {
            "added": sum(len(v) for v in added.values()),
            "removed": sum(len(v) for v in removed.values()),
            "changed": len(changed),
            "conflicts": len(conflicts),
        },
        "added": added,
        "removed": removed,
        "changed": changed,
        "conflicts": conflicts,
    }


def _conflict(path: Path, a: Any, b: Any, record: dict[str, Any] | None) -> dict[str, Any]:
    options = [f"--prefer {option_text(path)}={side}" for side in SIDES]
    if path and path[0] == "facts":
        options.insert(0, "--fact-conflicts record")
    return {"path": render(path), "record": record, "a": a, "b": b, "resolveWith": options}


def render_markdown(diff: dict[str, Any], name_a: str = "A", name_b: str = "B") -> str:
    """The diff for people: every conflict with its path, the record (id and label) and both values."""
    from episteme_core.api import canonical_text
    from episteme_graph.export.markdown import code_span, inline

    def value(v: Any) -> str:
        return code_span(canonical_text(v))

    def record(r: dict[str, Any] | None) -> str:
        if not r:
            return "metadata"
        label = f" ({inline(r['label'])})" if r.get("label") else ""
        return f"{r['collection']} {code_span(r['id'])}{label}"

    counts = diff["counts"]
    lines = [
        f"# Graph diff: {inline(name_a)} → {inline(name_b)}",
        "",
        f"{counts['added']} added, {counts['removed']} removed, {counts['changed']} changed, "
        f"{counts['conflicts']} conflict(s). Semantic accuracy was not evaluated.",
        "",
        "## Conflicts",
        "",
    ]
    for c in diff["conflicts"]:
        lines += [
            f"- {code_span(c['path'])} in {record(c['record'])}",
            f"  - {inline(name_a)}: {value(c['a'])}",
            f"  - {inline(name_b)}: {value(c['b'])}",
            f"  - a merge would refuse; resolve with {' or '.join(code_span(o) for o in c['resolveWith'])}",
        ]
    if not diff["conflicts"]:
        lines.append("None.")
    for title, key in (("Added", "added"), ("Removed", "removed")):
        lines += ["", f"## {title}", ""]
        for records in diff[key].values():
            lines += [f"- {record(r)}" for r in records]
        if not diff[key]:
            lines.append("None.")
    lines += ["", "## Changed", ""]
    for item in diff["changed"]:
        lines.append(f"- {record(item if item['collection'] != 'metadata' else None)}")
        for change in item["changes"]:
            detail = ""
            if "items" in change:
                detail = " " + value(change["items"])
            elif "b" in change:
                detail = " " + value(change["b"])
            elif "a" in change:
                detail = " " + value(change["a"])
            lines.append(f"  - {code_span(change['path'])} {change['change']}{detail}")
    if not diff["changed"]:
        lines.append("None.")
    return "\n".join(lines) + "\n"
