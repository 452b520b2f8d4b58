"""The graph as RDF Turtle (through rdflib): the same resources and terms as the JSON-LD export.

Concepts are ``schema:DefinedTerm`` (their ``resource`` when it is a safe identifier URI, else
``kd:concept/<id>``) in ``schema:DefinedTermSet`` clusters; each relationship is a plain triple
``concept kd:<type> concept`` and also a ``kd:Relationship`` resource (``kd:relationship/<edge id>``)
that carries its weight, confidence, label and origin; sources are ``schema:CreativeWork``, claims
``schema:Claim``, evidence ``kd:Evidence`` with its selector as an ``rdf:JSON`` literal, facts
``kd:Fact``. No blank node: every resource has an IRI, so the serializer's sorted output is the same
bytes for the same graph.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from episteme_graph import model, urls
from episteme_graph.jsontext import canonical

KD = "https://knowledge-distiller.dev/v4/"
SCHEMA = "https://schema.org/"


def _local(kind: str, ident: str) -> str:
    return f"{KD}{kind}/{quote(ident, safe='')}"


def build(graph: dict[str, Any]) -> Any:
    """The rdflib ``Graph`` of ``graph``."""
    from rdflib import RDF, XSD, Graph, Literal, Namespace, URIRef  # type: ignore[import-not-found,unused-ignore]

    kd, schema = Namespace(KD), Namespace(SCHEMA)
    out = Graph(bind_namespaces="none")
    out.bind("kd", kd)
    out.bind("schema", schema)
    out.bind("rdf", RDF)
    out.bind("xsd", XSD)

    def text(subject: Any, predicate: Any, value: Any) -> None:
        if isinstance(value, str) and value:
            out.add((subject, predicate, Literal(value)))

    meta = model.metadata(graph)
    root = URIRef(f"{KD}graph")
    out.add((root, RDF.type, schema.Dataset))
    text(root, schema.name, meta.get("title"))
    text(root, schema.dateCreated, meta.get("distillation_date"))
    text(root, kd.specVersion, meta.get("distiller_spec_version"))
    nodes: dict[str, Any] = {}
    for node in model.nodes(graph):
        resource = node.get("resource")
        iri = _local("concept", node["id"])
        if isinstance(resource, str) and resource and urls.problem(resource, identifier=True) is None:
            iri = resource
        nodes[node["id"]] = URIRef(iri)
    for source in model.unique_by_id(model.sources(graph)):
        subject = URIRef(_local("source", source["id"]))
        out.add((subject, RDF.type, schema.CreativeWork))
        text(subject, schema.identifier, source["id"])
        text(subject, schema.name, model.text(source.get("title")) or model.text(source.get("file")))
        url = source.get("url")
        if isinstance(url, str) and url and urls.problem(url) is None:
            out.add((subject, schema.url, Literal(url, datatype=XSD.anyURI)))
        text(subject, kd.contentSha256, source.get("content_sha256"))
        text(subject, schema.datePublished, source.get("date"))
    for cluster in model.unique_by_id(model.items(graph, "clusters")):
        subject = URIRef(_local("cluster", cluster["id"]))
        out.add((subject, RDF.type, schema.DefinedTermSet))
        text(subject, schema.identifier, cluster["id"])
        text(subject, schema.name, cluster.get("label"))
        text(subject, schema.description, cluster.get("description"))
    for node in model.nodes(graph):
        subject = nodes[node["id"]]
        out.add((subject, RDF.type, schema.DefinedTerm))
        text(subject, schema.identifier, node["id"])
        text(subject, schema.name, node.get("label"))
        text(subject, schema.description, node.get("definition"))
        text(subject, kd.relevance, node.get("relevance"))
        text(subject, kd.confidence, node.get("confidence"))
        for statement in model.strings(node.get("statements")):
            text(subject, kd.statement, statement)
        if isinstance(node.get("cluster"), str):
            out.add((subject, schema.inDefinedTermSet, URIRef(_local("cluster", node["cluster"]))))
        for source_id in model.strings(node.get("sources")):
            out.add((subject, schema.citation, URIRef(_local("source", source_id))))
        for evidence_id in model.strings(node.get("evidence")):
            out.add((subject, kd.evidence, URIRef(_local("evidence", evidence_id))))
    for edge in model.edges(graph):
        ident = model.edge_identity(edge)
        source, target = nodes[edge["source"]], nodes[edge["target"]]
        out.add((source, kd[edge["type"]], target))
        subject = URIRef(_local("relationship", ident))
        out.add((subject, RDF.type, kd.Relationship))
        out.add((subject, kd.source, source))
        out.add((subject, kd.target, target))
        text(subject, kd.relationshipType, edge["type"])
        text(subject, schema.identifier, ident)
        weight = edge.get("weight")
        if isinstance(weight, int | float) and not isinstance(weight, bool):
            out.add((subject, kd.weight, Literal(repr(float(weight)), datatype=XSD.double)))
        for key in ("confidence", "label", "origin"):
            text(subject, kd[key], edge.get(key))
    for claim in model.unique_by_id(model.items(graph, "claims")):
        subject = URIRef(_local("claim", claim["id"]))
        out.add((subject, RDF.type, schema.Claim))
        text(subject, schema.identifier, claim["id"])
        text(subject, schema.text, claim.get("statement"))
        text(subject, kd.origin, claim.get("origin"))
        if isinstance(claim.get("node"), str) and claim["node"] in nodes:
            out.add((subject, schema.about, nodes[claim["node"]]))
        for evidence_id in model.strings(claim.get("evidence")):
            out.add((subject, kd.evidence, URIRef(_local("evidence", evidence_id))))
    for evidence in model.unique_by_id(model.items(graph, "evidence")):
        subject = URIRef(_local("evidence", evidence["id"]))
        out.add((subject, RDF.type, kd.Evidence))
        text(subject, schema.identifier, evidence["id"])
        text(subject, kd.support, evidence.get("support"))
        text(subject, kd.attributionBasis, evidence.get("attribution_basis"))
        text(subject, kd.reviewStatus, evidence.get("review_status"))
        text(subject, schema.text, evidence.get("excerpt"))
        if isinstance(evidence.get("source"), str):
            out.add((subject, schema.isBasedOn, URIRef(_local("source", evidence["source"]))))
        if isinstance(evidence.get("selector"), dict):
            out.add((subject, kd.selector, Literal(canonical(evidence["selector"]), datatype=RDF.JSON)))
    for fact in model.unique_by_id(model.items(graph, "facts")):
        subject = URIRef(_local("fact", fact["id"]))
        out.add((subject, RDF.type, kd.Fact))
        text(subject, schema.identifier, fact["id"])
        text(subject, schema.description, fact.get("statement"))
        text(subject, schema.value, fact.get("value"))
        if isinstance(fact.get("concept"), str) and fact["concept"] in nodes:
            out.add((subject, schema.about, nodes[fact["concept"]]))
        if isinstance(fact.get("source"), str):
            out.add((subject, schema.isBasedOn, URIRef(_local("source", fact["source"]))))
    return out


def render(graph: dict[str, Any], options: dict[str, Any]) -> bytes:
    data = build(graph).serialize(format="turtle", encoding="utf-8")
    return bytes(data)
