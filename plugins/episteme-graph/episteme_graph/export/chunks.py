"""Embedding-ready clean-text chunks: one canonical JSON line per chunk (or per concept when the graph
has none), text cleaned of Markdown, wiki links, arrows, emoji and citation markers."""

from __future__ import annotations

import re
from typing import Any

from episteme_graph import model
from episteme_graph.export.common import concept_contexts, json_line

# Spaces before an arrow are taken from where their run starts (or none, right after a match), so a
# long run is scanned once, not from each of its spaces.
_ARROWS = re.compile(r"(?:(?<!\s)\s*|)(?:<->|->|[\u2190-\u21ff\u27f6])\s*")
_EMOJI = re.compile("[\U0001f000-\U0001faff\u2600-\u27bf\U0001f1e6-\U0001f1ff]")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+", re.MULTILINE)
_SPACES = re.compile(r"[ \t]+")


def clean(text: str) -> str:
    """Text fit for an embedding model: no markup characters, markers or pictographs."""
    text = model.strip_markers(text)
    text = text.replace("[[", "").replace("]]", "").replace("**", "").replace("__", "").replace("`", "")
    text = _HEADING.sub("", text)
    text = _ARROWS.sub(" to ", text)
    text = _EMOJI.sub("", text)
    return "\n\n".join(_SPACES.sub(" ", p).strip() for p in text.split("\n\n") if p.strip())


def render(graph: dict[str, Any], options: dict[str, Any]) -> bytes:
    include_inferred = bool(options.get("include_inferred"))
    lines = []
    chunks = model.items(graph, "chunks")
    if chunks:
        rows = []
        for chunk in chunks:
            if chunk.get("include_in_default_retrieval") is False and not include_inferred:
                continue
            rows.append(
                {
                    "id": model.text(chunk.get("id")),
                    "text": clean(model.text(chunk.get("text"))),
                    "concepts": sorted(set(model.strings(chunk.get("concepts")))),
                    "kind": model.text(chunk.get("kind"), "source_claims"),
                    "evidence": sorted(set(model.strings(chunk.get("evidence")))),
                    "origin": chunk.get("origin") if isinstance(chunk.get("origin"), str) else None,
                    "temporalScope": chunk.get("temporal_scope")
                    if isinstance(chunk.get("temporal_scope"), str)
                    else None,
                    "includeInDefaultRetrieval": chunk.get("include_in_default_retrieval") is not False,
                    "synthetic": False,
                }
            )
    else:
        rows = [
            {
                "id": r["id"],
                "text": clean(r["text"]),
                "concepts": r["concepts"],
                "kind": r["kind"],
                "evidence": r["evidence"],
                "origin": None,
                "temporalScope": None,
                "includeInDefaultRetrieval": True,
                "synthetic": True,
            }
            for r in concept_contexts(graph)
        ]
    for row in sorted(rows, key=lambda r: (r["id"], json_line(r))):
        if row["text"]:
            lines.append(json_line(row))
    return "".join(line + "\n" for line in lines).encode("utf-8")
