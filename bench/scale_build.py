"""``bench/scale.py build``: chunking, index build and query latency at scale, one process vs the
local pool vs Dask, with the peak memory of the command and of its workers.

    python bench/scale.py build [--chunks 20000] [--dir /tmp/scalebench] [--questions 20] [--keep]
    python bench/scale.py build --chunks 5000000 --drop-documents   # about 21 GB of disk at the peak

Writes the synthetic corpus of bench/retrieval.py (documents of 100 one-paragraph sections, a Zipf
vocabulary: one chunk per section) into a new home under DIR, then, each as a new CLI process:

- ``episteme chunk`` with ``--jobs 1``, ``--jobs 2`` (the local pool) and
  ``--executor dask://127.0.0.1:PORT`` (a ``dask scheduler`` and 2 ``dask worker --nthreads 1``
  processes on 127.0.0.1, started by the bench), each into an empty chunks folder;
- ``episteme index --reshard`` the same three ways, each into an empty shards folder.

For each: wall seconds; CPU seconds of the command and the children it reaped (wait4), and of the
workers; the command's peak RSS (its VmHWM, sampled every 100 ms: wait4's ru_maxrss would count
this process's pages, which the child holds between fork and exec); the workers' peak RSS and CPU:
for the pool, every descendant process's VmHWM and CPU time sampled from /proc every 100 ms; for
Dask, each worker process's VmHWM, reset (``/proc/PID/clear_refs``) before the command and read
after it, and its CPU time before and after. The outputs must be the same bytes (sha256 of every
file of the folder); the bench stops otherwise. Each output is deleted once hashed, but the last
chunks and the last shards, which become the home's own stage. The query rows run on the first
index build's shards, before the other index builds (``--modes`` orders them).

Then query latency on the shards: a cold CLI ``query`` (a new process, median over the questions)
here and with ``--executor dask://``, a warm in-process shard search (median, p90) here and fanned
out to the Dask workers (the hits compared first), and the bytes a fanned-out query sends to the
workers and gets back (the pickled task and answers). The per-shard figures the 100M model of
docs/scaling.md uses are printed last. The home is deleted at the end unless ``--keep``.

Timings are of a machine that may be shared: the load average is printed with every table.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pickle
import platform
import random
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import attrs

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from retrieval import CHILD_ENV, corpus_batches  # noqa: E402

MIB = 1024 * 1024
MODES = {"serial": "--jobs 1", "pool": "--jobs 2", "dask": "Dask, 2 workers"}  # --modes: label


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} / {five:.2f} / {fifteen:.2f} (1 / 5 / 15 min)"


# processes and their memory -----------------------------------------------------------------------


def parents() -> dict[int, int]:
    """pid -> parent pid of every process now (from /proc/PID/stat)."""
    found = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(entry.path, "stat").read_text()
            except OSError:
                continue
            found[int(entry.name)] = int(stat.rpartition(")")[2].split()[1])
    return found


def descendants(root: int) -> list[int]:
    """Every process below ``root`` now (children, grandchildren, ...)."""
    children: dict[int, list[int]] = {}
    for pid, parent in parents().items():
        children.setdefault(parent, []).append(pid)
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds ``pid`` has used so far; 0 when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_kib(pid: int) -> int:
    """VmHWM (KiB) of ``pid``; 0 when it is gone or a zombie."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def reset_peak(pid: int) -> None:
    """Start ``pid``'s VmHWM again from its current RSS."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    except OSError:
        pass


class TreeSampler:
    """The largest VmHWM of a process (``own``) and the largest VmHWM and CPU seconds seen of every
    descendant, sampled every ``every`` seconds (a process's last 0.1 s may be missed)."""

    def __init__(self, root: int, every: float = 0.1) -> None:
        self.root, self.every = root, every
        self.own = 0
        self.peaks: dict[int, int] = {}
        self.cpus: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.own = max(self.own, peak_kib(self.root))
            for pid in descendants(self.root):
                self.peaks[pid] = max(self.peaks.get(pid, 0), peak_kib(pid))
                self.cpus[pid] = max(self.cpus.get(pid, 0.0), cpu_seconds(pid))
            self._stop.wait(self.every)

    def stop(self) -> dict[int, int]:
        self._stop.set()
        self._thread.join()
        return {pid: kib for pid, kib in self.peaks.items() if kib}


@attrs.frozen
class Measured:
    """One CLI run: wall and CPU seconds (of the command and the children it reaped; of the workers),
    peak RSS (MiB) of the command and of each worker process, largest first."""

    wall: float
    cpu: float
    worker_cpu: float
    command_mib: float
    worker_mib: list[float]
    data: dict[str, Any]


def episteme(home: Path, args: list[str], workers: list[int] | None = None) -> Measured:
    """``episteme --json ARGS`` as a new process. ``workers``: pids of long-lived worker processes
    (Dask) whose peak is reset before and read after; without them, the command's descendants are
    sampled (the local pool). The command's own peak is its VmHWM, sampled: wait4's ru_maxrss would
    count the pages of this process, which the child had between fork and exec."""
    before = {pid: cpu_seconds(pid) for pid in workers or ()}
    for pid in workers or ():
        reset_peak(pid)
    started = time.perf_counter()
    with open(os.devnull, "wb") as null, tempfile_pair() as (out, err):
        proc = subprocess.Popen([sys.executable, "-m", "episteme_core", "--home", str(home), "--json",
                                 "--progress", "never", *args], stdout=out, stderr=err, stdin=null,
                                env=CHILD_ENV)
        sampler = TreeSampler(proc.pid)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        sampled = sampler.stop()
        out.seek(0)
        err.seek(0)
        if status != 0:
            raise SystemExit(f"episteme {' '.join(args)} failed: {err.read().decode()[-3000:]}")
        data = json.loads(out.read())["data"]
    if workers:
        worker_mib = sorted((peak_kib(pid) / 1024 for pid in workers), reverse=True)
        worker_cpu = sum(cpu_seconds(pid) - before[pid] for pid in workers)
    else:
        worker_mib = sorted((kib / 1024 for kib in sampled.values()), reverse=True)
        worker_cpu = sum(sampler.cpus.values())
    return Measured(wall, usage.ru_utime + usage.ru_stime, worker_cpu, sampler.own / 1024, worker_mib, data)


class tempfile_pair:
    """Two anonymous temporary files (stdout, stderr of a child)."""

    def __enter__(self) -> tuple[Any, Any]:
        import tempfile

        self.files = (tempfile.TemporaryFile(), tempfile.TemporaryFile())
        return self.files

    def __exit__(self, *_: object) -> None:
        for file in self.files:
            file.close()


def folder_digest(folder: Path) -> tuple[str, int, int]:
    """sha256 over every file's relative path and sha256, the file count and the bytes."""
    total, count, digest = 0, 0, hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        one = hashlib.sha256()
        with path.open("rb") as file:
            while block := file.read(1 << 20):
                one.update(block)
                total += len(block)
        count += 1
        digest.update(f"{path.relative_to(folder)}\0{one.hexdigest()}\n".encode())
    return digest.hexdigest(), count, total


# the Dask cluster --------------------------------------------------------------------------------


class DaskProcesses:
    """``dask scheduler`` and ``workers`` ``dask worker --nthreads 1`` processes on 127.0.0.1."""

    def __init__(self, workers: int = 2) -> None:
        dask = shutil.which("dask", path=str(Path(sys.executable).parent))
        if dask is None:
            raise SystemExit("the dask command is not installed next to this Python "
                             "(pip install 'episteme-core[dask]')")
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = int(probe.getsockname()[1])
        self.address = f"127.0.0.1:{self.port}"
        env = {**CHILD_ENV, "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
        quiet: dict[str, Any] = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env}
        self.scheduler = subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port",
                                           str(self.port), "--no-dashboard"], **quiet)
        self.workers = [subprocess.Popen([dask, "worker", f"tcp://{self.address}", "--host", "127.0.0.1",
                                          "--nthreads", "1", "--nworkers", "1", "--no-dashboard"], **quiet)
                        for _ in range(workers)]
        from distributed import Client

        deadline = time.monotonic() + 120
        while True:
            try:
                with Client(f"tcp://{self.address}", timeout=5) as client:
                    client.wait_for_workers(workers, timeout=120)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)

    def worker_pids(self) -> list[int]:
        """The processes that run tasks (each ``dask worker`` runs a nanny, the worker its child)."""
        from distributed import Client

        with Client(f"tcp://{self.address}", timeout=30) as client:
            return sorted(client.run(os.getpid).values())

    def close(self) -> None:
        for process in (*self.workers, self.scheduler):
            process.terminate()
        for process in (*self.workers, self.scheduler):
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


# the bench ---------------------------------------------------------------------------------------


def write_corpus(home: Path, chunks: int) -> float:
    """The synthetic documents of bench/retrieval.py committed to ``home`` in one commit; seconds."""
    from episteme_core.stages.documents import write_documents
    from episteme_core.store.home import Home

    started = time.perf_counter()
    home.mkdir(parents=True)
    write_documents(Home(home), (document for batch, _ in corpus_batches(chunks) for document in batch))
    return time.perf_counter() - started


def questions(count: int) -> list[str]:
    """``count`` queries of 1-3 words from the 2,000 commonest of the corpus (as bench/retrieval.py)."""
    words: list[str] = []
    for _, batch_words in corpus_batches(100):
        words = batch_words
    rng = random.Random(99)
    return [" ".join(rng.choices(words[:2000], k=rng.randint(1, 3))) for _ in range(count)]


Run = tuple[str, Measured, tuple[str, int, int]]  # (how, the run, the output folder's digest)


def stage_runs(home: Path, stage: str, cluster: DaskProcesses, modes: list[str],
               reference: tuple[str, int, int] | None = None, keep: bool = True) -> list[Run]:
    """``stage`` (chunk or index) run each of ``modes`` ways, each into an empty folder, its bytes
    compared with ``reference`` (else the first run's). With ``keep`` the last folder becomes the
    home's own (``HOME/chunks``, ``HOME/shards``); every other one is deleted once hashed, so the
    disk holds one copy of the stage at a time (at 5M chunks a copy is about 9 and 12 GB)."""
    runs: list[Run] = []
    target = home / ("chunks" if stage == "chunk" else "shards")
    folder = home / f"{target.name}-new"
    for mode in modes:
        if reference and shutil.disk_usage(home).free < reference[2] + 2 * 1024 * MIB:
            raise SystemExit(f"{stage} {MODES[mode]}: less than its {reference[2] / MIB:,.0f} MiB "
                             "and 2 GiB to spare are free on the disk")
        if stage == "chunk":
            args = ["chunk", "--chunks", str(folder)]
        else:
            args = ["index", "--reshard", "--index", str(folder)]
        workers = None
        if mode == "dask":
            args += ["--executor", f"dask://{cluster.address}"]
            workers = cluster.worker_pids()
        else:
            args += MODES[mode].split()
        measured = episteme(home, args, workers)
        digest = folder_digest(folder)
        runs.append((MODES[mode], measured, digest))
        progress = {"stage": stage, "mode": mode, "digest": digest, "load": os.getloadavg(),
                    **attrs.asdict(measured, filter=lambda field, _: field.name != "data")}
        print(json.dumps(progress), file=sys.stderr, flush=True)
        reference = reference or digest
        if digest != reference:
            raise SystemExit(f"{stage} {MODES[mode]} wrote other bytes: {digest} != {reference}")
        if keep and mode == modes[-1]:
            os.replace(folder, target)
        else:
            shutil.rmtree(folder)
    return runs


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def cold_queries(home: Path, asked: list[str], where: list[str]) -> float:
    """Median wall seconds of ``episteme query`` as a new process per question."""
    walls = []
    for question in asked:
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "episteme_core", "--home", str(home), "query", "--term",
                        question, "--json", *where], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=True, env=CHILD_ENV)
        walls.append(time.perf_counter() - started)
    return statistics.median(walls)


@attrs.frozen
class Warm:
    """Warm in-process shard search: wall and CPU seconds per question (3 rounds)."""

    walls: list[float]
    cpus: list[float]


def warm(searched: Any, asked: list[str]) -> Warm:
    walls, cpus = [], []
    for _ in range(3):
        for question in asked:
            wall, cpu = time.perf_counter(), time.process_time()
            searched.search(question, 10)
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
    return Warm(walls, cpus)


def fanout_costs(shards: Any, asked: list[str], hosts: int) -> dict[str, float]:
    """What a fanned-out top-10 query costs besides the round trip, as ``FannedShards.search`` builds
    it: the mean bytes sent to the workers (the task, ``pack``ed once per worker) and got back (each
    worker's pickled answers, one batch per worker, shard i on worker i mod ``hosts``; Dask's framing
    not counted), the median CPU seconds of the idf step here, and the median CPU seconds a worker
    spends per shard (``ranked`` without the local score floor)."""
    from episteme_core.executor.worker import pack
    from episteme_core.search.fanout import ranked_on_shard

    out, back, idfs, per_shard = [], [], [], []
    for question in asked:
        terms = shards.terms(question)
        searched = list(shards.shards)
        options = dict(shards.rank_options(terms, searched)) if hasattr(shards, "rank_options") else {}
        options.pop("floor", None)
        started = time.process_time()
        idf = shards.idf(terms, searched) if len(searched) > 1 else None
        idfs.append(time.process_time() - started)
        args = (terms, 10, None, (), idf, options)
        task, payload = pack(ranked_on_shard, args)
        out.append(hosts * (len(task) + len(payload)))
        started = time.process_time()
        answers = [ranked_on_shard(shard, *args) for shard in searched]
        per_shard.append((time.process_time() - started) / len(searched))
        back.append(sum(len(pickle.dumps(answers[host::hosts])) for host in range(hosts)))
    return {"out": statistics.mean(out), "back": statistics.mean(back), "idf": statistics.median(idfs),
            "ranked": statistics.median(per_shard)}


def query_rows(home: Path, asked: list[str], cluster: DaskProcesses) -> dict[str, Any]:
    from episteme_core.bm25.shards import open_shards
    from episteme_core.executor.cluster import DaskExecutor
    from episteme_core.search.fanout import fanned
    from episteme_core.store.home import Home

    where = ["--executor", f"dask://{cluster.address}"]
    cold_queries(home, asked[:2], [])  # the bytecode cache and the page cache of the vocabularies
    found: dict[str, Any] = {"cold local": cold_queries(home, asked, []),
                             "cold dask": cold_queries(home, asked, where)}
    shards = open_shards(Home(home))
    for question in asked:
        shards.search(question, 10)  # warm: every block these questions read is touched once
    found["shards"] = len(shards.shards)
    found["warm local"] = warm(shards, asked)
    executor = DaskExecutor(cluster.address)
    try:
        spread = fanned(shards, executor)
        for question in asked:
            if spread.search(question, 10) != shards.search(question, 10):
                raise SystemExit(f"Dask answered {question!r} otherwise than this process")
        found["warm dask"] = warm(spread, asked)
    finally:
        executor.close()
    found["fanout"] = fanout_costs(shards, asked, len(cluster.workers))
    return found


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms"


def mib(value: float) -> str:
    return f"{value:,.0f} MiB"


def report(chunks: int, corpus_s: float | None, runs: dict[str, list[Run]],
           queries: dict[str, Any], asked: int, loads: dict[str, str]) -> None:
    print(f"Machine: {platform.machine()}, {os.cpu_count()} CPU(s), {platform.platform()}, Python "
          f"{platform.python_version()}\n")
    written = "written earlier" if corpus_s is None else f"written in {corpus_s:.0f} s in process"
    print(f"{chunks:,} chunks (the synthetic corpus of bench/retrieval.py; documents {written}), each "
          f"command a new process; {loads['build']}:\n")
    print("| step | how | wall | CPU: command / workers | peak RSS, command "
          "| peak RSS, workers | output |")
    print("|---|---|---:|---:|---:|---:|---|")
    for stage, rows in runs.items():
        for mode, measured, (digest, files, size) in rows:
            workers = ("–" if not measured.worker_mib else
                       ", ".join(mib(w) for w in measured.worker_mib[:2])
                       + f" (largest of {len(measured.worker_mib)} processes)")
            first = (mode, measured) == rows[0][:2]
            same = (f"{files:,} files, {size / MIB:,.0f} MiB, sha256 {digest[:12]}" if first
                    else "the same bytes")
            print(f"| `{stage}` | {mode} | {measured.wall:.1f} s | "
                  f"{measured.cpu:.1f} s / {measured.worker_cpu:.1f} s | "
                  f"{mib(measured.command_mib)} | {workers} | {same} |")
    shards = queries["shards"]
    local, spread = queries["warm local"], queries["warm dask"]
    print(f"\nQuery latency, {shards} shards, {asked} questions of 1-3 words, top 10; {loads['query']}:\n")
    print("| query | median | p90 |")
    print("|---|---:|---:|")
    print(f"| cold CLI `query` (new process), local | {ms(queries['cold local'])} | – |")
    print(f"| cold CLI `query --executor dask://` (new process, new client) | "
          f"{ms(queries['cold dask'])} | – |")
    print(f"| warm shard search in process, local | {ms(statistics.median(local.walls))} | "
          f"{ms(percentile(local.walls, 0.9))} |")
    print(f"| warm shard search fanned out to the 2 Dask workers | {ms(statistics.median(spread.walls))} | "
          f"{ms(percentile(spread.walls, 0.9))} |")
    costs = queries["fanout"]
    out, back = costs["out"], costs["back"]
    index = {mode: measured for mode, measured, _ in runs["index"]}
    _, files, size = runs["index"][0][2]
    print("\nPer-shard figures (for the 100M-chunk model of docs/scaling.md):\n")
    print("| figure | measured |")
    print("|---|---:|")
    print(f"| shards | {shards} (of up to 50,000 chunks) |")
    print(f"| MiB per shard on disk | {size / MIB / shards:.0f} |")
    for mode, measured in index.items():
        print(f"| build CPU per shard, {mode} (command + workers) | "
              f"{(measured.cpu + measured.worker_cpu) / shards:.2f} s |")
    for mode, measured in index.items():
        print(f"| build wall per shard, {mode} | {measured.wall / shards:.2f} s |")
    per_shard = statistics.median(local.cpus) / shards
    print(f"| warm search CPU per shard, local (median) | {per_shard * 1e3:.2f} ms |")
    print(f"| a worker's CPU per shard per query (`ranked`, no score floor; median) | "
          f"{costs['ranked'] * 1e3:.2f} ms |")
    print(f"| the idf step here, over every shard (median CPU) | {costs['idf'] * 1e3:.2f} ms "
          f"({costs['idf'] / shards * 1e3:.3f} ms per shard) |")
    print(f"| bytes out per fanned-out query (task, once per worker, 2 workers) | {out:,.0f} B |")
    print(f"| bytes back per fanned-out query (top 10 of each shard, pickled) | {back:,.0f} B "
          f"({back / shards:,.0f} B per shard) |")


def build(options: argparse.Namespace) -> None:
    modes = options.modes.split(",")
    if not modes or any(mode not in MODES for mode in modes):
        raise SystemExit(f"--modes: a comma-separated list of {', '.join(MODES)}")
    home = Path(options.dir) / f"home-{options.chunks}"
    corpus_s = None
    if not home.exists():
        print(f"writing {options.chunks:,} chunks' documents ({load()})", file=sys.stderr, flush=True)
        corpus_s = write_corpus(home, options.chunks)
        if options.documents_only:
            print(f"{home}: documents written in {corpus_s:.0f} s")
            return
    elif sorted(p.name for p in home.iterdir()) != ["documents"]:
        raise SystemExit(f"{home} holds more than documents: delete it or choose another --dir")
    asked = questions(options.questions)
    loads: dict[str, str] = {}
    cluster = None
    try:
        cluster = DaskProcesses(2)
        loads["build"] = f"{load()} before the builds"
        runs = {"chunk": stage_runs(home, "chunk", cluster, modes)}
        if options.drop_documents:
            shutil.rmtree(home / "documents")  # the index and queries read chunks and shards only
        runs["index"] = stage_runs(home, "index", cluster, modes[:1])
        loads["query"] = load()
        queries = query_rows(home, asked, cluster)
        print(json.dumps({"queries": {k: [statistics.median(v.walls), percentile(v.walls, 0.9)]
                                      if isinstance(v, Warm) else v for k, v in queries.items()}}),
              file=sys.stderr, flush=True)
        if modes[1:]:
            shutil.rmtree(home / "shards")  # queried: the disk then holds one set of shards at a time
            runs["index"] += stage_runs(home, "index", cluster, modes[1:], runs["index"][0][2])
        loads["build"] += f", {load()} after"
    finally:
        if cluster is not None:
            cluster.close()
        if not options.keep:
            shutil.rmtree(home, ignore_errors=True)
    report(options.chunks, corpus_s, runs, queries, len(asked), loads)


def add_parser(parts: Any) -> None:
    """Register ``build`` on ``bench/scale.py``'s subcommands."""
    one = parts.add_parser("build", help="chunk, index and query N chunks: serial vs local pool vs Dask")
    one.add_argument("--chunks", type=int, default=20_000)
    one.add_argument("--dir", default="/tmp/scalebench",
                     help="where the home is written (default %(default)s)")
    one.add_argument("--questions", type=int, default=20)
    one.add_argument("--keep", action="store_true", help="keep the home (DIR/home-N) afterwards")
    one.add_argument("--modes", default="serial,pool,dask",
                     help="which builds, in this order (default %(default)s); the query rows run on the "
                          "first one's shards, before the other index builds")
    one.add_argument("--documents-only", action="store_true",
                     help="write the documents into DIR/home-N and stop; a later run reuses them")
    one.add_argument("--drop-documents", action="store_true",
                     help="delete the documents once chunked (the index and queries do not read them): "
                          "5M chunks then fit in about 21 GB of disk, not 27")
    one.set_defaults(run=build)

