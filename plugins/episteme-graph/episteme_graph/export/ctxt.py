"""KD-CTXT/1: a line-oriented text format of a graph's retrieval records, with body byte counts and
hashes so a reader can frame each body exactly (a body may contain ``===`` or ``---``)."""

from __future__ import annotations

import hashlib
from typing import Any

from episteme_graph import model
from episteme_graph.export.common import concept_contexts, graph_sha256, json_line


def _records(graph: Any) -> list[dict[str, Any]]:
    chunks = model.items(graph, "chunks")
    if not chunks:
        return concept_contexts(graph)
    labels = {n["id"]: model.text(n.get("label"), n["id"]) for n in model.nodes(graph)}
    records = []
    for chunk in sorted(chunks, key=lambda c: (model.text(c.get("id")), json_line(c))):
        concepts = sorted(set(model.strings(chunk.get("concepts"))))
        titles = [labels[c] for c in model.strings(chunk.get("concepts")) if c in labels]
        chunk_id = model.text(chunk.get("id"))
        records.append(
            {
                "id": chunk_id,
                "title": " / ".join(titles) if titles else chunk_id,
                "kind": model.text(chunk.get("kind"), "source_claims"),
                "concepts": concepts,
                "evidence": sorted(set(model.strings(chunk.get("evidence")))),
                "origin": chunk.get("origin") if isinstance(chunk.get("origin"), str) else None,
                "spatial_contexts": chunk.get("spatial_contexts")
                if isinstance(chunk.get("spatial_contexts"), list)
                else [],
                "derivation": chunk.get("derivation") if isinstance(chunk.get("derivation"), dict) else None,
                "synthetic": False,
                "raw": chunk,
                "text": model.text(chunk.get("text")),
            }
        )
    return records


def render(graph: dict[str, Any], options: dict[str, Any]) -> bytes:
    meta = model.metadata(graph)
    version = meta.get("distiller_spec_version")
    title = meta.get("title")
    out = [
        "#!KD-CTXT/1",
        f"graph-sha256: {graph_sha256(graph)}",
        f"spec-version-json: {json_line(version if isinstance(version, str) else 'unknown')}",
        f"title-json: {json_line(title if isinstance(title, str) and title else 'Untitled graph')}",
        f"graph-json: {json_line(graph)}",
    ]
    data = ("\n".join(out) + "\n").encode("utf-8")
    parts = [data]
    for record in _records(graph):
        body = record["text"].replace("\r\n", "\n").replace("\r", "\n").encode("utf-8", "surrogatepass")
        record_json = {
            key: record[key]
            for key in (
                "concepts",
                "derivation",
                "evidence",
                "id",
                "kind",
                "origin",
                "raw",
                "spatial_contexts",
                "synthetic",
                "title",
            )
        }
        record_json["text"] = record["text"]
        head = [
            "===",
            f"id-json: {json_line(record['id'])}",
            f"title-json: {json_line(record['title'])}",
            f"kind-json: {json_line(record['kind'])}",
            f"concepts-json: {json_line(record['concepts'])}",
            f"evidence-json: {json_line(record['evidence'])}",
            f"origin-json: {json_line(record['origin'])}",
            f"spatial-contexts-json: {json_line(record['spatial_contexts'])}",
            f"derivation-json: {json_line(record['derivation'])}",
            f"record-json: {json_line(record_json)}",
            f"body-utf8-bytes: {len(body)}",
            f"body-sha256: {hashlib.sha256(body).hexdigest()}",
            "---",
        ]
        parts.append(("\n".join(head) + "\n").encode("utf-8"))
        parts.append(body + b"\n")
    return b"".join(parts)


def parse(data: bytes) -> dict[str, Any]:
    """Read a KD-CTXT/1 file back (header fields and records), checking every byte count and hash."""
    import json

    lines_end = data.index(b"\n===\n") + 1 if b"\n===\n" in data else len(data)
    header_lines = data[:lines_end].decode("utf-8").splitlines()
    if not header_lines or header_lines[0] != "#!KD-CTXT/1":
        raise ValueError("not a KD-CTXT/1 file")
    header = dict(line.split(": ", 1) for line in header_lines[1:])
    records = []
    at = lines_end
    while at < len(data):
        end = data.index(b"\n---\n", at) + 5
        fields = dict(line.split(": ", 1) for line in data[at : end - 4].decode("utf-8").splitlines()[1:])
        size = int(fields["body-utf8-bytes"])
        body = data[end : end + size]
        if (
            hashlib.sha256(body).hexdigest() != fields["body-sha256"]
            or data[end + size : end + size + 1] != b"\n"
        ):
            raise ValueError(f"record {fields['id-json']}: body does not match its hash or framing")
        records.append(
            {
                "fields": {k: json.loads(v) if k.endswith("-json") else v for k, v in fields.items()},
                "body": body.decode("utf-8"),
            }
        )
        at = end + size + 1
    return {
        "header": {k: json.loads(v) if k.endswith("-json") else v for k, v in header.items()},
        "records": records,
    }
