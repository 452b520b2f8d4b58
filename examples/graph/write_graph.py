"""The agent's step of the demo: write a knowledge graph around evidence episteme found.

episteme never writes a claim. An agent (here, this script standing in for one) wrote the concepts,
their statements and the relationship in ``concepts.json``; episteme supplied the evidence, as
``episteme query ... --json | episteme graph evidence --from - --json`` printed it. This script
attaches to each concept the evidence records whose excerpt holds one of its ``quotes`` (and fails,
naming the quote, when none does), cites their sources, states each statement as a claim
``paraphrased`` from that evidence, and lets episteme-graph compute the derived fields (counts,
cluster members, edge ids, scores). The same inputs write the same bytes.

    python examples/graph/write_graph.py examples/graph/concepts.json EVIDENCE.json --out GRAPH.knowledge.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("concepts", type=Path, help="the agent's concepts (examples/graph/concepts.json)")
    parser.add_argument("evidence", type=Path, help="graph evidence --json output (its envelope or data)")
    parser.add_argument("--out", type=Path, required=True, help="the .knowledge.json graph to write")
    args = parser.parse_args(argv)
    concepts = json.loads(args.concepts.read_text("utf-8"))
    found = json.loads(args.evidence.read_text("utf-8"))
    data = found.get("data", found) if isinstance(found, dict) else None
    if not isinstance(data, dict) or "evidence" not in data:
        sys.exit(f"{args.evidence}: not the output of 'episteme graph evidence --json'")
    try:
        graph = build_graph(concepts, data)
    except LookupError as exc:
        sys.exit(f"write_graph: {exc}")
    from episteme_graph.merge import recompute

    validation = recompute(graph)
    args.out.write_text(json.dumps(graph, indent=2, sort_keys=True, ensure_ascii=False) + "\n", "utf-8")
    print(f"wrote {args.out}: {len(graph['nodes'])} concepts, {len(graph['edges'])} relationship(s), "
          f"{len(graph['evidence'])} evidence record(s) from {len(graph['metadata']['sources'])} source(s); "
          f"conformance {validation.score}")
    return 0


def build_graph(concepts: dict[str, Any], found: dict[str, Any]) -> dict[str, Any]:
    """A Spec 1.1 graph: the agent's concepts, each holding the evidence its quotes pick."""
    sources_by_id = {source["id"]: source for source in found["sources"]}
    used_sources: list[str] = []
    used_evidence: dict[str, dict[str, Any]] = {}
    nodes, claims = [], []
    temporal = {"source_date": concepts["source_date"], "source_period": None,
                "valid_from": concepts["source_date"], "valid_until": None, "temporal_confidence": "explicit"}
    for concept in concepts["nodes"]:
        picked = [record for record in found["evidence"]
                  if any(quote in record["excerpt"] for quote in concept["quotes"])]
        if not picked:
            raise LookupError(f"no evidence record holds any quote of {concept['id']}: {concept['quotes']}")
        for record in picked:
            used_evidence.setdefault(record["id"], record)
            if record["source"] not in used_sources:
                used_sources.append(record["source"])
        cited = sorted({record["source"] for record in picked}, key=used_sources.index)
        markers = " ".join(f"[{used_sources.index(s) + 1}]" for s in cited)
        statement = f"{concept['statement']} {markers}"
        evidence_ids = [record["id"] for record in picked]
        nodes.append({
            "id": concept["id"], "label": concept["label"], "cluster": concept["cluster"],
            "confidence": "high",
            "definition": concept["definition"], "relevance": concept["relevance"],
            "resource": concept["resource"], "statements": [statement], "temporal": temporal,
            "sources": cited, "evidence": evidence_ids,
            "citations": [{"n": used_sources.index(s) + 1, "source": s, "locator": None,
                           "label": sources_by_id[s].get("title") or sources_by_id[s]["file"],
                           "url": sources_by_id[s].get("url")} for s in cited],
            "claim_ids": [f"claim:{concept['id']}:1"],
        })
        claims.append({"id": f"claim:{concept['id']}:1", "node": concept["id"], "statement": statement,
                       "confidence": "high", "origin": "paraphrased", "evidence": evidence_ids})
    edges = [{**edge, "id": "", "temporal": {"valid_from": None, "valid_until": None},
              "origin": "human_added"} for edge in concepts["edges"]]
    return {
        "metadata": {
            "title": concepts["title"], "distiller_version": "4.0", "distiller_spec_version": "1.1",
            "sources": [sources_by_id[s] for s in used_sources],
            "distillation_date": concepts["distillation_date"], "domain": concepts["domain"],
            "language": concepts["language"], "depth": "quick", "mode": "fresh", "quality_score": 0,
            "conformance_score": 0, "temporal_confidence": "explicit", "concept_count": 0,
            "relationship_count": 0, "cluster_count": 0,
        },
        "clusters": [{**cluster, "concepts": []} for cluster in concepts["clusters"]],
        "nodes": nodes,
        "edges": edges,
        "evidence": list(used_evidence.values()),
        "claims": claims,
        "open_questions": [],
    }


if __name__ == "__main__":
    sys.exit(main())
