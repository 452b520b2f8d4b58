"""``graph merge`` on files: check every path, merge, audit, then write the archive, the diffs and the
output, each atomically, the output last. Nothing is written until everything is planned and checked."""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path
from typing import Any

import attrs

from episteme_graph import jsontext
from episteme_graph.audit import audit_merge
from episteme_graph.load import LoadedGraph, load_object
from episteme_graph.merge import MERGEABLE_VERSIONS, MergeConflict, MergeReport, merge_graphs
from episteme_graph.policy import SIDES, At, MergePolicy, option_text
from episteme_graph.policy import Path as JsonPath
from episteme_graph.validate import Validation, validate_value

COUNTED = (
    "sources",
    "clusters",
    "nodes",
    "edges",
    "facts",
    "chunks",
    "evidence",
    "claims",
    "assessments",
    "fact_conflicts",
)
_ARCHIVE = re.compile(r"^(?P<name>.+)\.v(?P<seq>\d{4,})\.(?P<sha>[0-9a-f]{12})\.json$")


@attrs.frozen
class MergeRequest:
    base: Path
    incoming: Path
    out: Path
    diff_json: Path | None = None
    diff_md: Path | None = None
    fact_conflicts: str = "error"
    prefer: tuple[str, ...] = ()  # --prefer values: base, incoming, or PATH=base|incoming
    force: bool = False
    versions_dir: Path | None = None
    max_versions: int = 5
    max_bytes: int = 64 * 1024 * 1024


def _error(code: str, message: str, **details: Any) -> Exception:
    from episteme_core.api import EpistemeError

    return EpistemeError(code, message, details=details or None)


def _stem(path: Path) -> str:
    return path.name[: -len(".json")] if path.name.endswith(".json") and len(path.name) > 5 else path.name


def _same(a: Path, b: Path) -> bool:
    if a.absolute() == b.absolute():
        return True
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def plan_paths(request: MergeRequest) -> dict[str, Path]:
    """The output, diff and archive paths, refused when they would touch an input or a symlink."""
    out = request.out
    paths = {
        "out": out,
        "diff_json": request.diff_json or out.with_name(_stem(out) + ".diff.json"),
        "diff_md": request.diff_md or out.with_name(_stem(out) + ".diff.md"),
        "versions": request.versions_dir or out.parent / "versions",
    }
    if _same(out, request.incoming):
        raise _error("INVALID_USAGE", f"{out}: the output cannot be INCOMING", path=str(out))
    if _same(out, request.base) and not request.force:
        raise _error("INVALID_USAGE", f"{out}: merging into BASE in place needs --force", path=str(out))
    if out.exists() and not request.force:
        raise _error(
            "INVALID_USAGE",
            f"{out}: exists; --force replaces it (its bytes are archived first)",
            path=str(out),
        )
    files = [paths["out"], paths["diff_json"], paths["diff_md"]]
    if len({p.absolute() for p in files}) != 3:
        raise _error("INVALID_USAGE", "the output and the two diffs must be three different files")
    for path in files[1:]:
        if _same(path, request.base) or _same(path, request.incoming):
            raise _error("INVALID_USAGE", f"{path}: a diff cannot overwrite an input", path=str(path))
    for path in [*files, paths["versions"]]:
        if path.is_symlink():
            raise _error("INVALID_USAGE", f"{path}: is a symlink; give the real path", path=str(path))
        if path in files and path.exists() and not path.is_file():
            raise _error("INVALID_USAGE", f"{path}: not a regular file", path=str(path))
    if paths["versions"].exists() and not paths["versions"].is_dir():
        raise _error("INVALID_USAGE", f"{paths['versions']}: not a folder", path=str(paths["versions"]))
    return paths


def merge_policy(fact_conflicts: str, prefer: tuple[str, ...] | list[str]) -> MergePolicy:
    """The policy of the command's options; a ``--prefer`` that cannot be read is ``INVALID_USAGE``."""
    try:
        return MergePolicy.from_options(fact_conflicts, tuple(prefer))
    except ValueError as exc:
        raise _error(
            "INVALID_USAGE",
            str(exc),
            hint="--prefer base|incoming, or --prefer PATH=base|incoming "
            "(e.g. --prefer metadata.title=incoming)",
        ) from None


def _load_pair(request: MergeRequest) -> tuple[LoadedGraph, LoadedGraph]:
    """Both inputs, read once each; the same bytes are parsed once."""
    from episteme_graph.load import read_bytes

    base_bytes = read_bytes(request.base, request.max_bytes)
    incoming_bytes = read_bytes(request.incoming, request.max_bytes)
    base = load_object(base_bytes, name=str(request.base), max_bytes=request.max_bytes)
    if incoming_bytes == base_bytes:
        return base, attrs.evolve(base, name=str(request.incoming))
    return base, load_object(incoming_bytes, name=str(request.incoming), max_bytes=request.max_bytes)


def refusal(conflict: MergeConflict, policy: MergePolicy, base: dict[str, Any]) -> Exception:
    """A refused merge, saying which policy would settle it (in the hint and in ``error.details``)."""
    from episteme_core.api import EpistemeError

    steps = conflict.steps
    options: list[str] = []
    if conflict.resolvable:
        if steps and steps[0] == "facts" and policy.fact_conflicts == "error":
            options.append("--fact-conflicts record")
        options += [f"--prefer {option_text(steps)}={side}" for side in SIDES]
    details: dict[str, Any] = {
        "path": conflict.path,
        "base": conflict.base,
        "incoming": conflict.incoming,
        "resolvable": conflict.resolvable,
        "resolveWith": options,
        "record": describe_path(steps, base),
    }
    if options:
        hint = "resolve with " + " or ".join(options)
        if not (steps and steps[0] == "facts"):
            hint += " (or --prefer base|incoming for every such conflict)"
        if len(steps) == 3 and steps[0] == "nodes" and steps[2] == "cluster":
            hint += "; a concept has one cluster (the spec's node.cluster), so one of the two is kept"
    else:
        hint = "no policy settles an identity conflict: give the node the same resource, or another id"
    return EpistemeError("INVALID_INPUT", f"merge refused: {conflict}; {hint}", details=details, hint=hint)


def describe_path(steps: JsonPath, graph: dict[str, Any]) -> dict[str, Any] | None:
    """The record a path points into, named for people: collection, id and label (a concept's
    label, an edge's endpoints' labels, a fact's statement)."""
    if len(steps) < 2 or not isinstance(steps[1], At):
        return None
    collection, ident = str(steps[0]), steps[1].ident
    labels = {n.get("id"): n.get("label") for n in graph.get("nodes", []) if isinstance(n, dict)}
    if collection == "edges":
        source, edge_type, target = (ident.split("__") + ["", "", ""])[:3]
        return {
            "collection": collection,
            "id": ident,
            "label": f"{labels.get(source, source)} {edge_type} {labels.get(target, target)}",
        }
    found = next((i for i in graph.get(collection, []) if isinstance(i, dict) and i.get("id") == ident), None)
    label = None
    if isinstance(found, dict):
        label = found.get("label") or found.get("statement") or found.get("title") or found.get("file")
    return {"collection": collection, "id": ident, "label": label if isinstance(label, str) else None}


def _checked(graph: LoadedGraph, role: str) -> Validation:
    validation = validate_value(graph.value, graph.name, keys=graph.keys)
    if validation.errors:
        first = validation.errors[0]
        raise _error(
            "INVALID_INPUT",
            f"{role} {graph.name} has {len(validation.errors)} validation error(s), "
            f"the first at {first.path}: {first.message}",
            role=role,
            file=graph.name,
            findings=[f.to_json() for f in validation.errors[:100]],
        )
    if validation.spec_version not in MERGEABLE_VERSIONS:
        raise _error(
            "INVALID_INPUT",
            f"{role} {graph.name} is Spec {validation.spec_version}; merge reads Spec 1.0 and 1.1",
            role=role,
            file=graph.name,
        )
    return validation


def graph_bytes(graph: dict[str, Any]) -> bytes:
    """A graph file as people read it: two-space indent, key order kept, UTF-8, one final newline."""
    return (jsontext.indented(graph) + "\n").encode("utf-8")


def _counts(graph: dict[str, Any]) -> dict[str, int]:
    meta = graph.get("metadata", {})
    out = {"sources": len(meta.get("sources", []))}
    for key in COUNTED[1:]:
        out[key] = len(graph.get(key, [])) if isinstance(graph.get(key), list) else 0
    return out


def diff_document(
    base: LoadedGraph,
    incoming: LoadedGraph,
    report: MergeReport,
    output: bytes,
    policy: str,
    validations: dict[str, Validation],
) -> dict[str, Any]:
    """The machine delta: hashes, counts, what was added and enriched, aliases, conflicts; no time,
    no absolute path, so the same inputs give the same bytes."""
    from episteme_core.api import sha256_hex

    return {
        "format": "episteme-graph-merge-diff",
        "version": "1",
        "networkAccess": False,
        "semanticAccuracyEvaluated": False,
        "factConflictPolicy": policy,
        "hashes": {"base": base.sha256, "incoming": incoming.sha256, "output": sha256_hex(output)},
        "specVersion": report.graph["metadata"]["distiller_spec_version"],
        "counts": {
            "base": _counts(base.value),
            "incoming": _counts(incoming.value),
            "output": _counts(report.graph),
        },
        "added": {k: sorted(v) for k, v in sorted(report.added.items())},
        "enriched": {k: sorted(set(v)) for k, v in sorted(report.enriched.items())},
        "aliases": {
            "nodes": dict(sorted(report.node_aliases.items())),
            "facts": dict(sorted(report.fact_aliases.items())),
            "resourceEnrichments": dict(sorted(report.resource_enrichments.items())),
            "sourceNumbers": {str(k): v for k, v in sorted(report.source_renumbering.items())},
        },
        "recordedFactConflicts": sorted(report.recorded_conflicts),
        "policy": report.policy.describe(),
        "resolved": [
            {**r.to_json(), "record": describe_path(r.path, report.graph)} for r in report.resolutions
        ],
        "factConflicts": _fact_conflicts(report),
        "validation": {
            role: {
                "ok": v.ok,
                "errors": len(v.errors),
                "warnings": len(v.warnings),
                "conformanceScore": v.report()["conformanceScore"],
            }
            for role, v in validations.items()
        },
    }


def _fact_conflicts(report: MergeReport) -> list[dict[str, Any]]:
    """Each fact conflict the merge recorded, with its two facts' statements and values."""
    facts = {f.get("id"): f for f in report.graph.get("facts", []) if isinstance(f, dict)}
    recorded = set(report.recorded_conflicts)
    out = []
    for conflict in report.graph.get("fact_conflicts", []):
        if not isinstance(conflict, dict) or conflict.get("id") not in recorded:
            continue
        out.append(
            {
                "id": conflict["id"],
                "relation": conflict.get("relation"),
                "facts": [
                    {
                        "id": fid,
                        "statement": facts.get(fid, {}).get("statement"),
                        "value": facts.get(fid, {}).get("value"),
                        "concept": facts.get(fid, {}).get("concept"),
                    }
                    for fid in conflict.get("facts", [])
                ],
            }
        )
    return sorted(out, key=lambda c: str(c["id"]))


def _named(record: dict[str, Any] | None) -> str:
    """``collection `id` (label)``: a record as people find it."""
    if not record:
        return ""
    label = f" ({md_inline(record['label'])})" if record.get("label") else ""
    return f"{record['collection']} {md_code(record['id'])}{label}"


def md_inline(value: Any) -> str:
    from episteme_graph.export.markdown import inline

    return inline(value)


def md_code(value: Any) -> str:
    from episteme_graph.export.markdown import code_span

    return code_span(value)


def md_json(value: Any) -> str:
    """A value as canonical JSON in a code span."""
    from episteme_core.api import canonical_text

    return md_code(canonical_text(value))


def conflict_lines(items: list[dict[str, Any]], base: str = "Base", incoming: str = "Incoming") -> list[str]:
    """One block per conflict: its path, the record it is in (id and label), both values."""
    lines: list[str] = []
    for item in items:
        lines.append(
            f"- {md_code(item['path'])}" + (f" in {_named(item.get('record'))}" if item.get("record") else "")
        )
        lines.append(f"  - {base}: {md_json(item['base'])}")
        lines.append(f"  - {incoming}: {md_json(item['incoming'])}")
        if "kept" in item:
            lines.append(f"  - Kept: {item['kept']} ({md_code(item['policy'])})")
    return lines


def diff_markdown(diff: dict[str, Any]) -> bytes:
    from episteme_core.api import canonical_text

    lines = [
        "# Graph merge delta",
        "",
        "Derived from the machine delta below. Semantic accuracy was not evaluated; nothing was fetched.",
        "",
        "## Content hashes",
        "",
        f"- Base: `{diff['hashes']['base']}`",
        f"- Incoming: `{diff['hashes']['incoming']}`",
        f"- Output: `{diff['hashes']['output']}`",
        "",
        "## Counts",
        "",
        "| Collection | Base | Incoming | Output |",
        "|---|---:|---:|---:|",
    ]
    for key in COUNTED:
        lines.append(
            f"| {key} | {diff['counts']['base'][key]} | {diff['counts']['incoming'][key]} | "
            f"{diff['counts']['output'][key]} |"
        )
    lines += ["", "## Changes", ""]
    for title, key in (("Added", "added"), ("Enriched", "enriched")):
        lines += [f"### {title}", ""]
        if diff[key]:
            lines += [
                f"- {name}: {len(ids)} — `{canonical_text(ids[:20])}`" + (" …" if len(ids) > 20 else "")
                for name, ids in diff[key].items()
            ]
        else:
            lines.append("None.")
        lines.append("")
    lines += ["### Aliases", "", "    " + canonical_text(diff["aliases"]), ""]
    lines += ["### Conflicts settled by the policy", ""]
    lines += conflict_lines(diff["resolved"]) or ["None."]
    lines += ["", "### Recorded fact conflicts", ""]
    for conflict in diff["factConflicts"]:
        lines.append(f"- {md_code(conflict['id'])} ({md_inline(conflict['relation'])}):")
        for fact in conflict["facts"]:
            statement, value = md_inline(fact["statement"]), md_json(fact["value"])
            lines.append(f"  - fact {md_code(fact['id'])}: {statement} = {value}")
    if not diff["factConflicts"]:
        lines.append("None.")
    lines += ["", "## Validation", ""]
    for role, value in diff["validation"].items():
        lines.append(
            f"- {role}: {'valid' if value['ok'] else 'INVALID'}, {value['errors']} error(s), "
            f"{value['warnings']} warning(s), conformance {value['conformanceScore']}/100"
        )
    lines += ["", "## Canonical machine delta", "", "    " + canonical_text(diff), ""]
    return "\n".join(lines).encode("utf-8")


# -- archive: create-once, bounded ------------------------------------------------------------------


def _archives(folder: Path) -> list[tuple[int, Path]]:
    if not folder.is_dir():
        return []
    found = []
    for path in folder.iterdir():
        match = _ARCHIVE.match(path.name)
        if match and path.is_file() and not path.is_symlink():
            found.append((int(match.group("seq")), path))
    return sorted(found)


def _create_once(target: Path, data: bytes) -> None:
    """Write ``data`` to a temp file, make it durable, and link it to ``target``: an existing name is
    never replaced, and a reader never sees a partial archive."""
    from episteme_core.api import crashpoint, fsync_dir, temp_path_for

    target.parent.mkdir(parents=True, exist_ok=True)
    temp = temp_path_for(target)
    try:
        with open(temp, "xb") as handle:
            handle.write(data)
            handle.flush()
            crashpoint()
            os.fsync(handle.fileno())
        crashpoint()
        os.link(temp, target)
        crashpoint()
        fsync_dir(target.parent)
    except FileExistsError as exc:
        raise _error(
            "PROCESSING_FAILED", f"{target}: archive exists; never replaced", path=str(target)
        ) from exc
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()


def archive_prior(out: Path, versions: Path, max_versions: int) -> str | None:
    """Archive the output's current bytes (if any) as ``<name>.vNNNN.<12 hex>.json``; keep at most
    ``max_versions`` archives active, moving older ones to ``retired/`` (never deleting them)."""
    from episteme_core.api import crashpoint, fsync_dir, sha256_hex

    if not out.exists():
        return None
    prior = out.read_bytes()
    digest = sha256_hex(prior)
    active = _archives(versions)
    if active and active[-1][1].name.endswith(f".{digest[:12]}.json") and active[-1][1].read_bytes() == prior:
        return str(active[-1][1])  # these bytes are already the latest archive
    retired_dir = versions / "retired"
    seq = max([s for s, _ in active + _archives(retired_dir)], default=0) + 1
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", _stem(out)) or "graph"
    target = versions / f"{safe}.v{seq:04d}.{digest[:12]}.json"
    _create_once(target, prior)
    active = _archives(versions)
    while len(active) > max_versions:
        _, oldest = active.pop(0)
        retired_dir.mkdir(parents=True, exist_ok=True)
        try:
            os.link(oldest, retired_dir / oldest.name)
        except FileExistsError:
            pass  # retired before a crash cut the move short; the copy there is the same file
        crashpoint()
        fsync_dir(retired_dir)
        oldest.unlink()
        fsync_dir(versions)
    return str(target)


def merge_files(request: MergeRequest) -> dict[str, Any]:
    """Merge two graph files as ``request`` says and return what was written. The cycle collector
    is paused meanwhile: a merge builds millions of containers that form no cycle, and collecting
    on the way cost a third of the merge and the audit (100,000 concepts)."""
    from episteme_core.api import paused_cycle_gc

    with paused_cycle_gc():
        return _merge_files(request)


def _merge_files(request: MergeRequest) -> dict[str, Any]:
    from episteme_core.api import atomic_write, canonical_bytes

    policy = merge_policy(request.fact_conflicts, request.prefer)
    paths = plan_paths(request)
    base, incoming = _load_pair(request)
    validations = {"base": _checked(base, "BASE")}
    # The same bytes give the same findings: a graph merged into a copy of itself is checked once.
    validations["incoming"] = (
        validations["base"] if incoming.data == base.data else _checked(incoming, "INCOMING")
    )
    try:
        report = merge_graphs(base.value, incoming.value, policy)
    except MergeConflict as conflict:
        raise refusal(conflict, policy, base.value) from conflict
    problems = audit_merge(base.value, incoming.value, report)
    if problems:
        raise _error(
            "PROCESSING_FAILED",
            f"the merge audit found {len(problems)} lost payload(s); nothing was written",
            problems=problems[:100],
        )
    merged_validation = report.validation or validate_value(report.graph, "merged")
    validations["output"] = merged_validation
    if merged_validation.errors:
        first = merged_validation.errors[0]
        raise _error(
            "INVALID_INPUT",
            f"the merged graph would not validate ({first.path}: {first.message}); nothing was written",
            findings=[f.to_json() for f in merged_validation.errors[:100]],
        )
    output = graph_bytes(report.graph)
    diff = diff_document(base, incoming, report, output, request.fact_conflicts, validations)
    archived = archive_prior(paths["out"], paths["versions"], request.max_versions)
    atomic_write(paths["diff_json"], canonical_bytes(diff))
    atomic_write(paths["diff_md"], diff_markdown(diff))
    atomic_write(paths["out"], output)  # last: the output is the commit
    return {
        "out": str(paths["out"]),
        "diffJson": str(paths["diff_json"]),
        "diffMd": str(paths["diff_md"]),
        "archived": archived,
        "outputSha256": diff["hashes"]["output"],
        "counts": diff["counts"]["output"],
        "added": diff["added"],
        "enriched": diff["enriched"],
        "aliases": diff["aliases"],
        "recordedFactConflicts": diff["recordedFactConflicts"],
        "conformanceScore": merged_validation.report()["conformanceScore"],
        "semanticAccuracyEvaluated": False,
    }


def render_text(data: dict[str, Any]) -> str:
    added = sum(len(v) for v in data["added"].values())
    enriched = sum(len(v) for v in data["enriched"].values())
    lines = [
        f"Merged into {data['out']}: {added} added, {enriched} enriched, "
        f"{len(data['recordedFactConflicts'])} fact conflict(s) recorded, "
        f"conformance_score {data['conformanceScore']}/100",
        f"Diffs: {data['diffJson']}, {data['diffMd']}",
    ]
    if data["archived"]:
        lines.append(f"Prior bytes archived: {data['archived']}")
    return "\n".join(lines)
