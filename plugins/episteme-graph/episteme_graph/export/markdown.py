"""The Markdown view of a graph: front matter, concept map, one section per concept, a Mermaid graph,
relationship provenance, facts, open questions, chunks, evidence, claims, assessments, conflicts and
sources. Graph text is escaped so that it shows as written and never becomes markup."""

from __future__ import annotations

import re
from typing import Any

from episteme_graph import model, urls
from episteme_graph.export.common import json_line

PHRASES = {
    "uses": "uses",
    "enables": "enables",
    "based-on": "based on",
    "part-of": "part of",
    "tension": "in tension with",
    "replaces": "replaces",
    "extends": "extends",
    "example-of": "example of",
}
FRONT_KEYS = (
    "title",
    "distiller_version",
    "distiller_spec_version",
    "distillation_date",
    "domain",
    "language",
    "depth",
    "mode",
    "conformance_score",
    "quality_score",
    "temporal_confidence",
    "concept_count",
    "relationship_count",
    "cluster_count",
    "fact_count",
)
_ESCAPES = {
    "\\": "\\\\",
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
    **{char: f"\\{char}" for char in "[]`|*_#"},
    **{
        chr(code): " "
        for code in (*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0), 0x2028, 0x2029)
    },
}
_ESCAPED = re.compile("[" + re.escape("".join(_ESCAPES)) + "]")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _escape(match: re.Match[str]) -> str:
    return _ESCAPES[match.group()]


def inline(text: Any) -> str:
    """One line of Markdown that shows ``text`` as written: markup characters escaped, control and
    line-separator characters made spaces, breaks folded. (Each character is replaced at most once,
    so the escapes never escape each other.)"""
    value = text if isinstance(text, str) else str(text) if isinstance(text, int | float) else ""
    if _ESCAPED.search(value):
        value = _ESCAPED.sub(_escape, value)
    return " ".join(value.split())


def code_span(text: Any) -> str:
    """``text`` as one inline code span, shown exactly (a code span interprets no markup): control
    and line-separator characters become spaces, and the fence is one backtick longer than the
    longest run of backticks inside."""
    value = text if isinstance(text, str) else str(text)
    value = " ".join(_CONTROL.sub(" ", value).split())
    fence = "`" * (max((len(run) for run in re.findall("`+", value)), default=0) + 1)
    pad = " " if value.startswith("`") or value.endswith("`") or not value else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def code(value: Any) -> str:
    """A value as an indented block of JSON (never interpreted)."""
    return "\n".join("    " + line for line in json_line(value).split("\n"))


def scalar(value: Any) -> str:
    """A YAML front-matter scalar: JSON-quoted (JSON is YAML), control characters escaped."""
    return json_line(value).replace("\u007f", "\\u007f")


def mermaid_label(text: str) -> str:
    return re.sub(r"[^\w .,:;()/-]", "", text, flags=re.UNICODE)[:80] or "?"


def render(graph: dict[str, Any], options: dict[str, Any]) -> bytes:  # noqa: C901 - one section each
    meta = model.metadata(graph)
    nodes = sorted(model.nodes(graph), key=lambda n: n["id"])
    labels = {n["id"]: model.text(n.get("label"), n["id"]) for n in nodes}
    shown = {node_id: inline(label) for node_id, label in labels.items()}  # each label escaped once
    clusters = model.unique_by_id(model.items(graph, "clusters"))
    edges = model.edges(graph)
    claims = model.unique_by_id(model.items(graph, "claims"))
    evidence = model.unique_by_id(model.items(graph, "evidence"))
    sources = model.unique_by_id(model.sources(graph))
    superseded = model.superseded(graph)
    out: list[str] = ["---"]
    for key in FRONT_KEYS:
        if key in meta and isinstance(meta[key], str | int | float | bool):
            out.append(f"{key}: {scalar(meta[key])}")
    out.append("sources:")
    for source in sources:
        out.append(f"  - id: {scalar(source['id'])}")
        for key in ("file", "type", "date", "title", "content_sha256"):
            if isinstance(source.get(key), str):
                out.append(f"    {key}: {scalar(source[key])}")
        url = source.get("url")
        if isinstance(url, str) and url:
            out.append(f"    {'url' if urls.problem(url) is None else 'url_unsafe'}: {scalar(url)}")
    out += ["---", "", f"# {inline(meta.get('title') or 'Untitled graph')}", ""]

    out += ["## Concept map", ""]
    by_cluster: dict[str, list[dict[str, Any]]] = {}
    for node in nodes:
        by_cluster.setdefault(model.text(node.get("cluster")), []).append(node)
    outgoing: dict[str, list[dict[str, Any]]] = {}
    incoming: dict[str, list[dict[str, Any]]] = {}
    for edge in edges:
        outgoing.setdefault(edge["source"], []).append(edge)
        incoming.setdefault(edge["target"], []).append(edge)
    cluster_labels = {c["id"]: model.text(c.get("label"), c["id"]) for c in clusters}
    for cluster_id in sorted(by_cluster):
        out.append(f"### {inline(cluster_labels.get(cluster_id, cluster_id or 'Unclustered'))}")
        out.append("")
        for node in by_cluster[cluster_id]:
            out.append(f"- **{shown[node['id']]}**")
            for edge in sorted(outgoing.get(node["id"], []), key=lambda e: (e["type"], e["target"])):
                out.append(f"  - {PHRASES.get(edge['type'], inline(edge['type']))}: {shown[edge['target']]}")
        out.append("")

    out += ["## Concepts", ""]
    claims_of: dict[str, list[dict[str, Any]]] = {}
    for claim in claims:
        claims_of.setdefault(model.text(claim.get("node")), []).append(claim)
    for node in nodes:
        out.append(f"### {shown[node['id']]}")
        out.append("")
        badges = [
            f"id `{inline(node['id'])}`",
            f"confidence {inline(node.get('confidence'))}",
            f"cluster {inline(cluster_labels.get(model.text(node.get('cluster')), node.get('cluster')))}",
        ]
        if node["id"] in superseded:
            badges.append("superseded")
        out.append(" · ".join(badges))
        temporal = node.get("temporal") if isinstance(node.get("temporal"), dict) else {}
        if temporal:
            out.append(
                f"Temporal: valid from {inline(temporal.get('valid_from') or '?')} until "
                f"{inline(temporal.get('valid_until') or '?')}, as of "
                f"{inline(temporal.get('source_date') or '?')} "
                f"({inline(temporal.get('temporal_confidence') or 'unknown')})"
            )
        if isinstance(node.get("resource"), str) and node["resource"]:
            out.append(f"Resource: {inline(node['resource'])}")
        out += ["", f"**Definition:** {inline(node.get('definition'))}", ""]
        if model.text(node.get("relevance")):
            out += [f"**Relevance:** {inline(node.get('relevance'))}", ""]
        statements = model.strings(node.get("statements"))
        if statements:
            out.append("**Statements:**")
            out += [f"- {inline(s)}" for s in statements]
            out.append("")
        for claim in claims_of.get(node["id"], []):
            out.append(
                f"- Claim `{inline(claim['id'])}` · confidence {inline(claim.get('confidence'))} · "
                f"origin {inline(claim.get('origin'))} · review "
                f"{inline(claim.get('review_status') or 'unreviewed')} · evidence "
                f"{', '.join(inline(e) for e in model.strings(claim.get('evidence'))) or 'none'}"
            )
        if outgoing.get(node["id"]) or incoming.get(node["id"]):
            out.append("**Relationships:**")
            for edge in outgoing.get(node["id"], []):
                out.append(f"- {PHRASES.get(edge['type'], inline(edge['type']))} {shown[edge['target']]}")
            for edge in incoming.get(node["id"], []):
                out.append(
                    f"- cited by {shown[edge['source']]} ({PHRASES.get(edge['type'], inline(edge['type']))})"
                )
            out.append("")
        if isinstance(node.get("note"), str):
            out += [f"> {inline(node['note'])}", ""]
        refs = model.strings(node.get("evidence"))
        if refs:
            out.append(f"**Evidence:** {', '.join(inline(e) for e in refs)}")
            out.append("")
        citations = (
            [c for c in node.get("citations", []) if isinstance(c, dict)]
            if isinstance(node.get("citations"), list)
            else []
        )
        if citations:
            out.append("**Citation records:**")
            out.append("")
            out.append(code(citations))
            out.append("")

    out += ["## Graph (Mermaid)", "", "```mermaid", "graph LR"]
    mermaid_ids = {n["id"]: f"n{i}" for i, n in enumerate(nodes)}
    for node in nodes:
        out.append(f'  {mermaid_ids[node["id"]]}["{mermaid_label(labels[node["id"]])}"]')
    identified = sorted((model.edge_identity(edge), i, edge) for i, edge in enumerate(edges))
    for _, _, edge in identified:
        arrow = "<-->" if edge["type"] == "tension" else "-->"
        out.append(
            f"  {mermaid_ids[edge['source']]} {arrow}|{mermaid_label(edge['type'])}| "
            f"{mermaid_ids[edge['target']]}"
        )
    out += ["```", ""]

    if edges:
        out += ["## Relationship provenance", ""]
        for identity, _, edge in identified:
            out.append(f"### `{inline(identity)}`")
            out.append("")
            out.append(f"- Endpoints: {shown[edge['source']]} → {shown[edge['target']]}")
            for key in ("type", "weight", "confidence", "origin", "label", "explanation"):
                if isinstance(edge.get(key), str | int | float):
                    out.append(f"- {key.capitalize()}: {inline(edge[key])}")
            refs = model.strings(edge.get("evidence"))
            if refs:
                out.append(f"- Evidence: {', '.join(inline(e) for e in refs)}")
            out.append("")

    facts = model.unique_by_id(model.items(graph, "facts"))
    if facts:
        out += [
            "## Facts",
            "",
            "| ID | Fact | Value | Context | Confidence | Source | Origin | Evidence |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for fact in facts:
            cells = [
                fact["id"],
                fact.get("statement"),
                fact.get("value"),
                fact.get("context"),
                fact.get("confidence"),
                fact.get("source"),
                fact.get("origin"),
                ", ".join(model.strings(fact.get("evidence"))),
            ]
            out.append("| " + " | ".join(inline(c) for c in cells) + " |")
        out.append("")
    questions = model.strings(graph.get("open_questions"))
    if questions:
        out += ["## Open questions", "", *(f"- {inline(q)}" for q in questions), ""]
    chunks = model.unique_by_id(model.items(graph, "chunks"))
    if chunks:
        out += ["## Chunks", ""]
        for chunk in chunks:
            out.append(f"### `{inline(chunk['id'])}`")
            out.append("")
            out.append(
                f"- Kind: {inline(chunk.get('kind') or 'source_claims')} · concepts "
                f"{', '.join(inline(c) for c in model.strings(chunk.get('concepts')))} · included in "
                f"default retrieval: {'no' if chunk.get('include_in_default_retrieval') is False else 'yes'}"
            )
            out += ["", code(model.text(chunk.get("text"))), ""]
    if evidence:
        out += ["## Evidence", ""]
        for item in evidence:
            # One record as the seed's view has it: its facts, its review status (unspecified when
            # the record states none), then the selector and the excerpt as JSON blocks.
            out += [
                f"### `{inline(item['id'])}`",
                "",
                f"- Source: {inline(item.get('source'))}",
                f"- Support: {inline(item.get('support'))}",
                f"- Attribution basis: {inline(item.get('attribution_basis'))}",
                f"- Review status: {inline(item.get('review_status') or 'unspecified')}",
                "",
            ]
            if isinstance(item.get("selector"), dict):
                out += ["**Selector:**", "", code(item["selector"]), ""]
            if isinstance(item.get("excerpt"), str):
                out += ["**Excerpt:**", "", code(item["excerpt"]), ""]
            if isinstance(item.get("excerpt_sha256"), str):
                out += [f"**Excerpt SHA-256:** {inline(item['excerpt_sha256'])}", ""]
            if isinstance(item.get("derivation"), dict):
                out += ["**Derivation:**", "", code(item["derivation"]), ""]
    assessments = model.unique_by_id(model.items(graph, "assessments"))
    if assessments:
        out += [
            "## Assessments",
            "",
            "| ID | Dimension | Scope | Value | Assessor | Method | Date |",
            "|---|---|---|---|---|---|---|",
        ]
        for a in assessments:
            cells = [
                a["id"],
                a.get("dimension"),
                a.get("scope"),
                a.get("value"),
                a.get("assessor"),
                a.get("method"),
                a.get("assessed_at"),
            ]
            out.append("| " + " | ".join(inline(c) for c in cells) + " |")
        out.append("")
    conflicts = model.unique_by_id(model.items(graph, "fact_conflicts"))
    if conflicts:
        out += ["## Fact conflicts", ""]
        for conflict in conflicts:
            out.append(
                f"- `{inline(conflict['id'])}` ({inline(conflict.get('relation'))}): "
                f"{' vs '.join(inline(f) for f in model.strings(conflict.get('facts')))} — "
                f"{inline(conflict.get('reason'))}"
            )
        out.append("")
    out += ["## Sources", ""]
    for i, source in enumerate(sources, 1):
        url = source.get("url")
        link = f" <{inline(url)}>" if isinstance(url, str) and url and urls.problem(url) is None else ""
        out.append(f"### [{i}] {inline(source.get('title') or source.get('file'))}{link}")
        out.append("")
        out.append(
            f"- ID: `{inline(source['id'])}` · file {inline(source.get('file'))} · type "
            f"{inline(source.get('type'))}"
        )
        out.append("")
    score = meta.get("conformance_score", meta.get("quality_score"))
    out += [
        "---",
        "",
        f"> Conformance score: {inline(score if score is not None else '?')}/100",
        "> Semantic accuracy: not evaluated (a passing graph is well formed, not true)",
        "",
    ]
    return "\n".join(out).encode("utf-8")
