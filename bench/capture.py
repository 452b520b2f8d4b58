"""Capture benchmark: manual-ingest of many small files and of one large file (time and peak memory).

Each run is a new ``episteme`` process; its peak RSS comes from ``wait4``. The large file must be
streamed into the blob store, so its peak RSS stays near the idle process's, far below the file size.

    python bench/capture.py [--small 10000] [--large-mb 200]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run(args: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of ``episteme ARGS`` in a new process."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as errors:
        proc = subprocess.Popen([sys.executable, "-m", "episteme_core", *args],
                                stdout=subprocess.DEVNULL, stderr=errors)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        if status != 0:
            errors.seek(0)
            raise SystemExit(f"episteme {' '.join(args)} failed: {errors.read().decode()}")
    return wall, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--small", type=int, default=10_000, help="how many small files")
    parser.add_argument("--large-mb", type=int, default=200, help="size of the large file in MiB")
    options = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = root / "files"
        files.mkdir()
        entries = []
        for n in range(options.small):
            name = f"doc{n:05d}.txt"
            (files / name).write_text(f"Document {n}.\n\n" + "Some evidence text. " * 40)
            entries.append({"sourceUrl": f"https://example.org/doc/{n}", "localPath": name})
        (files / "map.json").write_text(json.dumps(entries))
        home = root / "home-small"
        common = ["manual-ingest", "--map", str(files / "map.json"), "--home", str(home),
                  "--max-sources", str(max(options.small, 1)), "--progress", "never"]
        wall, rss = run(common)
        rows.append((f"manual-ingest {options.small:,} small files (first run)", wall, rss))
        wall, rss = run(common)
        rows.append((f"manual-ingest {options.small:,} small files (unchanged re-run)", wall, rss))

        large = root / "large"
        large.mkdir()
        block = os.urandom(1 << 20)
        with open(large / "big.bin", "wb") as handle:
            for n in range(options.large_mb):
                handle.write(block[n % 251:] + block[: n % 251])
        (large / "map.json").write_text(json.dumps([{"sourceUrl": "https://example.org/big",
                                                     "localPath": "big.bin"}]))
        big = ["manual-ingest", "--map", str(large / "map.json"), "--home", str(root / "home-large"),
               "--max-bytes", str(1 << 30), "--progress", "never"]
        wall, rss = run(big)
        rows.append((f"manual-ingest one {options.large_mb} MiB file (first run)", wall, rss))
        wall, rss = run(big)
        rows.append((f"manual-ingest one {options.large_mb} MiB file (unchanged re-run)", wall, rss))
        idle_wall, idle_rss = run(["--version"])
        rows.append(("episteme --version (idle process, for reference)", idle_wall, idle_rss))

    print("| case | wall (s) | peak RSS (MiB) |")
    print("|---|---:|---:|")
    for name, wall, rss in rows:
        print(f"| {name} | {wall:.2f} | {rss:.0f} |")


if __name__ == "__main__":
    main()
