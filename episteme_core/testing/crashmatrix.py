"""The crash matrix: kill a real writing command with SIGKILL at each of its write steps, then prove
the home is whole (test tooling, public through ``episteme_core.testing`` for plugin suites too).

For one scenario (a home holding a previous commit, and a command that changes it):

1. a clean run on a copy of the home, traced (``EPISTEME_FAULT_TRACE``), says which fault points
   (``store.faults``) the command passes and how often, and what the home holds afterwards;
2. for each point and chosen occurrence, a fresh copy is written by the command in a new process
   with ``EPISTEME_FAULT=<point>:<n>``, which kills itself there;
3. then: ``verify`` finds no problem; every stage's commit is the previous one or the clean run's,
   whole; the reader's answer (``query``, by default) is byte-identical to the previous commit's or
   the clean run's (a STALE_INDEX refusal also passes when the kill left the home between two
   commits: lines in the log, or a stage, newer than the shards, which readers then refuse rather
   than serve stale evidence); and a re-run leaves the home as the clean run did (log lines and the
   log position the shards record aside: a killed run's log lines stay, the log is append-only).

A command that rewrites the log (``forget``, whose one rewrite redacts and appends a tombstone)
says so (``rewrites_log``): its log must then be the previous one or the new one, whole. A command
that only removes files (``gc``) says so (``removes_files``): the home's blobs, objects and buckets
must then lie between those of the clean run and the previous home. ``check(home)`` runs on every
home after its re-run (``forget``: the forgotten text is nowhere in it).

The killed runs are new processes; the checks and re-runs run in this process (``testing.invoke``).
``EPISTEME_CRASH_REPORT=FILE`` appends each scenario's report to FILE as a JSON line.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from episteme_core.store.faults import POINTS

SHARD_META_FROM_LOG = ("logBytes", "logPosition")


@attrs.frozen
class CrashScenario:
    """A writing command and the home it runs on.

    ``prepare(home)`` makes the previous commit (it may run commands itself); ``command`` is the
    argv after ``episteme --home HOME``; ``answer`` the reader whose output must hold (empty: none);
    ``env`` is added to every process's environment (a test server's address, say).
    """

    name: str
    prepare: Callable[[Path], None]
    command: Sequence[str]
    answer: Sequence[str] = ("query", "--term", "evidence", "--json")
    env: Mapping[str, str] = attrs.field(factory=dict)
    timeout: float = 300.0
    rewrites_log: bool = False
    removes_files: bool = False
    check: Callable[[Path], None] | None = None


@attrs.frozen
class CrashCase:
    """One kill: where, and what was found afterwards (``state`` per stage: ``previous``/``new``)."""

    scenario: str
    point: str
    occurrence: int
    killed: bool
    state: dict[str, str]
    answer: str


@attrs.frozen
class CrashReport:
    """Every kill of one scenario, and how often the clean run passed each point."""

    scenario: str
    trace: dict[str, int]
    cases: list[CrashCase]


def episteme(home: Path, args: Sequence[str], env: Mapping[str, str] | None = None,
             timeout: float = 300.0) -> subprocess.CompletedProcess[bytes]:
    """``python -m episteme_core --home HOME ARGS`` in a new process."""
    full = {key: value for key, value in os.environ.items()
            if key not in ("EPISTEME_FAULT", "EPISTEME_FAULT_TRACE", "EPISTEME_CRASH_AT")}
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "episteme_core", "--home", str(home), *args],
                          capture_output=True, env=full, timeout=timeout)


def stored_files(home: Path) -> list[str]:
    """The blobs, stage objects and buckets a home holds (temp files aside), relative and sorted."""
    from episteme_core.store.atomic import is_temp_file

    found = [path for top in ("blobs", "snapshots", "documents", "chunks", "shards")
             for path in (home / top).rglob("*")
             if path.is_file() and not is_temp_file(path) and path.name != "index.json"]
    return sorted(path.relative_to(home).as_posix() for path in found)


def home_state(home: Path, *, files: bool = False) -> dict[str, Any]:
    """What a home commits, stage by stage, in a form equal between two runs of the same inputs:
    snapshots by id (observation times aside), the derived stages' indexes as bytes (the shards'
    without the log position they record), the log's distinct lines without their times; with
    ``files``, the blobs, objects and buckets it holds too."""
    from episteme_core.stages.snapshots import read_catalog
    from episteme_core.store.home import Home

    root = Home(home)
    catalog = read_catalog(root)
    state: dict[str, Any] = {
        "snapshots": {s: [catalog.state(s).latest, list(catalog.state(s).history), catalog.options(s)]
                      for s in catalog.sources()},
    }
    for stage in ("documents", "chunks"):
        index = home / stage / "index.json"
        state[stage] = index.read_bytes().decode() if index.exists() else None
    shards = home / "shards" / "index.json"
    if shards.exists():
        value = json.loads(shards.read_bytes())
        for key in SHARD_META_FROM_LOG:
            value["meta"].pop(key, None)
        value.pop("fingerprint", None)
        state["shards"] = value
    else:
        state["shards"] = None
    lines: set[str] = set()
    if root.log_path.exists():
        for line in root.log_path.read_bytes().splitlines():
            entry = json.loads(line)
            entry.pop("time", None)
            lines.add(json.dumps(entry, sort_keys=True))
    state["log"] = sorted(lines)
    if files:
        state["files"] = stored_files(home)
    return state


def _in_process(home: Path, args: Sequence[str], scenario: CrashScenario) -> tuple[int, str, str]:
    """Run a command in this process (readers and re-runs: no kill is needed there, and a new
    process per check would double the matrix's time)."""
    from episteme_core.testing.cli import invoke

    result = invoke("--home", str(home), *args, env=dict(scenario.env))
    return result.exit_code, result.stdout, result.stderr


def _answer(home: Path, scenario: CrashScenario) -> str:
    if not scenario.answer:
        return ""
    code, out, err = _in_process(home, scenario.answer, scenario)
    return f"{code}\n{out if code == 0 else err}".replace(str(home), "HOME")  # a refusal names paths


def _problems(home: Path) -> list[str]:
    from episteme_core.store.home import Home
    from episteme_core.store.verify import verify_home

    return [f"{p.code} {p.path}: {p.message}" for p in verify_home(Home(home)).problems]


def _occurrences(count: int, every: bool) -> list[int]:
    return list(range(1, count + 1)) if every else sorted({1, count})


def run_crash_matrix(
    scenario: CrashScenario, workdir: Path, *, every: bool = False, points: Sequence[str] = POINTS,
) -> CrashReport:
    """Kill ``scenario.command`` at each point it passes (its first and last occurrence, or every
    one with ``every``) and check the home after each kill; raises ``AssertionError`` naming the
    point on the first failure. Returns what was run, for the report."""
    workdir.mkdir(parents=True, exist_ok=True)
    base = workdir / "base"
    scenario.prepare(base)
    files = scenario.removes_files
    previous = home_state(base, files=files)
    previous_answer = _answer(base, scenario)

    clean = workdir / "clean"
    shutil.copytree(base, clean)
    trace = workdir / "trace.txt"
    proc = episteme(clean, scenario.command, {**scenario.env, "EPISTEME_FAULT_TRACE": str(trace)},
                    scenario.timeout)
    assert proc.returncode == 0, f"{scenario.name}: the clean run failed: {proc.stderr.decode()[-2000:]}"
    new = home_state(clean, files=files)
    new_answer = _answer(clean, scenario)
    assert new != previous, f"{scenario.name}: the command changed nothing; nothing to crash"
    counts: dict[str, int] = {}
    for point in trace.read_text().split():
        counts[point] = counts.get(point, 0) + 1

    cases: list[CrashCase] = []
    for point in points:
        for occurrence in _occurrences(counts.get(point, 0), every) if counts.get(point) else []:
            where = f"{scenario.name} at {point}:{occurrence}"
            home = workdir / f"{point}-{occurrence}"
            shutil.copytree(base, home)
            fault = {**scenario.env, "EPISTEME_FAULT": f"{point}:{occurrence}"}
            proc = episteme(home, scenario.command, fault, scenario.timeout)
            assert proc.returncode == -signal.SIGKILL, (
                f"{where}: not killed (exit {proc.returncode}): {proc.stderr.decode()[-2000:]}")
            problems = _problems(home)
            assert problems == [], f"{where}: verify found {problems}"
            found = home_state(home, files=files)
            state: dict[str, str] = {}
            for stage, value in found.items():
                if stage == "log" and scenario.rewrites_log:  # one atomic rewrite: one log or the other
                    assert value in (previous["log"], new["log"]), f"{where}: the log is neither run's"
                    state[stage] = "previous" if value == previous["log"] else "new"
                    continue
                if stage == "log":  # appended before the index that names its captures
                    assert set(previous["log"]) <= set(value) <= set(previous["log"]) | set(new["log"]), (
                        f"{where}: the log holds lines neither run wrote")
                    state[stage] = "previous" if value == previous["log"] else "new"
                    continue
                if stage == "files":  # removed one by one: between the two
                    assert set(new["files"]) <= set(value) <= set(previous["files"]), (
                        f"{where}: the files are not between the previous home's and the clean run's")
                    state[stage] = "previous" if value == previous["files"] else "new"
                    continue
                if value == previous[stage]:
                    state[stage] = "previous"
                elif value == new[stage]:
                    state[stage] = "new"
                else:
                    raise AssertionError(f"{where}: stage {stage} is neither the previous commit nor the new")
            answer = _answer(home, scenario)
            mixed = len(set(state.values())) > 1
            if answer not in (previous_answer, new_answer):
                assert mixed and '"STALE_INDEX"' in answer, (
                    f"{where}: the answer differs from both commits:\n{answer[:2000]}")
            code, _, err = _in_process(home, scenario.command, scenario)
            assert code == 0, f"{where}: the re-run failed: {err[-2000:]}"
            after = home_state(home, files=files)
            assert after == new, f"{where}: the re-run differs from the clean run: " + ", ".join(
                stage for stage in after if after[stage] != new[stage])
            assert _problems(home) == [], f"{where}: verify after the re-run"
            if scenario.check is not None:
                scenario.check(home)
            cases.append(CrashCase(scenario.name, point, occurrence, True, state,
                                   "previous" if answer == previous_answer else
                                   "new" if answer == new_answer else "stale-refused"))
            shutil.rmtree(home, ignore_errors=True)
    report = CrashReport(scenario.name, counts, cases)
    _record(report)
    return report


def _record(report: CrashReport) -> None:
    """Append the report as one JSON line to ``$EPISTEME_CRASH_REPORT`` (for docs/reliability.md)."""
    path = os.environ.get("EPISTEME_CRASH_REPORT")
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps(attrs.asdict(report), sort_keys=True) + "\n")


__all__ = ["CrashCase", "CrashReport", "CrashScenario", "episteme", "home_state", "run_crash_matrix",
           "stored_files"]
