"""``doctor``: every check of a setup in one report, and the refusal that lists them when one fails."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from episteme_core.doctor.checks import (
    home_check,
    package_check,
    plugin_checks,
    python_check,
    reader_checks,
    shards_check,
    token_file_check,
)
from episteme_core.doctor.report import FAIL, STATUSES, DoctorReport
from episteme_core.errors import EpistemeError
from episteme_core.kernel.context import RunContext

HINT = "fix each failed check as its line says, then run episteme doctor again"


def run_doctor(ctx: RunContext, token_file: Path | None = None) -> DoctorReport:
    """Run every check; none writes to the home, none stops the others."""
    plugins = ctx.plugins.load_all()  # every plugin, as `episteme plugins` lists them
    checks = [python_check(), package_check(), *plugin_checks(plugins),
              *reader_checks(ctx.home, plugins), home_check(ctx.home),
              shards_check(ctx.home, plugins), token_file_check(token_file)]
    counts = {status: sum(1 for c in checks if c.status == status) for status in STATUSES}
    return DoctorReport(home=str(ctx.home.root), ok=counts[FAIL] == 0, checks=checks, counts=counts)


def check_setup(ctx: RunContext, token_file: Path | None = None) -> DoctorReport:
    """``run_doctor`` as ``episteme doctor`` reports it: ``INVALID_INPUT`` (exit 3) when a check fails,
    its message the whole report and ``details`` every check, as ``verify`` lists its problems."""
    from episteme_core.doctor.render import render_report
    from episteme_core.records.convert import unstructure

    report = run_doctor(ctx, token_file)
    if not report.ok:
        data: dict[str, Any] = unstructure(report)
        failed = report.counts[FAIL]
        raise EpistemeError("INVALID_INPUT", f"{failed} of {len(report.checks)} checks failed:\n"
                            + render_report(report, verdict=False), details=data, hint=HINT)
    return report
