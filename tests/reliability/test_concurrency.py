"""Concurrent writers and readers on one home: one writer at a time (the others RESOURCE_BUSY, exit
7, never a corruption), and readers during writes see the previous commit or the new one, whole."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

from episteme_core.stages.snapshots import read_catalog
from episteme_core.store.home import Home
from episteme_core.store.verify import verify_home

WRITERS = int(os.environ.get("EPISTEME_CONCURRENT_WRITERS", "12"))
READS = int(os.environ.get("EPISTEME_CONCURRENT_READS", "512"))


def _map(folder: Path, n: int) -> Path:
    (folder / f"{n}.txt").write_text(f"writer {n}\n")
    path = folder / f"map-{n}.json"
    path.write_text(json.dumps([{"sourceUrl": f"https://example.org/{n}", "localPath": f"{n}.txt"}]))
    return path


def test_concurrent_writers_one_proceeds_the_others_are_busy(tmp_path: Path, home: Path) -> None:
    maps = [_map(tmp_path, n) for n in range(WRITERS)]
    procs = [subprocess.Popen([sys.executable, "-m", "episteme_core", "--home", str(home), "--json",
                               "manual-ingest", "--map", str(m)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) for m in maps]
    statuses = []
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        statuses.append(proc.returncode)
        if proc.returncode == 7:
            assert json.loads(err.decode().splitlines()[-1])["error"]["code"] == "RESOURCE_BUSY"
    assert set(statuses) <= {0, 7} and 0 in statuses, statuses
    assert verify_home(Home(home)).problems == []
    catalog = read_catalog(Home(home))
    wrote = {f"https://example.org/{n}" for n, status in enumerate(statuses) if status == 0}
    assert set(catalog.sources()) == wrote  # every writer that succeeded committed, and no other
    for source in catalog.sources():
        catalog.content(catalog.latest(source))


def test_readers_during_writes_see_a_whole_commit(tmp_path: Path, home: Path) -> None:
    doc = tmp_path / "doc.txt"
    map_path = tmp_path / "map.json"
    map_path.write_text(json.dumps([{"sourceUrl": "https://example.org/doc", "localPath": "doc.txt"}]))
    versions = [f"version {n}\n".encode() * (n + 1) for n in range(12)]
    doc.write_bytes(versions[0])
    first = subprocess.run([sys.executable, "-m", "episteme_core", "--home", str(home), "manual-ingest",
                            "--map", str(map_path)], capture_output=True)
    assert first.returncode == 0, first.stderr
    done = threading.Event()

    def write() -> None:
        try:
            for data in versions[1:]:
                doc.write_bytes(data)
                proc = subprocess.run([sys.executable, "-m", "episteme_core", "--home", str(home),
                                       "manual-ingest", "--map", str(map_path)], capture_output=True)
                assert proc.returncode == 0, proc.stderr
        finally:
            done.set()

    writer = threading.Thread(target=write)
    writer.start()
    seen = set()
    reads = 0
    while reads < READS or not done.is_set():
        catalog = read_catalog(Home(home))  # never locks; verifies the index and every byte read
        content = catalog.content(catalog.latest("https://example.org/doc"))
        assert content in versions
        seen.add(content)
        reads += 1
    writer.join()
    assert reads >= READS and len(seen) > 1
    assert verify_home(Home(home)).problems == []
