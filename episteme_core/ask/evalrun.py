"""``eval``: run a questions file through ``ask``, score each answer, save ``evals/NAME.json``.

A questions file is JSON Lines: ``{"question", "filter"?, "since"?, "expected": ["<record>#<n>", ...]}``
(``filter`` a comma list or a list of source names). Blank lines and lines starting with ``//`` are
skipped. The report (``schema/eval-report.schema.json``) holds every question's metrics and the means.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import attrs

from episteme_core.ask import metrics as evaluation
from episteme_core.errors import EpistemeError

LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
REF = re.compile(r"^[^\s#][^#]*#[1-9][0-9]*$")
QUESTION_KEYS = {"question", "filter", "since", "expected", "id"}
MAX_QUESTIONS = 10_000


@attrs.frozen
class EvalQuestion:
    line: int
    question: str
    filter: tuple[str, ...] | None
    since: str | None
    expected: tuple[str, ...]


def check_label(label: str, option: str = "--label") -> str:
    if not LABEL.match(label):
        raise EpistemeError(
            "INVALID_USAGE", f"{option} {label!r} must be 1-64 letters, digits, '.', '_' or '-'",
            details={"label": label},
        )
    return label


def load_questions(path: str) -> tuple[list[EvalQuestion], str]:
    """The questions of ``path`` (or stdin) and the sha256 of its bytes; INVALID_INPUT names the line."""
    from episteme_core.ask.run import check_question, parse_filter, parse_since
    from episteme_core.records.canonical import loads_strict, sha256_hex
    from episteme_core.records.inputs import read_input

    raw = read_input(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EpistemeError("INVALID_INPUT", f"{path}: invalid UTF-8 at byte {exc.start}") from exc
    questions: list[EvalQuestion] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("//"):
            continue
        where = f"{path} line {number}"
        value = loads_strict(line, source=where)
        if not isinstance(value, dict):
            raise EpistemeError("INVALID_INPUT", f"{where}: must be a JSON object")
        unknown = sorted(set(value) - QUESTION_KEYS)
        if unknown:
            raise EpistemeError("INVALID_INPUT", f"{where}: unknown key(s) {', '.join(unknown)}")
        try:
            if not isinstance(value.get("question"), str):
                raise EpistemeError("INVALID_USAGE", "question must be a string")
            question = check_question(value["question"])
            filt = value.get("filter")
            if isinstance(filt, list) and all(isinstance(f, str) for f in filt):
                filt = ",".join(filt)
            if filt is not None and not isinstance(filt, str):
                raise EpistemeError("INVALID_USAGE", "filter must be a string or a list of strings")
            since = value.get("since")
            if since is not None and not isinstance(since, str):
                raise EpistemeError("INVALID_USAGE", "since must be a string")
            expected = value.get("expected")
            refs_ok = isinstance(expected, list) and all(
                isinstance(e, str) and REF.match(e) for e in expected
            )
            if not refs_ok:
                raise EpistemeError("INVALID_USAGE", 'expected must be a list of "<record id>#<n>"')
            questions.append(EvalQuestion(
                line=number, question=question,
                filter=parse_filter(filt) if filt is not None else None,
                since=parse_since(since) if since is not None else None,
                expected=tuple(str(e) for e in expected or ()),
            ))
        except EpistemeError as exc:
            raise EpistemeError("INVALID_INPUT", f"{where}: {exc.message}", details={"line": number}) from exc
        if len(questions) > MAX_QUESTIONS:
            raise EpistemeError("LIMIT_EXCEEDED", f"{path}: more than {MAX_QUESTIONS} questions")
    if not questions:
        raise EpistemeError("INVALID_INPUT", f"{path}: no questions")
    return questions, sha256_hex(raw)


def run_eval(home: Any, path: str, label: str, *, plugins: Any, warn: Any, reader: str | None = None,
             budget: int | None = None, candidates: int | None = None,
             compare: str | None = None, indexer: str | None = None) -> dict[str, Any]:
    """Ask every question, score it, save ``evals/<label>.json``; with ``compare``, add the table."""
    from episteme_core import __version__
    from episteme_core.ask import telemetry
    from episteme_core.ask.run import AskOptions, ask, open_home_shards
    from episteme_core.kernel.defaults import DEFAULT_BUDGET, DEFAULT_CANDIDATES
    from episteme_core.records.canonical import canonical_bytes
    from episteme_core.store.atomic import atomic_write

    check_label(label)
    other = load_report(home, check_label(compare, "--compare")) if compare else None
    questions, digest = load_questions(path)
    shards = open_home_shards(home, plugins, indexer, warn)
    rows: list[dict[str, Any]] = []
    total_started = time.monotonic()
    for q in questions:
        notes: list[dict[str, Any]] = []

        def note(code: str, message: str, _notes: list[dict[str, Any]] = notes, **extra: Any) -> None:
            _notes.append({"code": code, "message": message, **extra})

        options = AskOptions(
            question=q.question, filter=q.filter, since=q.since, reader=reader,
            budget=budget or DEFAULT_BUDGET, candidates=candidates or DEFAULT_CANDIDATES,
        )
        started = time.monotonic()
        try:
            result = ask(home, options, plugins=plugins, warn=note, shards=shards, command="eval",
                         label=label)
        except EpistemeError as exc:
            raise EpistemeError(exc.code, f"{path} line {q.line}: {exc.message}", details=exc.details,
                                hint=exc.hint) from exc
        ms = int((time.monotonic() - started) * 1000)
        for n in notes:
            warn(n["code"], f"line {q.line}: {n['message']}")
        rows.append({
            "line": q.line,
            "question": q.question,
            "filter": list(q.filter) if q.filter is not None else None,
            "since": q.since,
            "expected": list(q.expected),
            "answered": result.ranked,
            **evaluation.score(result.ranked, q.expected),
            "chars": result.chars,
            "paragraphs": len(result.paragraphs),
            "durationMs": ms,
            "fallbacks": sum(1 for s in result.shards if s.fallback),
            "warnings": len(notes),
        })
    overall = {m: evaluation.mean(rows, m) for m in evaluation.METRICS}
    overall["chars"] = round(sum(r["chars"] for r in rows) / len(rows), 1)
    overall["paragraphs"] = round(sum(r["paragraphs"] for r in rows) / len(rows), 2)
    overall["questions"] = len(rows)
    overall["durationMs"] = int(sum(r["durationMs"] for r in rows) / len(rows))
    overall["totalMs"] = int((time.monotonic() - total_started) * 1000)
    report = {
        "schemaVersion": "1",
        "label": label,
        "createdAt": telemetry.now(),
        "epistemeVersion": __version__,
        "questionsFile": Path(path).name if path != "-" else "-",
        "questionsSha256": digest,
        "reader": reader,
        "budget": budget or DEFAULT_BUDGET,
        "questions": rows,
        "overall": overall,
    }
    target = Path(home.evals_dir) / f"{label}.json"
    home.ensure_writable()
    atomic_write(target, canonical_bytes(report))
    result_data: dict[str, Any] = {"report": report, "path": str(target)}
    if other is not None:
        result_data["compare"] = compare_reports(report, other)
    return result_data


def load_report(home: Any, label: str) -> dict[str, Any]:
    from episteme_core.records.canonical import loads_strict
    from episteme_core.records.inputs import read_input

    path = Path(home.evals_dir) / f"{label}.json"
    if not path.is_file():
        folder = Path(home.evals_dir)
        known = sorted(p.stem for p in folder.glob("*.json")) if folder.is_dir() else []
        raise EpistemeError(
            "INVALID_INPUT", f"no eval labelled {label!r} ({path})",
            details={"label": label, "known": known},
            hint=f"known labels: {', '.join(known) or 'none'}",
        )
    value = loads_strict(read_input(str(path)), source=str(path))
    if not isinstance(value, dict) or not isinstance(value.get("overall"), dict):
        raise EpistemeError("INVALID_INPUT", f"{path}: not an eval report")
    return value


def compare_reports(this: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """Overall metrics side by side, and per question (matched by text) which label did better."""
    rows = []
    for metric in (*evaluation.METRICS, "chars", "paragraphs", "durationMs"):
        a = this["overall"].get(metric)
        b = other["overall"].get(metric)
        delta = round(a - b, 6) if isinstance(a, int | float) and isinstance(b, int | float) else None
        rows.append({"metric": metric, "this": a, "other": b, "delta": delta})
    theirs = {q["question"]: q for q in other.get("questions", []) if isinstance(q, dict) and "question" in q}
    better = worse = same = 0
    for q in this["questions"]:
        match = theirs.get(q["question"])
        if match is None or not isinstance(match.get("ndcg10"), int | float):
            continue
        if q["ndcg10"] > match["ndcg10"]:
            better += 1
        elif q["ndcg10"] < match["ndcg10"]:
            worse += 1
        else:
            same += 1
    return {"label": this["label"], "other": other.get("label"), "metrics": rows,
            "questions": {"better": better, "worse": worse, "same": same}}


def render_compare(table: dict[str, Any]) -> str:
    lines = [f"{'metric':<12} {table['label']:>12} {str(table['other']):>12} {'delta':>10}"]
    for row in table["metrics"]:
        def fmt(v: Any) -> str:
            return "-" if v is None else (f"{v:.4f}" if isinstance(v, float) else str(v))
        lines.append(
            f"{row['metric']:<12} {fmt(row['this']):>12} {fmt(row['other']):>12} {fmt(row['delta']):>10}"
        )
    q = table["questions"]
    lines.append(f"per question (nDCG@10): {q['better']} better, {q['worse']} worse, {q['same']} same")
    return "\n".join(lines)
