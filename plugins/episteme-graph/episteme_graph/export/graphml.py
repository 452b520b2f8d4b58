"""The graph as GraphML (through networkx): one node per concept, one edge per relationship, for
Gephi, yEd, Cytoscape and networkx itself.

A directed multigraph: a relationship is an edge from its source to its target keyed by its
canonical id (``source__type__target``; two concepts may have several). Nodes carry the concept's
label, cluster, confidence, definition, relevance and resource; edges their type, weight (always a
double), confidence and label; both carry the whole record as canonical JSON (``kd_json``). The
graph's title, spec version and sha256 are graph data. Everything is inserted in sorted order, so
the same graph gives the same bytes. Characters XML 1.0 cannot hold (most control characters,
lone surrogates) become U+FFFD, and an XML reader turns CR LF into LF; ``kd_json`` keeps every
character exactly, as JSON escapes.
"""

from __future__ import annotations

import re
from typing import Any

from episteme_graph import model
from episteme_graph.export.common import graph_sha256

_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
NODE_FIELDS = ("label", "cluster", "confidence", "definition", "relevance", "resource")
EDGE_FIELDS = ("type", "confidence", "label", "origin")


def xml_text(value: str) -> str:
    """``value`` with every character XML 1.0 forbids replaced by U+FFFD."""
    return _NOT_XML.sub("\ufffd", value) if _NOT_XML.search(value) else value


def _ascii_json(value: Any) -> str:
    """Canonical JSON with every non-ASCII character escaped: holds any string, XML-safe."""
    import json

    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def build(graph: dict[str, Any]) -> Any:
    """The networkx ``MultiDiGraph`` of ``graph`` (sorted: nodes by id, edges by canonical id)."""
    import networkx as nx  # type: ignore[import-untyped,import-not-found,unused-ignore]

    meta = model.metadata(graph)
    out = nx.MultiDiGraph()
    out.graph["title"] = xml_text(model.text(meta.get("title")))
    out.graph["spec_version"] = xml_text(model.text(meta.get("distiller_spec_version")))
    out.graph["graph_sha256"] = graph_sha256(graph)
    for node in sorted(model.nodes(graph), key=lambda n: n["id"]):
        fields = {key: xml_text(node[key]) for key in NODE_FIELDS if isinstance(node.get(key), str)}
        fields["kd_json"] = _ascii_json(node)
        out.add_node(xml_text(node["id"]), **fields)
    edges = {model.edge_identity(e): e for e in reversed(model.edges(graph))}  # the first of a kind
    for ident in sorted(edges):
        edge = edges[ident]
        data: dict[str, Any] = {
            key: xml_text(edge[key]) for key in EDGE_FIELDS if isinstance(edge.get(key), str)
        }
        weight = edge.get("weight")
        if isinstance(weight, int | float) and not isinstance(weight, bool):
            data["weight"] = float(weight)
        data["kd_json"] = _ascii_json(edge)
        out.add_edge(xml_text(edge["source"]), xml_text(edge["target"]), key=xml_text(ident), **data)
    return out


def render(graph: dict[str, Any], options: dict[str, Any]) -> bytes:
    import networkx as nx  # type: ignore[import-untyped,import-not-found,unused-ignore]

    lines = nx.generate_graphml(build(graph), encoding="utf-8", prettyprint=True)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n' + "\n".join(lines) + "\n").encode("utf-8")
