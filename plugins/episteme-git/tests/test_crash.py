"""``ingest git`` killed with SIGKILL at each write step it takes (the kernel's crash matrix): the
home verifies, keeps the previous commit's answers, and a re-run equals a clean run."""

from __future__ import annotations

import os
from pathlib import Path

from episteme_core.testing import CrashScenario, run_crash_matrix

from .conftest import GitRun


def _commit(repo: Path, git: GitRun, name: str, message: bytes) -> None:
    (repo / name).write_text(name, encoding="utf-8")
    git("add", name)
    git("commit", "-q", "-F", "-", stdin=message)


def test_ingest_git_killed_at_any_write_step_leaves_a_whole_home(repo: tuple[Path, GitRun],
                                                                  tmp_path: Path) -> None:
    path, git = repo
    _commit(path, git, "a.txt", b"First evidence of the parser\n\nIt reads tokens.\n")

    def prepare(home: Path) -> None:
        from episteme_core.testing import run_cli

        done = run_cli(["--home", str(home), "ingest", "git", str(path)])
        assert done.exit_code == 0, done.stderr
        _commit(path, git, "b.txt", b"Second evidence: the printer\n")
        _commit(path, git, "c.txt", b"Third evidence\n\nWith a body.\n")

    env = {key: os.environ[key] for key in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM") if key in os.environ}
    scenario = CrashScenario("ingest git", prepare, ["ingest", "git", str(path)], env=env)
    every = os.environ.get("EPISTEME_CRASH_MATRIX") == "full"
    report = run_crash_matrix(scenario, tmp_path / "matrix", every=every)
    assert {"before-blob-write", "before-log-append", "before-index-write"} <= set(report.trace)
    assert {case.point for case in report.cases} == set(report.trace)
