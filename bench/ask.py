"""Latency of ``ask`` on the books + Claude transcripts corpus: the bm25 reader, and the reference
reader server (a stand-in for a model server, with a fixed delay per read) at 1, 2 and 4 slots.

Builds a temporary home (``shard_size`` 2,000, so the books make several shards), asks each question
``--repeat`` times in-process (warm: imports paid once, shards opened per question as ``ask`` does),
and once as a new process (cold CLI). Prints a Markdown table for docs/benchmarks.md.

Usage: python bench/ask.py [CORPUS_DIR] [--latency SECONDS] [--repeat N]   (default ../shared/corpus)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from episteme_core.ask.reference_server import ReferenceServer
from episteme_core.ask.run import AskOptions, ask
from episteme_core.kernel.loader import load_plugins
from episteme_core.store.home import Home
from episteme_core.testing import invoke, run_cli

QUESTIONS = [
    "the white whale and Captain Ahab",
    "Mr. Darcy pride and prejudice at the ball",
    "harpooneer Queequeg",
    "xterm scrolling in tmux",
    "search the web for documentation",
    "Elizabeth Bennet and her sisters",
    "the sea and the ship at night",
    "which model should I use",
]


def build(corpus: Path, root: Path) -> Path:
    home = root / "home"
    home.mkdir()
    (home / "config.json").write_text(json.dumps({"shard_size": 2000}), "utf-8")
    books = root / "books" / "gutenberg"
    shutil.copytree(corpus / "books", books)
    projects = root / "projects" / "-bench-spotter"
    projects.mkdir(parents=True)
    for path in sorted((corpus / "claude").glob("*.jsonl")):
        shutil.copy(path, projects / path.name)
    for args in (["ingest", "books", str(books)], ["ingest", "claude", "--projects", str(projects.parent)]):
        result = invoke("--home", str(home), *args)
        if result.exit_code != 0:
            raise SystemExit(f"building the bench home failed: {result.stderr}")
    return home


def timed(home: Home, plugins: object, repeat: int, reader: str | None = None) -> list[float]:
    times = []
    for _ in range(repeat):
        for question in QUESTIONS:
            started = time.perf_counter()
            ask(home, AskOptions(question=question, reader=reader), plugins=plugins,
                warn=lambda *a, **k: None)
            times.append((time.perf_counter() - started) * 1000)
    return times


def row(label: str, slots: str, times: list[float], shards: int) -> str:
    p95 = statistics.quantiles(times, n=20)[-1] if len(times) >= 2 else times[0]
    return f"| {label} | {slots} | {shards} | {statistics.median(times):.1f} | {p95:.1f} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    default_corpus = Path(__file__).resolve().parents[2] / "shared" / "corpus"
    parser.add_argument("corpus", nargs="?", default=str(default_corpus))
    parser.add_argument("--latency", type=float, default=0.1, help="seconds per read")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    os.environ["EPISTEME_TELEMETRY"] = "off"
    with tempfile.TemporaryDirectory() as tmp:
        home_dir = build(Path(args.corpus), Path(tmp))
        home = Home(home_dir)
        plugins = load_plugins()
        from episteme_core.bm25.shards import open_shards

        shards = len(open_shards(home).shards)
        delay = args.latency * 1000
        print(f"{len(QUESTIONS)} questions x {args.repeat}; reference server delay {delay:.0f} ms per read")
        print()
        print("| reader | slots | shards | median ms | p95 ms |")
        print("|---|---:|---:|---:|---:|")
        print(row("bm25 (warm, in-process)", "-", timed(home, plugins, args.repeat, "bm25"), shards))
        cold = []
        for question in QUESTIONS[:3]:
            started = time.perf_counter()
            result = run_cli(["--home", str(home_dir), "ask", "--reader", "bm25", question])
            cold.append((time.perf_counter() - started) * 1000)
            assert result.exit_code == 0, result.stderr
        print(row("bm25 (cold CLI process)", "-", cold, shards))
        for slots in (1, 2, 4):
            with ReferenceServer(latency=args.latency) as server:
                config = {"shard_size": 2000, "readers": [
                    {"name": "reference", "url": server.url, "slots": slots, "timeout": 30}]}
                (home_dir / "config.json").write_text(json.dumps(config), "utf-8")
                times = timed(home, plugins, args.repeat)
            print(row("reference server (http)", str(slots), times, shards))


if __name__ == "__main__":
    main()
