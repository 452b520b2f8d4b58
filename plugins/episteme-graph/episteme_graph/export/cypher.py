"""An idempotent Neo4j 5 Cypher script of a graph: one uniqueness constraint, then ``MERGE`` by a
stable ``kd_id`` and ``SET +=`` for every entity and link, sorted. Importing it twice changes nothing.

Labels, relationship types and property names come from the fixed tables below, never from the graph;
strings are quoted and escaped, so graph text cannot inject Cypher.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import operator
import re
from typing import Any

from episteme_graph import model
from episteme_graph.export.common import json_line, stable_id
from episteme_graph.jsontext import EncodedGraph, encode_graph

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
PROPERTY_NAMES = SCALARS | LISTS
_PREFIX = {key: f"{key}: " for key in PROPERTY_NAMES}
_ENTITY_KIND = {kind: f"entity_kind: '{kind}'" for kind in LABELS}
_PROPERTY = re.compile(r"^[a-z][a-z0-9_]*$")
_NAMES = (*SCALARS, *LISTS, "entity_kind", "kd_id", "original_id", "raw_json")
assert all(_PROPERTY.match(k) for k in _NAMES)
assert not any(b.startswith(a) and b[len(a)].isdigit() for a in _NAMES for b in _NAMES if a != b)
INT64 = 2**63
BATCH = 1000  # rows per UNWIND: one round trip and one plan per batch
CONSTRAINT = "CREATE CONSTRAINT kd_entity_id IF NOT EXISTS FOR (n:KDEntity) REQUIRE n.kd_id IS UNIQUE;"


_ESCAPES = str.maketrans({"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t"})
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029]")


_NEEDS_ESCAPE = re.compile("[\\\\'\x00-\x1f\x7f-\x9f\u2028\u2029]")


def quote(text: str) -> str:
    """A Cypher string literal: backslash, quote and every control or line-separator character escaped.
    (A printable text without a quote or a backslash, the common case, is found so without a regex.)"""
    if (text.isprintable() and "'" not in text and "\\" not in text) or not _NEEDS_ESCAPE.search(text):
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
        return "[" + ", ".join(map(literal, value)) + "]"
    raise TypeError(type(value).__name__)


def properties(item: dict[str, Any], kind: str, kd_id: str, original_id: str, raw_json: str) -> str:
    """``{key: value, ...}`` sorted: fixed scalar keys and lists of strings as they are; objects and
    mixed lists only inside ``raw_json`` (the item itself, canonical JSON on one line), which keeps
    everything. (The ``key: value`` texts sort as their keys do: no name is another's prefix
    followed by a digit, the only name character that sorts before ``:``.)"""
    parts = [
        _ENTITY_KIND[kind],
        f"kd_id: '{kd_id}'",  # [a-z0-9-]: nothing to escape
        f"original_id: {quote(original_id)}",
        f"raw_json: {quote(raw_json)}",
    ]
    for key, value in item.items():  # fixed names only: a graph key never becomes a property name
        kind_of = type(value)
        if kind_of is str:
            if key in SCALARS:
                if value.isprintable() and "'" not in value and "\\" not in value:
                    parts.append(f"{key}: '{value}'")  # quote()'s common case, without the call
                else:
                    parts.append(_PREFIX[key] + quote(value))
        elif kind_of is list:
            if key in LISTS and value:
                try:  # a list of strings; anything else in it has no .isprintable: no property
                    parts.append(_PREFIX[key] + "[" + ", ".join(map(quote, value)) + "]")
                except AttributeError:
                    pass
        elif key in SCALARS and (kind_of is bool or kind_of is int or kind_of is float):
            if kind_of is not float or math.isfinite(value):
                parts.append(_PREFIX[key] + literal(value))
    parts.sort()
    return "{" + ", ".join(parts) + "}"


def _batches(rows: list[str], statement: str) -> list[str]:
    """``UNWIND [rows] AS row <statement>;`` for each run of at most ``BATCH`` rows, one row a line."""
    return [
        "UNWIND [\n" + ",\n".join(rows[at : at + BATCH]) + f"\n] AS row {statement};"
        for at in range(0, len(rows), BATCH)
    ]


# What stable_id(kind, identity) hashes before the identity, the id's head (and the kind's label):
# made once, so an id costs one sha256 (the same ids, a test holds).
_ENTITY_ID_PARTS = {
    kind: (f"{kind}\0".encode(), stable_id(kind, "")[:-24], label) for kind, label in LABELS.items()
}
_RELATIONSHIP_ID_PARTS = (b"rel-kd_relationship\0", stable_id("rel-kd_relationship", "")[:-24])


class Script:
    """Rows gathered per label and relationship type, then written sorted in ``UNWIND`` batches:
    entities first (one statement per batch of one label), then links. An entity is merged by its
    ``kd_id``; a plain link by its endpoints and type (at most one such link joins two entities);
    a concept-to-concept ``KD_RELATIONSHIP`` by its own ``kd_id`` (two concepts may be related in
    several ways)."""

    def __init__(self, encoded: EncodedGraph) -> None:
        self.encoded = encoded
        self.entities: list[tuple[str, str, str]] = []  # (kd_id, label, row)
        self.plain: dict[str, set[str]] = {}  # relationship -> rows {a: …, b: …}
        self.relationships: dict[str, str] = {}  # kd_id -> row {a: …, b: …, id: …, props: {…}}
        self.ids: set[str] = set()

    def entity(self, kind: str, identity: str, item: dict[str, Any], original_id: str) -> str:
        hashed, head, label = _ENTITY_ID_PARTS[kind]
        kd_id = head + hashlib.sha256(hashed + identity.encode("utf-8", "surrogatepass")).hexdigest()[:24]
        if kd_id in self.ids:
            return kd_id
        self.ids.add(kd_id)
        row = properties(item, kind, kd_id, original_id, self.encoded.line_of(item))
        self.entities.append((kd_id, label, row))
        return kd_id

    def links(self, relationship: str) -> set[str]:
        """The rows of the plain links of one type; a row is ``link_row(a, b)``, both entities of
        this script."""
        assert relationship in RELATIONSHIPS
        return self.plain.setdefault(relationship, set())

    def relationship(self, source: str, target: str, identity: str, kind: str, label: str | None) -> None:
        """A ``KD_RELATIONSHIP`` between two concepts, with its own ``kd_id`` and its properties
        ``edge_id``, ``kd_id``, ``label`` (when the edge has one) and ``relationship_type``, sorted."""
        hashed, head = _RELATIONSHIP_ID_PARTS
        kd_id = head + hashlib.sha256(hashed + identity.encode("utf-8", "surrogatepass")).hexdigest()[:24]
        labelled = f", label: {quote(label)}" if label is not None else ""
        props = (
            f"{{edge_id: {quote(identity)}, kd_id: '{kd_id}'{labelled}, relationship_type: {quote(kind)}}}"
        )
        self.relationships[kd_id] = f"{{a: '{source}', b: '{target}', id: '{kd_id}', props: {props}}}"

    def text(self) -> str:
        lines = [
            "// episteme-graph Cypher export for Neo4j 5: MERGE by kd_id, SET +=; never deletes.",
            "// Labels, relationship types and property names are constants: graph text is data.",
            CONSTRAINT,
        ]
        self.entities.sort()
        for label, group in itertools.groupby(self.entities, key=operator.itemgetter(1)):
            rows = [row for _, _, row in group]
            lines += _batches(rows, f"MERGE (n:KDEntity {{kd_id: row.kd_id}}) SET n:{label} SET n += row")
        match = "MATCH (a:KDEntity {kd_id: row.a}), (b:KDEntity {kd_id: row.b})"
        for relationship in sorted(self.plain):
            rows = sorted(self.plain[relationship])
            if rows:
                lines += _batches(rows, f"{match} MERGE (a)-[r:{relationship}]->(b)")
        rows = [row for _, row in sorted(self.relationships.items())]
        merge = "MERGE (a)-[r:KD_RELATIONSHIP {kd_id: row.id}]->(b) SET r += row.props"
        lines += _batches(rows, f"{match} {merge}")
        return "\n".join(lines) + "\n"


def link_row(source: str, target: str) -> str:
    """``{a: 'kd-…', b: 'kd-…'}``: kd_ids are [a-z0-9-], so quoting them needs no escape."""
    return f"{{a: '{source}', b: '{target}'}}"


def _ref(value: Any, table: dict[str, str]) -> bool:
    return isinstance(value, str) and value in table


def render(graph: dict[str, Any], options: dict[str, Any]) -> bytes:
    encoded = encode_graph(graph)
    script = Script(encoded)
    meta = model.metadata(graph)
    digest = encoded.sha256
    graph_item = {
        "title": model.text(meta.get("title")),
        "value": digest,
        "version": model.text(meta.get("distiller_spec_version")),
    }
    root = script.entity("graph", digest, graph_item, digest)

    def add(kind: str, objects: list[dict[str, Any]]) -> dict[str, str]:
        ids = {
            obj["id"]: script.entity(kind, obj["id"], obj, obj["id"]) for obj in model.unique_by_id(objects)
        }
        script.links(HAS[kind]).update([link_row(root, kd_id) for kd_id in ids.values()])
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
        script.links(HAS["question"]).add(link_row(root, qid))

    supported_by = script.links("SUPPORTED_BY")

    def supported(kd_id: str, item: dict[str, Any]) -> None:
        cited = item.get("evidence")
        if type(cited) is list:
            supported_by.update(
                [link_row(kd_id, evidence[e]) for e in cited if type(e) is str and e in evidence]
            )

    in_cluster, about = script.links("IN_CLUSTER"), script.links("ABOUT")
    from_source = script.links("DERIVED_FROM_SOURCE")
    for node in model.nodes(graph):
        cid = concepts[node["id"]]
        if _ref(node.get("cluster"), clusters):
            in_cluster.add(link_row(cid, clusters[node["cluster"]]))
        supported(cid, node)
    for ev in model.unique_by_id(model.items(graph, "evidence")):
        if _ref(ev.get("source"), sources):
            from_source.add(link_row(evidence[ev["id"]], sources[ev["source"]]))
    claim_of = script.links("CLAIM_OF")
    for claim in model.unique_by_id(model.items(graph, "claims")):
        if _ref(claim.get("node"), concepts):
            claim_of.add(link_row(claims[claim["id"]], concepts[claim["node"]]))
        supported(claims[claim["id"]], claim)
    has_edge, from_concept, to_concept = (
        script.links(HAS["edge"]),
        script.links("FROM_CONCEPT"),
        script.links("TO_CONCEPT"),
    )
    for edge in model.edges(graph):
        identity = edge["id"] if isinstance(edge.get("id"), str) else model.edge_identity(edge)
        eid = script.entity("edge", identity, edge, identity)
        source, target = concepts[edge["source"]], concepts[edge["target"]]
        has_edge.add(link_row(root, eid))
        from_concept.add(link_row(eid, source))
        to_concept.add(link_row(eid, target))
        supported(eid, edge)
        label = edge.get("label")
        script.relationship(source, target, identity, edge["type"], label if isinstance(label, str) else None)
    for fact in model.unique_by_id(model.items(graph, "facts")):
        if _ref(fact.get("source"), sources):
            from_source.add(link_row(facts[fact["id"]], sources[fact["source"]]))
        if _ref(fact.get("concept"), concepts):
            about.add(link_row(facts[fact["id"]], concepts[fact["concept"]]))
        supported(facts[fact["id"]], fact)
    for chunk in model.unique_by_id(model.items(graph, "chunks")):
        kd_id = chunks[chunk["id"]]
        about.update(
            [link_row(kd_id, concepts[c]) for c in model.strings(chunk.get("concepts")) if c in concepts]
        )
        supported(kd_id, chunk)
    for assessment in model.unique_by_id(model.items(graph, "assessments")):
        supported(assessments[assessment["id"]], assessment)
    for conflict in model.unique_by_id(model.items(graph, "fact_conflicts")):
        kd_id = conflicts[conflict["id"]]
        about.update([link_row(kd_id, facts[f]) for f in model.strings(conflict.get("facts")) if f in facts])
        supported(kd_id, conflict)
    return script.text().encode("utf-8")
