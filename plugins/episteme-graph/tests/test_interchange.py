"""graph export --format graphml | turtle: read back with networkx and rdflib, the same concepts and
relationships; deterministic bytes (the hash-seed test in test_exports covers every format)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import fixture_graph, write_graph

from episteme_core.testing import invoke
from episteme_graph.export import graphml, turtle
from episteme_graph.generate import synthetic_graph
from episteme_graph.model import edge_identity

GRAPHS = {
    "minimal": lambda: fixture_graph("minimal"),
    "contextual": lambda: fixture_graph("contextual"),
    "synthetic": lambda: synthetic_graph(60, clusters=3),
}


def _hostile(graph: dict[str, Any]) -> dict[str, Any]:
    graph["nodes"][0]["label"] = "<b>&amp;</b> ]]> \x01 \u2028 \"quoted\" 'single' \\ end"
    graph["nodes"][0]["definition"] = "line one\nline two\r\n\ttabbed \U0001f600"
    return graph


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_graphml_reads_back_with_the_same_nodes_and_edges(name: str) -> None:
    import networkx as nx

    graph = _hostile(GRAPHS[name]())
    read = nx.parse_graphml(graphml.render(graph, {}).decode("utf-8"), force_multigraph=True)
    assert sorted(read.nodes) == sorted(n["id"] for n in graph["nodes"])
    expected = sorted((e["source"], e["target"], edge_identity(e)) for e in graph["edges"])
    assert sorted(read.edges(keys=True)) == expected
    first = graph["nodes"][0]
    assert read.nodes[first["id"]]["label"] == first["label"].replace("\x01", "\ufffd")
    assert read.nodes[first["id"]]["definition"] == first["definition"].replace("\r\n", "\n")
    for _source, _target, key, data in read.edges(keys=True, data=True):
        edge = next(e for e in graph["edges"] if edge_identity(e) == key)
        assert data["type"] == edge["type"] and data["weight"] == float(edge["weight"])
    import json

    assert json.loads(read.nodes[first["id"]]["kd_json"]) == first  # the whole record, exactly


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_turtle_reads_back_with_the_same_concepts_and_relationships(name: str) -> None:
    from rdflib import RDF, Graph, Namespace, URIRef

    graph = _hostile(GRAPHS[name]())
    kd, schema = Namespace(turtle.KD), Namespace(turtle.SCHEMA)
    read = Graph().parse(data=turtle.render(graph, {}).decode("utf-8"), format="turtle")
    terms = {
        str(s): str(read.value(s, schema.identifier)) for s in read.subjects(RDF.type, schema.DefinedTerm)
    }
    assert sorted(terms.values()) == sorted(n["id"] for n in graph["nodes"])
    iri = {ident: subject for subject, ident in terms.items()}
    links = sorted(
        (terms[str(s)], str(p).removeprefix(turtle.KD), terms[str(o)])
        for s, p, o in read
        if str(s) in terms and str(o) in terms and str(p).startswith(turtle.KD)
    )
    assert links == sorted((e["source"], e["type"], e["target"]) for e in graph["edges"])
    relationships = set(read.subjects(RDF.type, kd.Relationship))
    assert len(relationships) == len(graph["edges"])
    first = graph["nodes"][0]
    assert str(read.value(URIRef(iri[first["id"]]), schema.name)) == first["label"]
    assert str(read.value(URIRef(iri[first["id"]]), schema.description)) == first["definition"]


@pytest.mark.parametrize("fmt", ["graphml", "turtle"])
def test_the_formats_are_registered_exporters(tmp_path: Path, fmt: str) -> None:
    graph = write_graph(tmp_path / "g.knowledge.json", fixture_graph("contextual"))
    assert invoke("graph", "export", str(graph), "--format", fmt).exit_code == 0
    suffix = {"graphml": ".graphml", "turtle": ".ttl"}[fmt]
    written = (tmp_path / f"g{suffix}").read_bytes()
    other = tmp_path / f"other{suffix}"
    assert invoke("export", f"graph-{fmt}", str(graph), "--out", str(other)).exit_code == 0
    assert other.read_bytes() == written


def test_the_same_graph_gives_the_same_bytes_whatever_its_key_order() -> None:
    graph = fixture_graph("contextual")
    shuffled = {key: graph[key] for key in reversed(list(graph))}
    shuffled["nodes"] = [dict(reversed(list(n.items()))) for n in graph["nodes"]]
    assert graphml.render(graph, {}) == graphml.render(shuffled, {})
    assert turtle.render(graph, {}) == turtle.render(shuffled, {})
