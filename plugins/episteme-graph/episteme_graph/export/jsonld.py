"""The graph as JSON-LD: concepts as schema.org ``DefinedTerm`` in ``DefinedTermSet`` clusters,
relationships as ``kd:<type>`` links, sources as ``CreativeWork``, claims as ``Claim``, evidence with
its selector. Ids are the concept's ``resource`` when it has one, else ``kd:<kind>/<id>``."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from episteme_core.api import canonical_bytes
from episteme_graph import model, urls

DEFAULT_CONTEXT = {"@vocab": "https://schema.org/", "kd": "https://knowledge-distiller.dev/v4/"}


def _local(kind: str, ident: str) -> str:
    return f"kd:{kind}/{quote(ident, safe='')}"


def render(graph: dict[str, Any], options: dict[str, Any]) -> bytes:
    found = graph.get("@context")
    context: dict[str, Any] = found if isinstance(found, dict) else DEFAULT_CONTEXT
    meta = model.metadata(graph)
    node_ids: dict[str, str] = {}
    for node in model.nodes(graph):
        resource = node.get("resource")
        safe = isinstance(resource, str) and resource and urls.problem(resource, identifier=True) is None
        node_ids[node["id"]] = resource if safe else _local("concept", node["id"])  # type: ignore[assignment]
    items: list[dict[str, Any]] = []
    for source in model.unique_by_id(model.sources(graph)):
        item: dict[str, Any] = {
            "@id": _local("source", source["id"]),
            "@type": "CreativeWork",
            "identifier": source["id"],
            "name": model.text(source.get("title")) or model.text(source.get("file")),
        }
        url = source.get("url")
        if isinstance(url, str) and url and urls.problem(url) is None:
            item["url"] = url
        for key, term in (
            ("content_sha256", "kd:contentSha256"),
            ("date", "datePublished"),
            ("publisher", "publisher"),
            ("license", "license"),
            ("version", "version"),
        ):
            if isinstance(source.get(key), str):
                item[term] = source[key]
        items.append(item)
    for cluster in model.unique_by_id(model.items(graph, "clusters")):
        items.append(
            {
                "@id": _local("cluster", cluster["id"]),
                "@type": "DefinedTermSet",
                "identifier": cluster["id"],
                "name": model.text(cluster.get("label")),
                "description": model.text(cluster.get("description")),
            }
        )
    relations: dict[str, dict[str, list[dict[str, str]]]] = {}
    for edge in model.edges(graph):
        targets = relations.setdefault(edge["source"], {}).setdefault(f"kd:{edge['type']}", [])
        link = {"@id": node_ids[edge["target"]]}
        if link not in targets:
            targets.append(link)
    for node in model.nodes(graph):
        item = {
            "@id": node_ids[node["id"]],
            "@type": "DefinedTerm",
            "identifier": node["id"],
            "name": model.text(node.get("label")),
            "description": model.text(node.get("definition")),
            "kd:relevance": model.text(node.get("relevance")),
            "kd:statements": model.strings(node.get("statements")),
            "kd:confidence": model.text(node.get("confidence")),
            "citation": [{"@id": _local("source", s)} for s in model.strings(node.get("sources"))],
            "kd:evidence": [{"@id": _local("evidence", e)} for e in model.strings(node.get("evidence"))],
        }
        if isinstance(node.get("cluster"), str):
            item["inDefinedTermSet"] = {"@id": _local("cluster", node["cluster"])}
        for term, targets in sorted(relations.get(node["id"], {}).items()):
            item[term] = sorted(targets, key=lambda t: t["@id"])
        items.append(item)
    for claim in model.unique_by_id(model.items(graph, "claims")):
        item = {
            "@id": _local("claim", claim["id"]),
            "@type": "Claim",
            "identifier": claim["id"],
            "text": model.text(claim.get("statement")),
            "kd:origin": model.text(claim.get("origin")),
            "kd:evidence": [{"@id": _local("evidence", e)} for e in model.strings(claim.get("evidence"))],
        }
        if isinstance(claim.get("node"), str) and claim["node"] in node_ids:
            item["about"] = {"@id": node_ids[claim["node"]]}
        items.append(item)
    for evidence in model.unique_by_id(model.items(graph, "evidence")):
        item = {
            "@id": _local("evidence", evidence["id"]),
            "@type": "kd:Evidence",
            "identifier": evidence["id"],
            "kd:support": model.text(evidence.get("support")),
            "kd:attributionBasis": model.text(evidence.get("attribution_basis")),
        }
        if isinstance(evidence.get("source"), str):
            item["isBasedOn"] = {"@id": _local("source", evidence["source"])}
        if isinstance(evidence.get("selector"), dict):
            item["kd:selector"] = evidence["selector"]
        if isinstance(evidence.get("excerpt"), str):
            item["text"] = evidence["excerpt"]
        items.append(item)
    for fact in model.unique_by_id(model.items(graph, "facts")):
        item = {
            "@id": _local("fact", fact["id"]),
            "@type": "kd:Fact",
            "identifier": fact["id"],
            "description": model.text(fact.get("statement")),
            "value": model.text(fact.get("value")),
        }
        if isinstance(fact.get("concept"), str) and fact["concept"] in node_ids:
            item["about"] = {"@id": node_ids[fact["concept"]]}
        if isinstance(fact.get("source"), str):
            item["isBasedOn"] = {"@id": _local("source", fact["source"])}
        items.append(item)
    items.sort(key=lambda i: (i["@id"], i["@type"]))
    document = {
        "@context": {**context, "kd:selector": {"@type": "@json"}},
        "@id": "kd:graph",
        "name": model.text(meta.get("title")),
        "dateCreated": model.text(meta.get("distillation_date")),
        "@graph": items,
    }
    return canonical_bytes(document)
