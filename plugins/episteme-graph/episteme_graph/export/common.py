"""What several exports share: one-line canonical JSON, stable ids, synthetic concept contexts."""

from __future__ import annotations

import functools
import hashlib
import re
from typing import Any

from episteme_core.api import canonical_text
from episteme_graph import model
from episteme_graph.jsontext import canonical, one_line


def json_line(value: Any) -> str:
    """Canonical JSON on one physical line: U+0085, U+2028 and U+2029 escaped too."""
    return one_line(canonical(value))


def graph_sha256(graph: Any) -> str:
    """sha256 of the graph's canonical JSON without a trailing newline (KD-CTXT/1's convention)."""
    return hashlib.sha256(canonical_text(graph).encode("utf-8")).hexdigest()


@functools.cache
def _slug(kind: str) -> str:
    return re.sub(r"[^a-z0-9-]", "-", kind.lower())


def stable_id(kind: str, identity: str) -> str:
    """``kd-<kind>-<24 hex>``: the same kind and identity always give the same id."""
    digest = hashlib.sha256(f"{kind}\0{identity}".encode("utf-8", "surrogatepass")).hexdigest()
    return f"kd-{_slug(kind)}-{digest[:24]}"


def concept_contexts(graph: Any) -> list[dict[str, Any]]:
    """One synthetic record per concept (sorted by id) for graphs without chunks."""
    records = []
    for node in sorted(model.nodes(graph), key=lambda n: n["id"]):
        parts = [
            model.text(node.get("definition")),
            model.text(node.get("relevance")),
            *model.strings(node.get("statements")),
        ]
        records.append(
            {
                "id": f"context:{node['id']}",
                "title": model.text(node.get("label"), node["id"]),
                "kind": "derived_concept_context",
                "concepts": [node["id"]],
                "evidence": sorted(set(model.strings(node.get("evidence")))),
                "origin": None,
                "derivation": None,
                "spatial_contexts": [],
                "synthetic": True,
                "raw": node,
                "text": "\n\n".join(p for p in parts if p),
            }
        )
    return records
