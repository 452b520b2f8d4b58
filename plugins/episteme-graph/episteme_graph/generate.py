"""A valid synthetic graph of any size, for benchmarks and tests (deterministic for a given seed)."""

from __future__ import annotations

import random
from typing import Any

from episteme_graph.rules import canonical_edge_id

EDGE_TYPES = ("uses", "enables", "based-on", "part-of", "tension", "replaces", "extends", "example-of")


def synthetic_graph(
    nodes: int, *, clusters: int | None = None, edges_per_node: int = 2, seed: int = 7, prefix: str = "n"
) -> dict[str, Any]:
    """A Spec 1.1 graph of ``nodes`` concepts with evidence, claims, facts and chunks; it validates
    with no finding and its stored scores are 100."""
    rng = random.Random(seed)
    cluster_count = clusters or max(1, nodes // 50)
    sources = [
        {
            "id": f"s{i}",
            "file": f"source-{i}.txt",
            "type": "txt",
            "date": "2026-01",
            "url": None,
            "content_sha256": f"{i:064x}",
        }
        for i in range(1, 4)
    ]
    node_ids = [f"{prefix}{i}" for i in range(nodes)]
    evidence, claims, facts, chunks, node_list = [], [], [], [], []
    members: dict[str, list[str]] = {f"c{c}": [] for c in range(cluster_count)}
    for i, node_id in enumerate(node_ids):
        cluster = f"c{i % cluster_count}"
        members[cluster].append(node_id)
        n = 1 + i % len(sources)
        source = sources[n - 1]["id"]
        exact = f"Concept {node_id} is described in source {source}."
        ev_id = f"ev:{node_id}"
        evidence.append(
            {
                "id": ev_id,
                "source": source,
                "support": "supports",
                "attribution_basis": "source_explicit",
                "excerpt": exact,
                "selector": {
                    "type": "TextQuoteSelector",
                    "exact": exact,
                    "prefix": "Note: ",
                    "suffix": " End.",
                },
            }
        )
        statement = f"{node_id.upper()} is described in {source}. [{n}]"
        claims.append(
            {
                "id": f"claim:{node_id}",
                "node": node_id,
                "statement": statement,
                "confidence": "high",
                "origin": "source_stated",
                "evidence": [ev_id],
            }
        )
        node_list.append(
            {
                "id": node_id,
                "label": f"Concept {node_id}",
                "cluster": cluster,
                "confidence": ("high", "medium", "low")[i % 3],
                "definition": f"The concept {node_id}, number {i}.",
                "relevance": "It is part of the benchmark.",
                "resource": f"urn:kd:concept:{node_id}",
                "statements": [statement],
                "temporal": {
                    "source_date": "2026-01",
                    "source_period": None,
                    "valid_from": "2026-01",
                    "valid_until": None,
                    "temporal_confidence": "explicit",
                },
                "sources": [source],
                "citations": [
                    {"n": n, "source": source, "locator": None, "label": sources[n - 1]["file"], "url": None}
                ],
                "evidence": [ev_id],
                "claim_ids": [f"claim:{node_id}"],
            }
        )
        if i % 10 == 0:
            facts.append(
                {
                    "id": f"fact-{node_id}",
                    "statement": f"Measure of {node_id}",
                    "value": str(i),
                    "confidence": "high",
                    "source": source,
                    "concept": node_id,
                    "metric": "size",
                    "evidence": [ev_id],
                    "origin": "source_stated",
                }
            )
            chunks.append(
                {
                    "id": f"chunk-{node_id}",
                    "text": f"The concept {node_id} is number {i}.",
                    "concepts": [node_id],
                    "kind": "source_claims",
                    "evidence": [ev_id],
                    "origin": "source_stated",
                    "include_in_default_retrieval": True,
                }
            )
    edges: dict[str, dict[str, Any]] = {}
    for source_id in node_ids:
        for _ in range(edges_per_node if nodes > 1 else 0):
            target = node_ids[rng.randrange(nodes)]
            if target == source_id:
                continue
            edge_type = EDGE_TYPES[rng.randrange(len(EDGE_TYPES))]
            edge_id = canonical_edge_id(source_id, edge_type, target)
            a, b = (source_id, target)
            if edge_type == "tension" and b < a:
                a, b = b, a
            edges.setdefault(
                edge_id,
                {
                    "id": edge_id,
                    "source": a,
                    "target": b,
                    "type": edge_type,
                    "weight": round(rng.random(), 3),
                    "confidence": "medium",
                    "evidence": [f"ev:{a}"],
                    "origin": "source_stated",
                },
            )
    graph = {
        "@context": {"@vocab": "https://schema.org/", "kd": "https://knowledge-distiller.dev/v4/"},
        "metadata": {
            "title": f"Synthetic graph of {nodes} concepts",
            "distiller_version": "4.0",
            "distiller_spec_version": "1.1",
            "sources": sources,
            "distillation_date": "2026-02-01",
            "domain": "Benchmark",
            "language": "en",
            "depth": "standard",
            "mode": "fresh",
            "quality_score": 100,
            "conformance_score": 100,
            "temporal_confidence": "explicit",
            "concept_count": nodes,
            "relationship_count": len(edges),
            "cluster_count": cluster_count,
            "fact_count": len(facts),
        },
        "clusters": [{"id": cid, "label": f"Cluster {cid}", "concepts": ids} for cid, ids in members.items()],
        "nodes": node_list,
        "edges": list(edges.values()),
        "facts": facts,
        "chunks": chunks,
        "evidence": evidence,
        "claims": claims,
        "open_questions": [],
    }
    return graph
