"""The human report of ``doctor``: a line per check (status, name, finding), what to do under each
one that is not well, and a last line that says whether all is well."""

from __future__ import annotations

from episteme_core.doctor.report import FAIL, OK, WARN, DoctorReport

MARKS = {"ok": "ok", "warn": "WARN", "fail": "FAIL", "skip": "skip"}


def render_report(report: DoctorReport, *, verdict: bool = True) -> str:
    """The report; ``verdict`` adds the last line (a refusal says it in its own first line)."""
    width = max(len(check.name) for check in report.checks)
    lines = []
    for check in report.checks:
        lines.append(f"{MARKS[check.status]:<4}  {check.name:<{width}}  {check.summary}")
        if check.hint and check.status != OK:
            lines.append(f"{'':<4}  {'':<{width}}  -> {check.hint}")
    counts = report.counts
    if not verdict:
        pass
    elif counts[FAIL]:
        lines.append(f"{counts[FAIL]} check(s) failed, {counts[WARN]} warning(s): "
                     "fix what each FAIL line says")
    else:
        warned = f" ({counts[WARN]} warning(s))" if counts[WARN] else ""
        lines.append(f"all is well{warned}: {counts[OK]} check(s) passed, {counts['skip']} skipped")
    return "\n".join(lines)
