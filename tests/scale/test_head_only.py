"""An unchanged re-run reads each stage's head and nothing more: capture trusts the stat cache's
confirmation that each file's snapshot is its source's latest while the snapshots head is the one
it was confirmed under, extract the noted latest snapshots of that head; no objects folder is
listed (no temp-file sweep after a writer that finished). Any commit of snapshots ends the trust."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from episteme_core.stages.snapshots import read_catalog
from episteme_core.store.commits import BUCKETS_FROM_ENV
from episteme_core.store.home import Home
from episteme_core.testing.crashmatrix import episteme

from .audit import touched_while
from .conftest import write_corpus


def _pipeline(home: Path, map_path: Path, *extra: str) -> dict:  # type: ignore[type-arg]
    proc = episteme(home, ["pipeline", "--map", str(map_path), "--json", *extra])
    assert proc.returncode == 0, proc.stderr.decode()
    return json.loads(proc.stdout)["data"]  # type: ignore[no-any-return]


def test_an_unchanged_rerun_reads_heads_only(tmp_path: Path, home: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BUCKETS_FROM_ENV, "16")  # the per-source maps in buckets, as a large stage's
    map_path = write_corpus(tmp_path, 20)
    _pipeline(home, map_path)  # new processes: nothing of these runs is remembered here
    _pipeline(home, map_path)
    touched = touched_while(home, ["--home", str(home), "--json", "pipeline", "--map", str(map_path)])
    snapshots = [path for _, path in touched if "/snapshots/" in path]
    assert snapshots == [str(home / "snapshots" / "index.json")], touched  # the head, nothing else
    assert not [path for _, path in touched if "/documents/buckets/" in path], touched
    # extract lists its own objects folder once; nothing else is listed (no temp-file sweep)
    listed = [path for event, path in touched if event != "open" and "/documents/objects" not in path]
    assert listed == [], listed
    assert (home / "snapshots" / "buckets").is_dir()  # the stage is in buckets indeed


def test_a_commit_of_snapshots_by_another_run_ends_the_trust(tmp_path: Path, home: Path) -> None:
    """Map A names a source's file; map B names another file for the same source. After B's run
    the source's latest is B's: A's file, unchanged and confirmed before, is captured again."""
    for name, text in (("a.txt", "alpha words"), ("b.txt", "beta words")):
        (tmp_path / name).write_text(text)
    maps = {}
    for name in ("a", "b"):
        maps[name] = tmp_path / f"{name}.json"
        maps[name].write_text(json.dumps([{"sourceUrl": "https://example.org/s",
                                           "localPath": f"{name}.txt"}]))
    import time

    time.sleep(0.25)  # the files' times settled: the stat cache records them
    assert _pipeline(home, maps["a"])["capture"]["counts"]["captured"] == 1
    assert _pipeline(home, maps["a"])["capture"]["counts"] == {"captured": 0, "unchanged": 1, "failed": 0}
    assert _pipeline(home, maps["b"])["capture"]["counts"]["captured"] == 1
    again = _pipeline(home, maps["a"])
    assert again["capture"]["counts"] == {"captured": 1, "unchanged": 0, "failed": 0}
    catalog = read_catalog(Home(home))
    record = catalog.latest("https://example.org/s")
    assert record.attributes["localPath"] == "a.txt"


def test_a_new_fragment_on_an_unchanged_file_is_recorded(tmp_path: Path, home: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha words")
    map_path = tmp_path / "map.json"

    def write(url: str) -> None:
        map_path.write_text(json.dumps([{"sourceUrl": url, "localPath": "a.txt"}]))

    write("https://example.org/s")
    import time

    time.sleep(0.25)
    _pipeline(home, map_path)
    _pipeline(home, map_path)  # confirmed without a fragment
    write("https://example.org/s#part")
    _pipeline(home, map_path)
    assert read_catalog(Home(home)).options("https://example.org/s") == {"fragment": "part"}
    write("https://example.org/s")
    _pipeline(home, map_path)
    assert read_catalog(Home(home)).options("https://example.org/s") == {}
