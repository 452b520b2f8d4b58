"""Startup time of the CLI as new processes: `episteme --help` and `episteme --version`.

Target: under 150 ms on a 2-core machine. Prints a Markdown table for docs/benchmarks.md.
Usage: python bench/startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _episteme() -> list[str]:
    beside = Path(sys.executable).parent / "episteme"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("episteme")
    return [found] if found else [sys.executable, "-m", "episteme_core"]


def _time(argv: list[str], runs: int) -> list[float]:
    subprocess.run(argv, capture_output=True, check=True)  # warm the page cache
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, capture_output=True, check=True)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    base = _episteme()
    rows = [("python -c pass (floor)", [sys.executable, "-c", "pass"])]
    rows += [(f"episteme {flag}", [*base, flag]) for flag in ("--version", "--help")]
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"runs per command: {args.runs}\n")
    print("| command | median ms | min ms | p90 ms | target |")
    print("|---|---:|---:|---:|---|")
    for label, argv in rows:
        samples = sorted(_time(argv, args.runs))
        p90 = samples[int(len(samples) * 0.9) - 1]
        target = "" if "floor" in label else "< 150 ms"
        print(f"| `{label}` | {statistics.median(samples):.0f} | {samples[0]:.0f} | {p90:.0f} | {target} |")


if __name__ == "__main__":
    main()
