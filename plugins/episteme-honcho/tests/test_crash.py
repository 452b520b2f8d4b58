"""``ingest honcho`` killed with SIGKILL at each write step it takes (the kernel's crash matrix),
against the real loopback Honcho server: the home verifies, keeps the previous commit's answers,
and a re-run equals a clean run."""

from __future__ import annotations

import os
from pathlib import Path

from episteme_core.testing import CrashScenario, run_crash_matrix

from .conftest import SECRET, FakeHoncho, message


def test_ingest_honcho_killed_at_any_write_step_leaves_a_whole_home(honcho: tuple[FakeHoncho, str],
                                                                     tmp_path: Path) -> None:
    fake, url = honcho

    def prepare(home: Path) -> None:
        from episteme_core.testing import run_cli

        done = run_cli(["--home", str(home), "ingest", "honcho"],
                       env={"HONCHO_BASE_URL": url, "HONCHO_API_KEY": SECRET})
        assert done.exit_code == 0, done.stderr
        fake.data["acme"]["support-2"].append(message(2, "support-2", "bob", "New evidence arrived"))
        fake.data["lab"]["later"] = [message(1, "later", "carol", "Later evidence")]

    scenario = CrashScenario("ingest honcho", prepare, ["ingest", "honcho"],
                             answer=("query", "--term", "invoices", "--json"),
                             env={"HONCHO_BASE_URL": url, "HONCHO_API_KEY": SECRET})
    report = run_crash_matrix(scenario, tmp_path / "matrix",
                              every=os.environ.get("EPISTEME_CRASH_MATRIX") == "full")
    assert {"before-blob-write", "before-log-append", "before-index-write"} <= set(report.trace)
    assert {case.point for case in report.cases} == set(report.trace)
