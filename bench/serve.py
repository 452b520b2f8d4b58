"""Serve benchmark: ``tools/call`` latency of ``query`` and ``ask`` through ``episteme serve`` at 1, 4 and
16 concurrent clients over loopback, beside the cold CLI latency of the same calls.

    python bench/serve.py                      # 20,000 chunks (target: warm query p50 <= 10 ms)
    python bench/serve.py --chunks 1000000     # (target: warm query p50 <= 60 ms)

Builds the synthetic corpus of bench/retrieval.py (documents of ~600-character paragraphs, a Zipf
vocabulary), starts ``episteme serve --port 0`` on it, and has each client (a thread with its own
keep-alive HTTP connection) post JSON-RPC ``tools/call`` requests with random one- to three-word
queries. Latency is measured at the client, from sending the request to the parsed reply. The
clients run in this process, so at 16 clients they compete with the server for the CPUs. Prints a
Markdown table for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from retrieval import CHILD_ENV, corpus_batches, wall_of  # noqa: E402

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
TARGETS = {20_000: 0.010, 1_000_000: 0.060}


def build(home_root: Path, chunks: int) -> list[str]:
    """The home with ``chunks`` synthetic chunks, indexed; returns the vocabulary."""
    from episteme_core.bm25.writer import index_home
    from episteme_core.chunking.paragraph import ParagraphChunker
    from episteme_core.chunking.run import chunk_home
    from episteme_core.chunking.window import WindowChunker
    from episteme_core.stages.documents import write_documents
    from episteme_core.store.home import Home

    home = Home(home_root)
    home_root.mkdir(parents=True)
    words: list[str] = []
    for batch, batch_words in corpus_batches(chunks):
        write_documents(home, batch)
        words = batch_words
    chunk_home(home, [ParagraphChunker(), WindowChunker()], max_chars=6000, overlap_chars=400)
    index_home(home)
    return words


def start(home: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "episteme_core", "--home", str(home), "serve", "--port", "0",
         "--max-inflight", "64"],
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=CHILD_ENV,
    )
    assert proc.stderr is not None
    for line in proc.stderr:
        found = re.search(r"listening on (http://\S+/mcp)", line)
        if found:
            threading.Thread(target=lambda: [None for _ in proc.stderr or ()], daemon=True).start()
            return proc, found.group(1)
    raise SystemExit(f"episteme serve did not start (exit {proc.wait()})")


def call_body(tool: str, question: str, n: int) -> bytes:
    arguments = {"term": question, "limit": 10} if tool == "query" else {"question": question}
    return json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                       "params": {"name": tool, "arguments": arguments}}).encode()


def run_clients(url: str, tool: str, clients: int, calls: int,
                questions: list[str]) -> tuple[list[float], float]:
    """Per-call latencies (seconds) of ``clients`` concurrent clients making ``calls`` calls each."""
    import socket

    import httpx

    # httpx writes a request's head and body separately: without TCP_NODELAY, Nagle holds the body
    # until the server's delayed ACK (40 ms on Linux), which would be measured as server latency.
    nodelay = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]

    def client(c: int) -> list[float]:
        times = []
        with httpx.Client(timeout=300, transport=httpx.HTTPTransport(socket_options=nodelay)) as http:
            http.post(url, content=call_body(tool, questions[c], 0), headers=HEADERS)  # connect, warm
            for i in range(calls):
                body = call_body(tool, questions[(c * calls + i) % len(questions)], i)
                started = time.perf_counter()
                reply = http.post(url, content=body, headers=HEADERS)
                result = reply.json()["result"]
                times.append(time.perf_counter() - started)
                if result.get("isError"):
                    raise SystemExit(f"{tool} failed: {result['content'][0]['text']}")
        return times

    started = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        results = list(pool.map(client, range(clients)))
    return [t for times in results for t in times], time.perf_counter() - started


def sdk_client(url: str, calls: int, questions: list[str]) -> list[float]:
    """Latencies of ``query`` calls through the SDK's own client (``mcp.Client``), one session."""
    import anyio
    from mcp import Client

    async def go() -> list[float]:
        times = []
        async with Client(url) as client:
            await client.call_tool("query", {"term": questions[0], "limit": 10})
            for i in range(calls):
                started = time.perf_counter()
                await client.call_tool("query", {"term": questions[i % len(questions)], "limit": 10})
                times.append(time.perf_counter() - started)
        return times

    return anyio.run(go)


def p95(times: list[float]) -> float:
    return statistics.quantiles(times, n=20)[-1] if len(times) >= 2 else times[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--calls", type=int, default=40, help="calls per client")
    parser.add_argument("--cold-runs", type=int, default=5)
    parser.add_argument("--keep", metavar="DIR", help="build the home here and keep it (reused if present)")
    args = parser.parse_args()

    workdir = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="episteme-bench-serve-"))
    home = workdir / "home"
    built = time.perf_counter()
    if not (home / "shards" / "index.json").exists():
        shutil.rmtree(home, ignore_errors=True)
        words = build(home, args.chunks)
    else:
        words = []
        for _, batch_words in corpus_batches(min(args.chunks, 100)):
            words = batch_words
    built = time.perf_counter() - built
    rng = random.Random(7)
    questions = [" ".join(rng.choices(words[:2000], k=rng.randint(1, 3))) for _ in range(400)]

    proc, url = start(home)
    rows = []
    try:
        for tool in ("query", "ask"):
            for clients in (1, 4, 16):
                calls = args.calls if tool == "query" or args.chunks <= 100_000 else max(5, args.calls // 4)
                times, wall = run_clients(url, tool, clients, calls, questions)
                rate = len(times) / wall
                rows.append((tool, clients, len(times), statistics.median(times), p95(times), rate))
        sdk = sdk_client(url, args.calls, questions)
    finally:
        proc.terminate()
        proc.wait(60)

    py = sys.executable
    cold = {}
    for tool in ("query", "ask"):
        runs = []
        for i in range(args.cold_runs):
            q = questions[i]
            cli = ["query", "--term", q, "--limit", "10"] if tool == "query" else ["ask", q]
            runs.append(wall_of([py, "-m", "episteme_core", "--home", str(home), "--json", *cli]))
        cold[tool] = (statistics.median(runs), p95(runs), len(runs))

    from episteme_core.bm25.shards import open_shards
    from episteme_core.store.home import Home

    shards = len(open_shards(Home(home)).shards)
    print(f"Machine: {platform.machine()}, {os.cpu_count()} CPU(s), {platform.platform()}, "
          f"Python {platform.python_version()}")
    print(f"Corpus: {args.chunks:,} synthetic chunks in {shards} shard(s) (built in {built:.0f} s); "
          f"queries of 1–3 words from the 2,000 commonest; ask with the bm25 reader\n")
    target = TARGETS.get(args.chunks)
    print("| call | clients | calls | p50 | p95 | calls/s | target (p50) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for tool, clients, n, median, high, rate in rows:
        goal = f"{target * 1000:.0f} ms" if tool == "query" and target else "–"
        print(f"| `{tool}` tools/call | {clients} | {n} | {median * 1000:.1f} ms | {high * 1000:.1f} ms | "
              f"{rate:.0f} | {goal} |")
    print(f"| `query` through the SDK's client (`mcp.Client`, one session) | 1 | {len(sdk)} | "
          f"{statistics.median(sdk) * 1000:.1f} ms | {p95(sdk) * 1000:.1f} ms | – | – |")
    for tool, (median, high, n) in cold.items():
        print(f"| cold CLI `episteme {tool}` (new process) | 1 | {n} | {median * 1000:.1f} ms | "
              f"{high * 1000:.1f} ms | {1 / median:.1f} | – |")
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
