"""The crash matrix over a pipeline that works from the changed buckets: a home of 12 sources in
buckets (from 8 entries on, so every stage's small metadata stays in its head and capture, extract,
chunk and index each take their changed-buckets path), then one file changed and one added. Killed
at each write step, the home holds the old commit or the new one, verifies, and a re-run equals a
clean run."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from episteme_core.store.commits import BUCKETS_FROM_ENV
from episteme_core.testing.crashmatrix import CrashScenario, run_crash_matrix

from .scenarios import run

SOURCES = 12


def _files(folder: Path, count: int, changed: int | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    entries = []
    for number in range(count):
        note = "changed" if number == changed else "first"
        (folder / f"f{number}.txt").write_text(f"Evidence of file {number}, {note}.\n\nMore evidence.\n")
        entries.append({"sourceUrl": f"https://example.org/{number}", "localPath": f"f{number}.txt"})
    map_path = folder / "map.json"
    map_path.write_text(json.dumps(entries))
    time.sleep(0.25)  # the files' times settled: the stat cache records them
    return map_path


def test_a_changed_buckets_pipeline_killed_at_any_write_step_leaves_a_whole_home(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BUCKETS_FROM_ENV, "8")
    files = tmp_path / "files"

    def prepare(home: Path) -> None:
        run(home, "pipeline", "--map", str(_files(files, SOURCES)))
        _files(files, SOURCES + 1, changed=5)

    scenario = CrashScenario("pipeline (changed buckets)", prepare,
                             ["pipeline", "--map", str(files / "map.json")], env={BUCKETS_FROM_ENV: "8"})
    report = run_crash_matrix(scenario, tmp_path)
    assert {"before-bucket-write", "after-bucket-write", "after-bucket-prune-one",
            "before-index-write", "after-index-write"} <= set(report.trace), report.trace
    assert {case.point for case in report.cases} == set(report.trace)
