"""What ``forget`` and ``gc`` cost on a home of many records: new processes, wall time.

A home of ``--books`` books (``--paragraphs`` paragraphs each) is ingested and packed; then one book
is forgotten whole, one paragraph of another, and ``gc`` lists and collects. A forget reads every
snapshot record once (which blobs does another source still name?), rewrites the log, commits each
stage once and rebuilds the shards that held a forgotten row, so it grows with the home, not with
what it forgets. Prints a Markdown table for docs/benchmarks.md.
Usage: python bench/forget.py [--books N] [--paragraphs N]
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _run(home: Path, *args: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "episteme_core", "--home", str(home), *args], check=True,
                   capture_output=True, env={**os.environ, "EPISTEME_LOAD_PLUGINS": ""})
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--books", type=int, default=2000)
    parser.add_argument("--paragraphs", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        shelf, home = Path(tmp) / "shelf", Path(tmp) / "home"
        shelf.mkdir()
        for number in range(args.books):
            text = "\n\n".join(f"Book {number}, paragraph {p}: evidence of the {p}th kind, quite ordinary."
                               for p in range(args.paragraphs))
            (shelf / f"b{number:05d}.txt").write_text(text + "\n")
        rows = [("ingest books (and pack)", _run(home, "ingest", "books", str(shelf))),
                ("forget --dry-run one book", _run(home, "forget", "book:shelf/b00001", "--dry-run")),
                ("forget one book", _run(home, "forget", "book:shelf/b00001")),
                ("forget one paragraph", _run(home, "forget", "book:shelf/b00002#3")),
                ("gc --dry-run", _run(home, "gc", "--dry-run")),
                ("gc", _run(home, "gc"))]
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"home: {args.books} books of {args.paragraphs} paragraphs\n")
    print("| step | seconds |")
    print("|---|---:|")
    for label, seconds in rows:
        print(f"| {label} | {seconds:.2f} |")


if __name__ == "__main__":
    main()
