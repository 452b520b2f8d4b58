"""An idempotent Neo4j 5 Cypher script of a graph: one uniqueness constraint, then ``MERGE`` by a
stable ``kd_id`` and ``SET +=`` for every entity and link, sorted. Importing it twice changes nothing.

Labels, relationship types and property names come from the fixed tables below, never from the graph;
strings are quoted and escaped, so graph text cannot inject Cypher.
"""

from __future__ import annotations

import math
import re
from typing import Any

from episteme_graph import model
from episteme_graph.export.common import graph_sha256, json_line, stable_id

LABELS = {
    "graph": "KDGraph",
    "source": "KDSource",
    "cluster": "KDCluster",
    "concept": "KDConcept",
    "edge": "KDEdge",
    "evidence": "KDEvidence",
    "claim": "KDClaim",
    "fact": "KDFact",
    "chunk": "KDChunk",
    "assessment": "KDAssessment",
    "conflict": "KDConflict",
    "question": "KDQuestion",
}
HAS = {
    "source": "HAS_SOURCE",
    "cluster": "HAS_CLUSTER",
    "concept": "HAS_CONCEPT",
    "edge": "HAS_EDGE",
    "evidence": "HAS_EVIDENCE",
    "claim": "HAS_CLAIM",
    "fact": "HAS_FACT",
    "chunk": "HAS_CHUNK",
    "assessment": "HAS_ASSESSMENT",
    "conflict": "HAS_CONFLICT",
    "question": "HAS_QUESTION",
}
RELATIONSHIPS = frozenset(
    {
        *HAS.values(),
        "IN_CLUSTER",
        "SUPPORTED_BY",
        "DERIVED_FROM_SOURCE",
        "CLAIM_OF",
        "FROM_CONCEPT",
        "TO_CONCEPT",
        "KD_RELATIONSHIP",
        "ABOUT",
    }
)
SCALAR_KEYS = (
    "assessed_at",
    "assessor",
    "attribution_basis",
    "cluster",
    "confidence",
    "context",
    "date",
    "definition",
    "description",
    "dimension",
    "excerpt",
    "explanation",
    "file",
    "include_in_default_retrieval",
    "kind",
    "label",
    "method",
    "metric",
    "node",
    "origin",
    "relation",
    "reason",
    "relevance",
    "resource",
    "review_status",
    "scope",
    "source",
    "statement",
    "support",
    "target",
    "text",
    "title",
    "token_estimate",
    "type",
    "url",
    "value",
    "weight",
    "temporal_scope",
    "content_sha256",
    "publisher",
    "version",
    "license",
    "retrieved_at",
    "n",
)
COMPLEX_KEYS = (
    "agents",
    "authors",
    "citations",
    "claim_ids",
    "concepts",
    "derivation",
    "evidence",
    "facts",
    "identifiers",
    "selector",
    "sources",
    "spatial_contexts",
    "statements",
    "temporal",
)
SCALARS = frozenset(SCALAR_KEYS)
LISTS = frozenset(COMPLEX_KEYS)
_PROPERTY = re.compile(r"^[a-z][a-z0-9_]*$")
assert all(_PROPERTY.match(k) for k in (*SCALARS, *LISTS, "entity_kind", "kd_id", "original_id", "raw_json"))
INT64 = 2**63
BATCH = 1000  # rows per UNWIND: one round trip and one plan per batch
CONSTRAINT = "CREATE CONSTRAINT kd_entity_id IF NOT EXISTS FOR (n:KDEntity) REQUIRE n.kd_id IS UNIQUE;"


_ESCAPES = str.maketrans({"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t"})
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029]")


_NEEDS_ESCAPE = re.compile("[\\\\'\x00-\x1f\x7f-\x9f\u2028\u2029]")


def quote(text: str) -> str:
    """A Cypher string literal: backslash, quote and every control or line-separator character escaped."""
    if not _NEEDS_ESCAPE.search(text):
        return f"'{text}'"
    escaped = text.translate(_ESCAPES)
    if _CONTROL.search(escaped):
        escaped = _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", escaped)
    return f"'{escaped}'"


def literal(value: Any) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value) if -INT64 <= value < INT64 else quote(str(value))
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("non-finite number")
        return repr(value)
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    raise TypeError(type(value).__name__)


def properties(item: dict[str, Any], kind: str, kd_id: str, original_id: str) -> str:
    """``{key: value, ...}`` sorted: fixed scalar keys and lists of strings as they are; objects and
    mixed lists only inside ``raw_json`` (the item itself, canonical JSON), which keeps everything."""
    props: dict[str, Any] = {
        "entity_kind": kind,
        "kd_id": kd_id,
        "original_id": original_id,
        "raw_json": json_line(item),
    }
    for key, value in item.items():  # only the fixed names: a graph key never becomes a property name
        kind_of = type(value)
        if key in SCALARS and kind_of in (str, bool, int, float):
            if kind_of is not float or math.isfinite(value):
                props[key] = value
        elif key in LISTS and kind_of is list and value and all(type(v) is str for v in value):
            props[key] = value
    return "{" + ", ".join(f"{key}: {literal(props[key])}" for key in sorted(props)) + "}"


class Script:
    """Statements gathered per kind, then written sorted (entities first, then links)."""

    def __init__(self) -> None:
        self.entities: list[tuple[str, str]] = []
        self.links: list[tuple[str, str]] = []
        self.plain: dict[str, dict[str, tuple[str, str]]] = {}  # type -> kd_id -> (from, to)
        self.ids: set[str] = set()

    def entity(self, kind: str, identity: str, item: dict[str, Any], original_id: str) -> str:
        kd_id = stable_id(kind, identity)
        if kd_id in self.ids:
            return kd_id
        self.ids.add(kd_id)
        statement = (
            f"MERGE (n:KDEntity {{kd_id: {quote(kd_id)}}}) SET n:{LABELS[kind]} "
            f"SET n += {properties(item, kind, kd_id, original_id)};"
        )
        self.entities.append((kd_id, statement))
        return kd_id

    def link(
        self,
        source: str,
        relationship: str,
        target: str,
        extra: dict[str, Any] | None = None,
        identity: str | None = None,
    ) -> None:
        if relationship not in RELATIONSHIPS or source not in self.ids or target not in self.ids:
            return
        kd_id = stable_id(f"rel-{relationship.lower()}", identity or f"{source}\0{target}")
        if not extra:  # plain links go in batches: UNWIND [rows] AS row MATCH ... MERGE ...
            self.plain.setdefault(relationship, {})[kd_id] = (source, target)
            return
        props = {"kd_id": kd_id, **extra}
        body = "{" + ", ".join(f"{k}: {literal(props[k])}" for k in sorted(props)) + "}"
        statement = (  # kd_ids are [a-z0-9-]: quoting them needs no escape
            f"MATCH (a:KDEntity {{kd_id: '{source}'}}), (b:KDEntity {{kd_id: '{target}'}}) "
            f"MERGE (a)-[r:{relationship} {{kd_id: '{kd_id}'}}]->(b) SET r += {body};"
        )
        self.links.append((kd_id, statement))

    def text(self) -> str:
        lines = [
            "// episteme-graph Cypher export for Neo4j 5: MERGE by kd_id, SET +=; never deletes.",
            "// Labels, relationship types and property names are constants: graph text is data.",
            CONSTRAINT,
        ]
        lines += [s for _, s in sorted(self.entities)]
        for relationship in sorted(self.plain):
            rows = sorted(self.plain[relationship].items())
            for start in range(0, len(rows), BATCH):
                batch = rows[start : start + BATCH]
                lines.append("UNWIND [")
                lines.append(",\n".join(f"{{a: '{a}', b: '{b}', id: '{kd}'}}" for kd, (a, b) in batch))
                lines.append(
                    "] AS row MATCH (a:KDEntity {kd_id: row.a}), (b:KDEntity {kd_id: row.b}) "
                    f"MERGE (a)-[r:{relationship} {{kd_id: row.id}}]->(b);"
                )
        lines += [s for _, s in sorted(set(self.links))]
        return "\n".join(lines) + "\n"


def _ref(value: Any, table: dict[str, str]) -> bool:
    return isinstance(value, str) and value in table


def render(graph: dict[str, Any], options: dict[str, Any]) -> bytes:
    script = Script()
    meta = model.metadata(graph)
    digest = graph_sha256(graph)
    graph_item = {
        "title": model.text(meta.get("title")),
        "value": digest,
        "version": model.text(meta.get("distiller_spec_version")),
    }
    root = script.entity("graph", digest, graph_item, digest)

    def add(kind: str, objects: list[dict[str, Any]]) -> dict[str, str]:
        ids = {}
        for obj in sorted(model.unique_by_id(objects), key=lambda o: o["id"]):
            ids[obj["id"]] = script.entity(kind, obj["id"], obj, obj["id"])
            script.link(root, HAS[kind], ids[obj["id"]])
        return ids

    sources = add("source", model.sources(graph))
    clusters = add("cluster", model.items(graph, "clusters"))
    concepts = add("concept", model.items(graph, "nodes"))
    evidence = add("evidence", model.items(graph, "evidence"))
    claims = add("claim", model.items(graph, "claims"))
    facts = add("fact", model.items(graph, "facts"))
    chunks = add("chunk", model.items(graph, "chunks"))
    assessments = add("assessment", model.items(graph, "assessments"))
    conflicts = add("conflict", model.items(graph, "fact_conflicts"))
    for i, question in enumerate(model.strings(graph.get("open_questions"))):
        identity = json_line({"index": i, "value": question})
        qid = script.entity("question", identity, {"value": question}, f"question-{i + 1}")
        script.link(root, HAS["question"], qid)

    def supported(kd_id: str, item: dict[str, Any]) -> None:
        for ev in model.strings(item.get("evidence")):
            if ev in evidence:
                script.link(kd_id, "SUPPORTED_BY", evidence[ev])

    for node in model.nodes(graph):
        cid = concepts[node["id"]]
        if isinstance(node.get("cluster"), str) and node["cluster"] in clusters:
            script.link(cid, "IN_CLUSTER", clusters[node["cluster"]])
        supported(cid, node)
    for ev in model.unique_by_id(model.items(graph, "evidence")):
        if _ref(ev.get("source"), sources):
            script.link(evidence[ev["id"]], "DERIVED_FROM_SOURCE", sources[ev["source"]])
    for claim in model.unique_by_id(model.items(graph, "claims")):
        if _ref(claim.get("node"), concepts):
            script.link(claims[claim["id"]], "CLAIM_OF", concepts[claim["node"]])
        supported(claims[claim["id"]], claim)
    for edge in model.edges(graph):
        identity = edge["id"] if isinstance(edge.get("id"), str) else model.edge_identity(edge)
        eid = script.entity("edge", identity, edge, identity)
        script.link(root, HAS["edge"], eid)
        script.link(eid, "FROM_CONCEPT", concepts[edge["source"]])
        script.link(eid, "TO_CONCEPT", concepts[edge["target"]])
        supported(eid, edge)
        extra = {"edge_id": identity, "relationship_type": edge["type"]}
        if isinstance(edge.get("label"), str):
            extra["label"] = edge["label"]
        script.link(
            concepts[edge["source"]], "KD_RELATIONSHIP", concepts[edge["target"]], extra, identity=identity
        )
    for fact in model.unique_by_id(model.items(graph, "facts")):
        if _ref(fact.get("source"), sources):
            script.link(facts[fact["id"]], "DERIVED_FROM_SOURCE", sources[fact["source"]])
        if _ref(fact.get("concept"), concepts):
            script.link(facts[fact["id"]], "ABOUT", concepts[fact["concept"]])
        supported(facts[fact["id"]], fact)
    for chunk in model.unique_by_id(model.items(graph, "chunks")):
        for concept in model.strings(chunk.get("concepts")):
            if concept in concepts:
                script.link(chunks[chunk["id"]], "ABOUT", concepts[concept])
        supported(chunks[chunk["id"]], chunk)
    for assessment in model.unique_by_id(model.items(graph, "assessments")):
        supported(assessments[assessment["id"]], assessment)
    for conflict in model.unique_by_id(model.items(graph, "fact_conflicts")):
        for fact_id in model.strings(conflict.get("facts")):
            if fact_id in facts:
                script.link(conflicts[conflict["id"]], "ABOUT", facts[fact_id])
        supported(conflicts[conflict["id"]], conflict)
    return script.text().encode("utf-8")
