"""Retrieval on the real corpus: specs, RFCs and PDFs through `pipeline --map`, two books through
`ingest books`, then cold and warm queries. The synthetic 20k/1M runs are in bench/retrieval.py.

Reads ``../shared/corpus`` (skips with a message when it is absent). Each step is a new `episteme`
process; peak RSS comes from ``wait4``. Prints a Markdown table for docs/benchmarks.md.

    python bench/retrieval_real.py [--corpus ../shared/corpus]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TERMS = ["percent-encoded byte", "content security policy", "MUST NOT", "Elizabeth Bennet", "white whale"]


def episteme(home: Path, *args: str) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one `episteme` process."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "episteme_core", "--home", str(home), *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    if status != 0:
        errors = proc.stderr.read().decode() if proc.stderr else ""
        raise SystemExit(f"episteme {' '.join(args)} failed: {errors}")
    return wall, usage.ru_maxrss / 1024


def build_map(corpus: Path, folder: Path) -> Path:
    entries = []
    pdfs = [corpus / "pdf" / name
            for name in ("pdfminer__naacl06-shinyama.pdf", "pdfplumber__senate-expenditures.pdf")]
    picks = sorted((corpus / "w3c").glob("*.html")) + sorted((corpus / "rfc").iterdir()) + pdfs
    for path in picks:
        shutil.copy(path, folder / path.name)
        kind = {".pdf": "application/pdf", ".html": "text/html", ".xml": "application/xml"}.get(
            path.suffix, "text/plain")
        entries.append({"sourceUrl": f"https://corpus.example/{path.name}", "localPath": path.name,
                        "contentType": kind})
    target = folder / "map.json"
    target.write_text(json.dumps(entries))
    return target


def warm_query_ms(home: Path) -> float:
    from episteme_core.search.query import query
    from episteme_core.store.home import Home

    samples = []
    for _ in range(10):
        for term in TERMS:
            started = time.perf_counter()
            query(Home(home), term, limit=10)
            samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", default=str(Path(__file__).resolve().parents[2] / "shared" / "corpus"))
    args = parser.parse_args()
    corpus = Path(args.corpus)
    if not (corpus / "w3c").is_dir():
        print(f"skipped: no corpus at {corpus} (this bench reads the shared corpus, not the repository)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "docs").mkdir()
        (root / "books").mkdir()
        for book in (corpus / "books").glob("*.txt"):
            shutil.copy(book, root / "books" / book.name)
        map_path = build_map(corpus, root / "docs")
        home = root / "home"
        pipeline = ("pipeline", "--map", str(map_path))
        rows = [
            ("pipeline --map (specs, RFCs, PDFs), first run", *episteme(home, *pipeline)),
            ("pipeline --map, re-run on unchanged inputs", *episteme(home, *pipeline)),
            ("ingest books (2 books, extract + chunk + index)",
             *episteme(home, "ingest", "books", str(root / "books"))),
        ]
        cold = [episteme(home, "query", "--term", term) for term in TERMS * 2]
        rows.append(("cold CLI query, new process (median of 10)", statistics.median(c[0] for c in cold),
                     max(c[1] for c in cold)))
        chunks = json.loads((home / "shards" / "index.json").read_text())["meta"]["chunks"]
        size = sum(p.stat().st_size for p in (home / "shards").rglob("*") if p.is_file()) / 2**20
        warm = warm_query_ms(home)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"corpus: the specs, RFCs and two PDFs + 2 books of {corpus}; {chunks:,} chunks; "
          f"shards {size:.1f} MiB\n")
    print("| step | wall | peak RSS |")
    print("|---|---:|---:|")
    for label, wall, rss in rows:
        print(f"| {label} | {wall * 1000:.0f} ms | {rss:.0f} MiB |" if wall < 1 else
              f"| {label} | {wall:.2f} s | {rss:.0f} MiB |")
    print(f"| warm library query (median of 50, {len(TERMS)} terms) | {warm:.1f} ms | – |")


if __name__ == "__main__":
    main()
