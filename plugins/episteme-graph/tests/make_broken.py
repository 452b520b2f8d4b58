"""Writes tests/fixtures/broken/: one reference graph with one rule broken per file, and
expected.json (file -> the finding it must give). Run it to refresh the corpus; a test checks that
the committed files are what it writes."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures"
BROKEN = FIXTURES / "broken"

Graph = dict[str, Any]


def _set(path: list[Any], value: Any) -> Callable[[Graph], None]:
    def change(graph: Graph) -> None:
        target = graph
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


def _delete(path: list[Any]) -> Callable[[Graph], None]:
    def change(graph: Graph) -> None:
        target = graph
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return change


def _both(first: Callable[[Graph], None], second: Callable[[Graph], None]) -> Callable[[Graph], None]:
    def change(graph: Graph) -> None:
        first(graph)
        second(graph)

    return change


def _duplicate_node(graph: Graph) -> None:
    graph["nodes"].append(copy.deepcopy(graph["nodes"][0]))
    graph["metadata"]["concept_count"] = len(graph["nodes"])


def _redacted_with_geometry(graph: Graph) -> None:
    place = graph["nodes"][0]["spatial_contexts"][0]["place"]
    place.update(
        {"redacted": True, "sensitive": True, "geometry": {"type": "Point", "coordinates": [13.4, 52.5]}}
    )
    del place["identifiers"]


# file stem -> (base fixture, change, expected path, expected rule, words the message holds)
CASES: dict[str, tuple[str, Callable[[Graph], None], str, str, str]] = {
    "missing-title": (
        "minimal",
        _delete(["metadata", "title"]),
        "$.metadata.title",
        "schema:required",
        "required property is missing",
    ),
    "wrong-distiller-version": (
        "minimal",
        _set(["metadata", "distiller_version"], "3.1"),
        "$.metadata.distiller_version",
        "schema:const",
        'must be "4.0"',
    ),
    "malformed-spec-version": (
        "minimal",
        _set(["metadata", "distiller_spec_version"], "one"),
        "$.metadata.distiller_spec_version",
        "schema:pattern",
        "does not match",
    ),
    "node-id-not-kebab": (
        "minimal",
        _set(["nodes", 2, "id"], "Gamma_Node"),
        "$.nodes[2].id",
        "schema:pattern",
        "does not match the pattern",
    ),
    "duplicate-node-id": (
        "minimal",
        _duplicate_node,
        "$.nodes[3].id",
        "duplicate-id",
        "duplicate node id 'alpha'",
    ),
    "dangling-edge-target": (
        "minimal",
        _set(["edges", 0, "target"], "delta"),
        "$.edges[0].target",
        "reference",
        "node 'delta' does not exist",
    ),
    "edge-id-not-canonical": (
        "minimal",
        _set(["edges", 1, "id"], "gamma__tension__beta"),
        "$.edges[1].id",
        "edge-id",
        "is not the canonical 'beta__tension__gamma'",
    ),
    "edge-type-unknown": (
        "minimal",
        _set(["edges", 0, "type"], "likes"),
        "$.edges[0].type",
        "schema:enum",
        "must be one of",
    ),
    "edge-weight-boolean": (
        "minimal",
        _set(["edges", 0, "weight"], True),
        "$.edges[0].weight",
        "schema:type",
        "expected number",
    ),
    "node-not-in-cluster": (
        "minimal",
        _set(["clusters", 0, "concepts"], ["alpha"]),
        "$.nodes[1].cluster",
        "cluster-membership",
        "is not listed in the concepts of cluster 'c1'",
    ),
    "unknown-cluster": (
        "minimal",
        _set(["nodes", 2, "cluster"], "c9"),
        "$.nodes[2].cluster",
        "reference",
        "cluster 'c9' does not exist",
    ),
    "citation-out-of-range": (
        "minimal",
        _set(["nodes", 0, "citations", 0, "n"], 2),
        "$.nodes[0].citations[0].n",
        "citation-number",
        "outside 1..1",
    ),
    "citation-wrong-source": (
        "contextual",
        _set(["nodes", 0, "citations", 0, "source"], "source-9"),
        "$.nodes[0].citations[0].n",
        "citation-number",
        "names source 'source-9'",
    ),
    "statement-marker-out-of-range": (
        "minimal",
        _set(["nodes", 1, "statements"], ["Beta is used. [7]"]),
        "$.nodes[1].statements[0]",
        "citation-marker",
        "[7] is outside 1..1",
    ),
    "count-mismatch": (
        "minimal",
        _set(["metadata", "concept_count"], 4),
        "$.metadata.concept_count",
        "count",
        "concept_count says 4 but the graph holds 3 nodes",
    ),
    "stale-score": (
        "minimal",
        _set(["metadata", "quality_score"], 90),
        "$.metadata.quality_score",
        "stored-score",
        "quality_score says 90 but the findings give 100",
    ),
    "private-reasoning": (
        "minimal",
        _set(["nodes", 0, "Chain-Of-Thought"], "because"),
        '$.nodes[0]["Chain-Of-Thought"]',
        "private-reasoning",
        "holds private reasoning",
    ),
    "private-reasoning-in-extension": (
        "minimal",
        _set(["x-notes"], {"c.o.t": "hidden"}),
        '$["x-notes"]["c.o.t"]',
        "private-reasoning",
        "holds private reasoning",
    ),
    "javascript-url": (
        "contextual",
        _set(["metadata", "sources", 0, "url"], "javascript:alert(1)"),
        "$.metadata.sources[0].url",
        "unsafe-url",
        "scheme javascript: is not allowed",
    ),
    "credential-userinfo": (
        "contextual",
        _set(["metadata", "sources", 0, "url"], "https://ann:pw@example.org/x"),
        "$.metadata.sources[0].url",
        "unsafe-url",
        "userinfo",
    ),
    "credential-query": (
        "contextual",
        _set(["nodes", 0, "citations", 0, "url"], "https://example.org/x?X-Amz-Signature=abc"),
        "$.nodes[0].citations[0].url",
        "unsafe-url",
        "credential-like query parameter",
    ),
    "resource-scheme": (
        "contextual",
        _set(["nodes", 1, "resource"], "file:///etc/passwd"),
        "$.nodes[1].resource",
        "unsafe-url",
        "scheme file: is not allowed",
    ),
    "duplicate-resource": (
        "contextual",
        _set(["nodes", 1, "resource"], "urn:kd:concept:alpha"),
        "$.nodes[1].resource",
        "duplicate-resource",
        "duplicate resource identity",
    ),
    "claim-not-verbatim": (
        "contextual",
        _set(["claims", 0, "statement"], "Alpha enables Beta."),
        "$.claims[0].statement",
        "claim-projection",
        "verbatim",
    ),
    "claim-unknown-node": (
        "contextual",
        _set(["claims", 0, "node"], "omega"),
        "$.claims[0].node",
        "reference",
        "node 'omega' does not exist",
    ),
    "dangling-evidence": (
        "contextual",
        _set(["edges", 0, "evidence"], ["evidence-missing"]),
        "$.edges[0].evidence[0]",
        "reference",
        "evidence 'evidence-missing' does not exist",
    ),
    "source-stated-without-evidence": (
        "contextual",
        _delete(["facts", 0, "evidence"]),
        "$.facts[0].evidence",
        "schema:required",
        "required property is missing",
    ),
    "inferred-without-derivation": (
        "contextual",
        _delete(["chunks", 1, "derivation"]),
        "$.chunks[1].derivation",
        "schema:required",
        "required property is missing",
    ),
    "inference-in-default-retrieval": (
        "contextual",
        _set(["chunks", 1, "include_in_default_retrieval"], True),
        "$.chunks[1].include_in_default_retrieval",
        "inference-retrieval",
        "must set include_in_default_retrieval to false",
    ),
    "chunk-not-clean": (
        "minimal",
        _set(["chunks", 0, "text"], "Alpha **depends** on [[Beta]]."),
        "$.chunks[0].text",
        "chunk-clean-text",
        "must be clean",
    ),
    "fact-conflict-one-fact": (
        "contextual",
        _set(["fact_conflicts", 0, "facts"], ["fact-deployments-source"]),
        "$.fact_conflicts[0].facts",
        "schema:minItems",
        "at least 2",
    ),
    "fact-conflict-unknown-fact": (
        "contextual",
        _set(["fact_conflicts", 0, "facts", 1], "fact-nope"),
        "$.fact_conflicts[0].facts[1]",
        "reference",
        "fact 'fact-nope' does not exist",
    ),
    "sensitive-not-redacted": (
        "contextual",
        _set(["nodes", 0, "spatial_contexts", 0, "place", "sensitive"], True),
        "$.nodes[0].spatial_contexts[0].place.redacted",
        "place-privacy",
        "a sensitive place must be redacted",
    ),
    "redacted-with-geometry": (
        "contextual",
        _redacted_with_geometry,
        "$.nodes[0].spatial_contexts[0].place.geometry",
        "place-privacy",
        "a redacted place must omit geometry",
    ),
    "excerpt-hash": (
        "contextual",
        _set(["evidence", 0, "excerpt_sha256"], "0" * 64),
        "$.evidence[0].excerpt_sha256",
        "excerpt-hash",
        "is not the sha256 of the excerpt",
    ),
    "evidence-id-pattern": (
        "contextual",
        _set(["evidence", 0, "id"], "-bad id"),
        "$.evidence[0].id",
        "schema:pattern",
        "does not match the pattern",
    ),
    "date-month": (
        "minimal",
        _set(["metadata", "distillation_date"], "2026-13-01"),
        "$.metadata.distillation_date",
        "date",
        "month 13 does not exist",
    ),
    "date-pattern": (
        "minimal",
        _set(["metadata", "sources", 0, "date"], "January 2026"),
        "$.metadata.sources[0].date",
        "schema:anyOf",
        "matches none of the allowed forms",
    ),
    "valid-until-before-from": (
        "minimal",
        _set(["nodes", 0, "temporal", "valid_until"], "2025-12"),
        "$.nodes[0].temporal.valid_until",
        "date",
        "valid_until is before valid_from",
    ),
    "retrieved-at-without-zone": (
        "contextual",
        _set(["metadata", "sources", 0, "retrieved_at"], "2026-09-04T09:00:00"),
        "$.metadata.sources[0].retrieved_at",
        "schema:format",
        "is not a valid date-time",
    ),
    "selector-range": (
        "contextual",
        _set(["evidence", 0, "selector"], {"type": "TextPositionSelector", "start": 9, "end": 3}),
        "$.evidence[0].selector.end",
        "selector-range",
        "end 3 is before start 9",
    ),
    "unknown-key-warning": (
        "minimal",
        _both(_set(["nodes", 0, "colour"], "red"), _set(["metadata", "quality_score"], 98)),
        "$.nodes[0].colour",
        "unknown-key",
        "unknown field 'colour'",
    ),
}


def build() -> dict[str, dict[str, Any]]:
    """Every broken graph (as bytes to write) and what it must give."""
    out = {}
    for stem, (base, change, path, rule, words) in CASES.items():
        graph = json.loads((FIXTURES / f"{base}.knowledge.json").read_text("utf-8"))
        change(graph)
        out[stem] = {
            "bytes": (json.dumps(graph, ensure_ascii=False, indent=1) + "\n").encode("utf-8"),
            "expected": {"base": base, "path": path, "rule": rule, "message": words},
        }
    return out


def main() -> None:
    BROKEN.mkdir(exist_ok=True)
    built = build()
    for stem, item in built.items():
        (BROKEN / f"{stem}.knowledge.json").write_bytes(item["bytes"])
    expected = {stem: item["expected"] for stem, item in sorted(built.items())}
    (BROKEN / "expected.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n", "utf-8")


if __name__ == "__main__":
    main()
