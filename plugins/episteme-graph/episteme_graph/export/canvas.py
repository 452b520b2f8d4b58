"""JSON Canvas 1.0 (the format Obsidian reads): a column per cluster, a text card per concept, an edge
per relationship. Integer geometry, preset colours as strings, stable ids, nodes and edges sorted.
Nodes and edges carry only the specification's fields (strict validators refuse others); what each
shows of the graph, and the graph itself, sit under the top-level ``x-episteme-graph``."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from episteme_graph import model
from episteme_graph.export.common import stable_id
from episteme_graph.jsontext import canonical

COLUMN, CARD_WIDTH, GAP = 440, 320, 40
UNCLUSTERED = "__unclustered__"
_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", **{char: f"\\{char}" for char in "\\`*_{}[]()#+.!|~-"}}
_ESCAPED = re.compile("[" + re.escape("".join(_ESCAPES)) + "]")


def _escaped(match: re.Match[str]) -> str:
    return _ESCAPES[match.group()]


def escape(text: str) -> str:
    """Source text inert in a Markdown card: entities for & < >, a backslash before Markdown marks
    (each character replaced once, in one pass), line ends made LF."""
    return _ESCAPED.sub(_escaped, text.replace("\r\n", "\n").replace("\r", "\n"))


def card(node: dict[str, Any], claims: list[dict[str, Any]], evidence: dict[str, dict[str, Any]]) -> str:
    lines = [f"# {escape(model.text(node.get('label'), node['id']))}", ""]
    lines.append(f"**Definition:** {escape(model.text(node.get('definition')))}")
    if model.text(node.get("relevance")):
        lines.append(f"**Relevance:** {escape(model.text(node.get('relevance')))}")
    lines.append(f"**Confidence:** {escape(model.text(node.get('confidence'), 'unknown'))}")
    statements = model.strings(node.get("statements"))
    if statements:
        lines += ["", "## Statements", *(f"- {escape(s)}" for s in statements)]
    if claims:
        lines += ["", "## Claims", *(f"- {escape(model.text(c.get('statement')))}" for c in claims)]
    refs = [e for e in model.strings(node.get("evidence")) if e in evidence]
    if refs:
        lines += [
            "",
            "## Evidence",
            *(f"- {escape(e)}: {escape(model.text(evidence[e].get('excerpt')))}" for e in refs),
        ]
    return "\n".join(lines)


def render(graph: dict[str, Any], options: dict[str, Any]) -> bytes:
    clusters = model.by_id(model.items(graph, "clusters"))
    evidence = model.by_id(model.items(graph, "evidence"))
    claims_of: dict[str, list[dict[str, Any]]] = {}
    for claim in model.unique_by_id(model.items(graph, "claims")):
        if isinstance(claim.get("node"), str):
            claims_of.setdefault(claim["node"], []).append(claim)
    columns: dict[str, list[dict[str, Any]]] = {}
    for node in model.nodes(graph):
        cluster = node.get("cluster")
        key = cluster if isinstance(cluster, str) and cluster in clusters else UNCLUSTERED
        columns.setdefault(key, []).append(node)
    order = sorted(k for k in columns if k != UNCLUSTERED) + ([UNCLUSTERED] if UNCLUSTERED in columns else [])
    canvas_nodes: list[dict[str, Any]] = []
    ids: dict[str, str] = {}
    drawn: dict[str, dict[str, str]] = {}  # canvas id -> what of the graph it shows
    for c, cluster_id in enumerate(order):
        x = c * COLUMN
        y = 40
        for node in sorted(columns[cluster_id], key=lambda n: n["id"]):
            text = card(node, claims_of.get(node["id"], []), evidence)
            height = max(220, min(760, 100 + 24 * text.count("\n")))
            ids[node["id"]] = stable_id("canvas-concept", node["id"])
            drawn[ids[node["id"]]] = {"kind": "concept", "id": node["id"]}
            canvas_nodes.append(
                {
                    "id": ids[node["id"]],
                    "type": "text",
                    "x": x,
                    "y": y,
                    "width": CARD_WIDTH,
                    "height": height,
                    "text": text,
                }
            )
            y += height + GAP
        label = (
            model.text(clusters[cluster_id].get("label"), cluster_id)
            if cluster_id in clusters
            else "Unclustered"
        )
        drawn[stable_id("canvas-cluster", cluster_id)] = {"kind": "cluster", "id": cluster_id}
        canvas_nodes.append(
            {
                "id": stable_id("canvas-cluster", cluster_id),
                "type": "group",
                "x": x - 30,
                "y": -40,
                "width": CARD_WIDTH + 60,
                "height": max(260, y + 20),
                "label": label,
                "color": str(c % 6 + 1),
            }
        )
    canvas_edges = []
    seen: set[str] = set()
    for edge in model.edges(graph):
        identity = model.edge_identity(edge)
        if identity in seen:
            continue
        seen.add(identity)
        drawn[stable_id("canvas-edge", identity)] = {"kind": "relationship", "id": identity}
        canvas_edges.append(
            {
                "id": stable_id("canvas-edge", identity),
                "fromNode": ids[edge["source"]],
                "toNode": ids[edge["target"]],
                "toEnd": "none" if edge["type"] == "tension" else "arrow",
                "label": model.text(edge.get("label")) or edge["type"],
            }
        )
    # Groups are drawn below their cards: JSON Canvas draws nodes in array order (z-index).
    canvas_nodes.sort(key=lambda n: (n["type"] != "group", n["id"]))
    canvas_edges.sort(key=lambda e: e["id"])
    extension = {"format": "episteme-graph canvas extension", "formatVersion": "1", "drawn": drawn}
    graph_text = canonical(graph)
    # The canonical JSON of {"nodes", "edges", "x-episteme-graph": {..., "sourceGraph", "sourceSha256"}}:
    # the two source members sort last in the last object, so they are appended to the text of the
    # rest, and the graph is encoded once (for its hash and its copy).
    rest = canonical({"nodes": canvas_nodes, "edges": canvas_edges, "x-episteme-graph": extension})
    assert rest.endswith("}}") and sorted([*extension, "sourceGraph", "sourceSha256"])[-2:] == [
        "sourceGraph",
        "sourceSha256",
    ]
    digest = hashlib.sha256(graph_text.encode("utf-8")).hexdigest()
    source = f',"sourceGraph":{graph_text},"sourceSha256":"{digest}"'
    return (rest[:-2] + source + "}}\n").encode("utf-8")
