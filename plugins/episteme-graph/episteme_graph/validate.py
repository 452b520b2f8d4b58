"""``graph validate``: the schema and every rule, one finding per problem, a reproducible score."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from episteme_core.api import paused_cycle_gc
from episteme_graph import rules, schema
from episteme_graph.findings import ERROR, SEMANTIC_STATEMENT, WARNING, Collector, Finding, conformance_score
from episteme_graph.load import DEFAULT_MAX_BYTES, LoadedGraph, load

if TYPE_CHECKING:
    from episteme_core.api import Home


STORED_SCORE = "stored-score"


@attrs.frozen
class Validation:
    """The findings of one graph and the score they give."""

    name: str
    findings: tuple[Finding, ...]
    spec_version: str | None

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.level == ERROR]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.level == WARNING]

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def score(self) -> int:
        """The score of the findings before the stored-score check (which never counts itself)."""
        return conformance_score(*self._counts(exclude_stored=True))

    def _counts(self, *, exclude_stored: bool) -> tuple[int, int]:
        """(errors, warnings) as the score counts them. The stored-score check counts as one error
        however many stored fields it flags, and as none beside another error: a real error makes
        every stored score stale, and counting that again would charge one error two or three times."""
        chosen = [f for f in self.findings if f.rule != STORED_SCORE]
        errors = sum(f.level == ERROR for f in chosen)
        if not exclude_stored and not errors and any(f.rule == STORED_SCORE for f in self.findings):
            errors = 1
        return (errors, sum(f.level == WARNING for f in chosen))

    def report(self) -> dict[str, Any]:
        errors, warnings = self._counts(exclude_stored=False)
        return {
            "file": self.name,
            "ok": self.ok,
            "specVersion": self.spec_version,
            "errorCount": errors,
            "warningCount": warnings,
            "conformanceScore": conformance_score(errors, warnings),
            "findings": [f.to_json() for f in self.findings],
            "schemaChecked": True,
            "semanticAccuracyEvaluated": False,
            "statement": SEMANTIC_STATEMENT,
        }


def validate_value(
    value: Any,
    name: str = "graph",
    *,
    check_stored_scores: bool = True,
    engine: str = "compiled",
    keys: frozenset[str] | None = None,
) -> Validation:
    """Validate a parsed graph. Core findings win over schema findings at the same JSON path.
    ``keys``: every object key of the document, when the reader gathered them (``LoadedGraph.keys``)."""
    core = Collector()
    with paused_cycle_gc():
        rules.check(value, core, keys)
        schema_findings = schema.check(value, engine)
    core_error_paths = {f.path for f in core.items if f.level == ERROR}
    found = {f for f in schema_findings if f.path not in core_error_paths}
    found.update(core.items)
    findings = sorted(found)
    metadata = value.get("metadata") if isinstance(value, dict) else None
    version = metadata.get("distiller_spec_version") if isinstance(metadata, dict) else None
    result = Validation(name, tuple(findings), version if isinstance(version, str) else None)
    if check_stored_scores and isinstance(metadata, dict):
        extra = _stored_score_findings(metadata, result.score)
        if extra:
            result = attrs.evolve(result, findings=tuple(sorted({*findings, *extra})))
    return result


def _stored_score_findings(metadata: dict[str, Any], expected: int) -> list[Finding]:
    stored = {
        key: metadata[key]
        for key in ("conformance_score", "quality_score")
        if isinstance(metadata.get(key), int) and not isinstance(metadata.get(key), bool)
    }
    out: list[Finding] = []
    if len(stored) == 2 and stored["conformance_score"] != stored["quality_score"]:
        out.append(
            Finding(
                "$.metadata.quality_score",
                ERROR,
                STORED_SCORE,
                "conformance_score and quality_score must be equal (one is the other's legacy name)",
            )
        )
    for key, value in stored.items():
        if value != expected:
            out.append(
                Finding(
                    f"$.metadata.{key}",
                    ERROR,
                    STORED_SCORE,
                    f"{key} says {value} but the findings give {expected}",
                )
            )
    return out


def validate_loaded(graph: LoadedGraph) -> Validation:
    return validate_value(graph.value, graph.name, keys=graph.keys)


def validate(
    graph: str | Path | bytes,
    home: Home | None = None,
    *,
    name: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> dict[str, Any]:
    """Validate a graph (a path, ``-``, or its bytes) and return the report; ``home`` is unused and
    accepted so that every graph tool has one signature."""
    return validate_loaded(load(graph, name=name, max_bytes=max_bytes)).report()


def summary_line(report: dict[str, Any]) -> str:
    verdict = "PASS" if report["ok"] else "FAIL"
    return (
        f"{verdict}: {report['errorCount']} error(s), {report['warningCount']} warning(s), "
        f"conformance_score {report['conformanceScore']}/100"
    )


def render_text(report: dict[str, Any], limit: int | None = None) -> str:
    """The report for people: one line per finding, then the verdict and the statement."""
    lines = [f"{report['file']}"]
    shown = report["findings"] if limit is None else report["findings"][:limit]
    for finding in shown:
        mark = "error" if finding["level"] == ERROR else "warning"
        lines.append(f"  {mark} {finding['path']}: {finding['message']} [{finding['rule']}]")
    if limit is not None and len(report["findings"]) > limit:
        lines.append(f"  … {len(report['findings']) - limit} more (see --json)")
    lines.append(summary_line(report))
    lines.append(f"note: {report['statement']}")
    return "\n".join(lines)
