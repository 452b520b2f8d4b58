"""The fault points: named, counted, traced, and a kill exactly where asked."""

from __future__ import annotations

import json
import signal
from pathlib import Path

from episteme_core.store.faults import POINTS, _targets
from episteme_core.testing.crashmatrix import episteme


def _map(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text("alpha")
    (tmp_path / "b.txt").write_text("beta")
    path = tmp_path / "map.json"
    path.write_text(json.dumps([{"sourceUrl": "https://example.org/a", "localPath": "a.txt"},
                                {"sourceUrl": "https://example.org/b", "localPath": "b.txt"}]))
    return path


def test_a_fault_spec_names_points_and_occurrences() -> None:
    assert _targets("after-blob-write:3, before-index-write") == {"after-blob-write": 3,
                                                                   "before-index-write": 1}
    assert _targets("") == {}


def test_the_trace_lists_every_point_a_command_passes_in_order(tmp_path: Path, home: Path) -> None:
    trace = tmp_path / "trace.txt"
    proc = episteme(home, ["manual-ingest", "--map", str(_map(tmp_path))],
                    {"EPISTEME_FAULT_TRACE": str(trace)})
    assert proc.returncode == 0, proc.stderr
    points = trace.read_text().split()
    assert set(points) <= set(POINTS)
    cache = ["temp-written", "before-file-write", "after-file-write"]  # the stat cache, after the commit
    assert points[-3:] == cache
    points = points[:-3]
    assert points.count("after-blob-write") == 2 and points.count("after-object-write") == 2
    # blobs and objects first, then the log, then the index: the order every commit keeps
    last_object = max(i for i, p in enumerate(points) if p.endswith("object-write"))
    assert points.index("before-log-append") > last_object
    assert points[-1] == "after-index-write" and points.index("before-index-write") > points.index(
        "after-log-append")


def test_the_process_dies_exactly_at_the_named_occurrence(tmp_path: Path, home: Path) -> None:
    map_path = _map(tmp_path)
    proc = episteme(home, ["manual-ingest", "--map", str(map_path)], {"EPISTEME_FAULT": "after-blob-write:2"})
    assert proc.returncode == -signal.SIGKILL
    assert len([p for p in (home / "blobs").rglob("*") if p.is_file()]) == 2  # both blobs, then death
    assert not (home / "snapshots" / "index.json").exists() and not (home / "log.jsonl").exists()
    proc = episteme(home, ["manual-ingest", "--map", str(map_path)], {"EPISTEME_FAULT": "after-index-write"})
    assert proc.returncode == -signal.SIGKILL
    assert (home / "snapshots" / "index.json").exists()  # killed after the commit: it stands
