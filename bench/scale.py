"""Scale benchmark: re-runs that cost what changed, every local core, and Dask beyond one machine.

    python bench/scale.py rerun [--files 20000] [--dask]
    python bench/scale.py build [--chunks 20000]    # bench/scale_build.py: serial vs pool vs Dask

Prints Markdown tables for docs/scaling.md and docs/benchmarks.md:

- a new ``episteme pipeline --map`` process over FILES small text files (first run), again on the
  same unchanged files (twice), again after one file changed, that one file alone in a new home,
  and an unchanged re-run with ``--rehash``. The stat cache (size, mtime, ctime, inode) trusts a
  file only when its times are settled (older than the start of its hash by ``RACY_NS``), so the
  bench waits that long after writing the files;
- ``episteme index --reshard`` on that home with ``--jobs 1`` and ``--jobs 2``;
- query latency (warm, in process) over the home's shards, here and, with ``--dask``, fanned out to
  a LocalCluster of 2 single-threaded worker processes on 127.0.0.1 (the hits compared first).

The 1M-chunk build (serial vs local pool) is ``bench/retrieval.py``'s corpus with ``EPISTEME_JOBS``
set; the 100M-chunk model in docs/scaling.md is computed by hand from the per-shard costs measured.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def machine() -> str:
    load = os.getloadavg()[0]
    return (f"{platform.machine()}, {os.cpu_count()} CPU(s), {platform.platform()}, Python "
            f"{platform.python_version()}; load average {load:.1f} at the start")


# rerun ------------------------------------------------------------------------------------------


def episteme(home: Path, *args: str,
             env: dict[str, str] | None = None) -> tuple[float, float, dict[str, Any]]:
    """Wall seconds, peak RSS (MiB) and the envelope's data of ``episteme --json ARGS`` (new process);
    its CPU seconds (user + system) are kept in ``LAST_CPU``."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, "-m", "episteme_core", "--home", str(home), "--json",
                                 "--progress", "never", *args], stdout=out, stderr=err,
                                env={**CHILD_ENV, **(env or {})})
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        if status != 0:
            raise SystemExit(f"episteme {' '.join(args)} failed: {err.read().decode()[-3000:]}")
        data = json.loads(out.read())["data"]
    LAST_CPU[0] = usage.ru_utime + usage.ru_stime
    return wall, usage.ru_maxrss / 1024, data


LAST_CPU = [0.0]


def same_answers(home: Path, fresh: Path) -> str:
    """Whether an incremental home answers as a fresh build of the same files: the documents and
    chunks stages byte for byte, and every question's hits, exact scores and total."""
    from episteme_core.bm25.shards import open_shards
    from episteme_core.store.home import Home

    def stage_files(root: Path) -> dict[str, bytes]:
        return {str(p.relative_to(root)): p.read_bytes() for stage in ("documents", "chunks")
                for p in sorted((root / stage).rglob("*")) if p.is_file()}

    if stage_files(home) != stage_files(fresh):
        raise SystemExit("the incremental home's documents or chunks differ from a fresh build's")
    sets = [open_shards(Home(root)) for root in (home, fresh)]
    for question in QUESTIONS:
        found = [(total, [(hit.chunk_id, hit.score) for hit in hits])
                 for hits, total in (shards.search(question, 10) for shards in sets)]
        if found[0] != found[1]:
            raise SystemExit(f"{question!r}: the incremental home answers {found[0]}, "
                             f"a fresh build {found[1]}")
    return (f"{len(sets[0].shards)} shard(s) against {len(sets[1].shards)}: the same hits, scores and totals "
            f"for all {len(QUESTIONS)} questions; documents and chunks the same bytes")


def write_files(folder: Path, count: int) -> Path:
    """``count`` small text files (~1.2 KB, a few paragraphs each) and the map naming them."""
    folder.mkdir(parents=True, exist_ok=True)
    words = ("evidence", "source", "citation", "record", "paragraph", "snapshot", "shard", "query")
    entries = []
    for n in range(count):
        name = f"f{n:06d}.txt"
        body = "\n\n".join(" ".join(words[(n + i + j) % len(words)] for j in range(24)) + f" {n}-{i}."
                           for i in range(6))
        (folder / name).write_text(f"Document {n}\n\n{body}\n")
        entries.append({"sourceUrl": f"https://files.example/{n}", "localPath": name})
    path = folder / "map.json"
    path.write_text(json.dumps(entries))
    return path


def rerun(options: argparse.Namespace) -> None:
    from episteme_core.capture.statcache import COARSE_RACY_NS

    work = Path(tempfile.mkdtemp(prefix="episteme-scale-"))
    try:
        files = work / "files"
        map_path = write_files(files, options.files)
        time.sleep(COARSE_RACY_NS / 1e9)  # every file's times settled (see the module docstring)
        home = work / "home"
        args = ["pipeline", "--map", str(map_path), "--max-sources", str(options.files)]
        rows = []
        first, rss, data = episteme(home, *args)
        rows.append(("first run", first, rss, data, LAST_CPU[0]))
        for label in ("unchanged re-run", "unchanged re-run (again)"):
            wall, rss, data = episteme(home, *args)
            rows.append((label, wall, rss, data, LAST_CPU[0]))
        changed = files / "f000123.txt"
        changed.write_text(changed.read_text() + "\nOne more paragraph of new evidence.\n")
        wall, rss, data = episteme(home, *args)
        rows.append(("one file changed", wall, rss, data, LAST_CPU[0]))
        episteme(work / "home-fresh", *args)  # a fresh build of the same files: the same answers
        verdict = same_answers(home, work / "home-fresh")
        alone = work / "alone"
        alone.mkdir()
        shutil.copy(changed, alone / changed.name)
        (alone / "map.json").write_text(json.dumps([{"sourceUrl": "https://files.example/123",
                                                     "localPath": changed.name}]))
        wall, rss, data = episteme(work / "home-alone", "pipeline", "--map", str(alone / "map.json"))
        rows.append(("that one file alone, new home", wall, rss, data, LAST_CPU[0]))
        wall, rss, data = episteme(home, *args, "--rehash")
        rows.append(("unchanged re-run with --rehash", wall, rss, data, LAST_CPU[0]))
        builds = [(jobs, *episteme(home, "index", "--reshard", "--jobs", jobs)[:2])
                  for jobs in ("1", "2")]
        latency = query_latency(home, options.dask)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"Machine: {machine()}\n")
    print(f"`episteme pipeline --map` over {options.files:,} small text files (a new process each):\n")
    print("| run | wall | CPU | of the first run | peak RSS | captured / unchanged | extracted | chunked "
          "| shards built |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, wall, rss, data, cpu in rows:
        counts = data["capture"]["counts"]
        print(f"| {label} | {wall:.2f} s | {cpu:.2f} s | {100 * wall / first:.1f} % | {rss:.0f} MiB | "
              f"{counts['captured']} / {counts['unchanged']} | {len(data['extract']['extracted'])} | "
              f"{data['chunk']['chunked']} | {len(data['index']['built'])} |")
    print(f"\nAfter one file changed, against a fresh build of the same files: {verdict}.")
    print("\n`episteme index --reshard` on that home:\n")
    print("| jobs | wall | peak RSS (command) |")
    print("|---:|---:|---:|")
    for jobs, wall, rss in builds:
        print(f"| {jobs} | {wall:.2f} s | {rss:.0f} MiB |")
    print("\nQuery latency (warm, in process, median of the questions; shards open):\n")
    print("| where | median | p90 |")
    print("|---|---:|---:|")
    for where, (median, p90) in latency.items():
        print(f"| {where} | {median * 1e3:.1f} ms | {p90 * 1e3:.1f} ms |")


QUESTIONS = ["evidence source", "citation record", "paragraph snapshot", "shard query", "evidence 123-4",
             "record paragraph citation", "snapshot", "query evidence shard", "source 77-2", "citation"]


def query_latency(home: Path, dask: bool) -> dict[str, tuple[float, float]]:
    """Median and p90 seconds of ``search`` over the home's shards: here, and (``dask``) fanned out to
    a LocalCluster of 2 single-threaded workers on 127.0.0.1; the hits must be the same."""
    from episteme_core.bm25.shards import open_shards
    from episteme_core.search.fanout import fanned
    from episteme_core.store.home import Home

    shards = open_shards(Home(home))

    def timed(searched: Any) -> tuple[float, float]:
        times = []
        for _ in range(3):
            for question in QUESTIONS:
                started = time.perf_counter()
                searched.search(question, 10)
                times.append(time.perf_counter() - started)
        times.sort()
        return times[len(times) // 2], times[int(len(times) * 0.9)]

    for question in QUESTIONS:
        shards.search(question, 10)  # warm
    found = {f"local ({len(shards.shards)} shards)": timed(shards)}
    if dask:
        from distributed import LocalCluster

        from episteme_core.executor.cluster import DaskExecutor

        with LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1",
                          dashboard_address="127.0.0.1:0") as cluster:
            executor = DaskExecutor(cluster.scheduler_address)
            try:
                spread = fanned(shards, executor)
                for question in QUESTIONS:
                    assert spread.search(question, 10) == shards.search(question, 10)
                found["Dask, 2 workers"] = timed(spread)
            finally:
                executor.close()
    return found


# build ------------------------------------------------------------------------------------------


def main() -> None:
    import scale_build

    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parts = parser.add_subparsers(dest="part", required=True)
    one = parts.add_parser("rerun", help="pipeline re-runs over many small files")
    one.add_argument("--files", type=int, default=20_000)
    one.add_argument("--dask", action="store_true", help="also time queries fanned out to a LocalCluster")
    scale_build.add_parser(parts)  # build: bench/scale_build.py
    options = parser.parse_args()
    if options.part == "rerun":
        rerun(options)
    else:
        options.run(options)


if __name__ == "__main__":
    main()
