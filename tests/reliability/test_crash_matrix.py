"""The crash matrix: every writing command killed with SIGKILL at each write step it takes (the
first and last time it takes each; every time with EPISTEME_CRASH_MATRIX=full), then ``verify``,
the previous commit's answers byte for byte, and a re-run equal to a clean run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from episteme_core.testing.crashmatrix import run_crash_matrix

from .scenarios import scenarios, snapshot, web_server

EVERY = os.environ.get("EPISTEME_CRASH_MATRIX") == "full"
NAMES = ["manual-ingest", "extract", "chunk", "index", "pipeline", "ingest books", "ingest claude",
         "ingest intent", "ingest warc", "forget source", "forget paragraph"]
# every command commits through these steps; a command that never reached one would be untested there
EXPECTED = {"temp-written", "before-object-write", "after-object-write", "before-index-write",
            "after-index-write"}


@pytest.mark.parametrize("name", NAMES)
def test_a_command_killed_at_any_write_step_leaves_a_whole_home(tmp_path: Path, name: str) -> None:
    scenario = scenarios(tmp_path)[name]()
    report = run_crash_matrix(scenario, tmp_path, every=EVERY)
    assert EXPECTED <= set(report.trace), report.trace
    assert {case.point for case in report.cases} == set(report.trace)


def test_snapshot_killed_at_any_write_step_leaves_a_whole_home(tmp_path: Path) -> None:
    from episteme_core.testing.crashmatrix import CrashScenario

    manifest = tmp_path / "manifest.json"
    with web_server() as server:
        scenario = CrashScenario("snapshot", snapshot(server, manifest),
                                 ["snapshot", "--manifest", str(manifest), "--allow-localhost"])
        report = run_crash_matrix(scenario, tmp_path, every=EVERY)
    assert {"before-blob-write", "after-blob-write", "before-log-append"} <= set(report.trace)
    assert {case.point for case in report.cases} == set(report.trace)


@pytest.mark.parametrize("previous", ["buckets", "one file"])
def test_a_pipeline_over_buckets_killed_at_any_write_step_leaves_a_whole_home(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, previous: str) -> None:
    """Every stage committed as a head and buckets (from one entry on): over a previous commit in
    buckets too, or in the one-file layout of a home written before buckets (its first commit in
    buckets is then the kill's subject)."""
    import attrs

    from episteme_core.store.commits import BUCKETS_FROM_ENV

    if previous == "buckets":
        monkeypatch.setenv(BUCKETS_FROM_ENV, "1")  # the commands that prepare the home too
    scenario = attrs.evolve(scenarios(tmp_path)["pipeline"](), env={BUCKETS_FROM_ENV: "1"})
    report = run_crash_matrix(scenario, tmp_path, every=EVERY)
    steps = {"before-bucket-write", "after-bucket-write"} | (
        {"after-bucket-prune-one"} if previous == "buckets" else set())  # one file: no bucket to prune
    assert steps <= set(report.trace), report.trace
    assert {case.point for case in report.cases} == set(report.trace)


def test_gc_killed_at_any_step_leaves_a_whole_home(tmp_path: Path) -> None:
    """gc only deletes what nothing names, one unlink at a time: killed anywhere, every commit is
    whole, and what it had not removed yet goes on the re-run."""
    scenario = scenarios(tmp_path)["gc"]()
    report = run_crash_matrix(scenario, tmp_path, every=EVERY)
    steps = {"after-blob-delete-one", "after-prune-one", "after-bucket-prune-one"}
    assert steps <= set(report.trace), report.trace
    assert {case.point for case in report.cases} == set(report.trace)


def test_a_forget_over_buckets_killed_at_any_write_step_leaves_a_whole_home(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every stage in buckets (from one entry on): a kill between a commit and its prune leaves old
    buckets naming the forgotten source; the re-run (finishing the forget, then its gc) removes
    them, and the forgotten text is in no file."""
    import attrs

    from episteme_core.store.commits import BUCKETS_FROM_ENV

    monkeypatch.setenv(BUCKETS_FROM_ENV, "1")
    scenario = attrs.evolve(scenarios(tmp_path)["forget source"](), env={BUCKETS_FROM_ENV: "1"})
    report = run_crash_matrix(scenario, tmp_path, every=EVERY)
    assert {"after-bucket-write", "after-bucket-prune-one", "after-blob-delete-one"} <= set(report.trace)
    assert {case.point for case in report.cases} == set(report.trace)
