"""Consumer-side reading of a graph: permissive accessors that skip malformed optional items, so a
renderer never crashes on a graph the validator would reject."""

from __future__ import annotations

import re
from typing import Any

# Starts only where a space run starts, so a long run is scanned once, not from each of its spaces.
_MARKER = re.compile(r"(?<!\s)\s*\[\d++\]")


def items(graph: Any, key: str) -> list[dict[str, Any]]:
    """The objects of a top-level collection (non-objects skipped)."""
    value = graph.get(key) if isinstance(graph, dict) else None
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def metadata(graph: Any) -> dict[str, Any]:
    value = graph.get("metadata") if isinstance(graph, dict) else None
    return value if isinstance(value, dict) else {}


def sources(graph: Any) -> list[dict[str, Any]]:
    value = metadata(graph).get("sources")
    return [s for s in value if isinstance(s, dict)] if isinstance(value, list) else []


def text(value: Any, default: str = "") -> str:
    return value if isinstance(value, str) else default


def strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def by_id(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """First object per string id (later duplicates ignored)."""
    found: dict[str, dict[str, Any]] = {}
    for obj in objects:
        key = obj.get("id")
        if isinstance(key, str):
            found.setdefault(key, obj)
    return found


def unique_by_id(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return list(by_id(objects).values())


def nodes(graph: Any) -> list[dict[str, Any]]:
    return unique_by_id(items(graph, "nodes"))


def edges(graph: Any) -> list[dict[str, Any]]:
    """Edges whose endpoints are nodes (dangling ones dropped)."""
    known = set(by_id(items(graph, "nodes")))
    return [
        e
        for e in items(graph, "edges")
        if isinstance(e.get("source"), str)
        and isinstance(e.get("target"), str)
        and e["source"] in known
        and e["target"] in known
        and isinstance(e.get("type"), str)
    ]


def edge_identity(edge: dict[str, Any]) -> str:
    from episteme_graph.rules import canonical_edge_id

    return canonical_edge_id(edge["source"], edge["type"], edge["target"])


def strip_markers(statement: str) -> str:
    """A statement without its ``[n]`` citation markers."""
    return _MARKER.sub("", statement).strip()


def superseded(graph: Any) -> set[str]:
    """Nodes with a ``valid_until``, or targets of a ``replaces`` edge."""
    found = {
        n["id"]
        for n in nodes(graph)
        if isinstance(n.get("temporal"), dict) and n["temporal"].get("valid_until")
    }
    found.update(e["target"] for e in edges(graph) if e["type"] == "replaces")
    return found
