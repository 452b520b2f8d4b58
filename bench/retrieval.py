"""Retrieval benchmark: chunk, index and query a synthetic corpus; raw bm25s on the same tokens beside it.

    python bench/retrieval.py                 # 20,000 chunks (chunk < 1 s, index < 2 s, query < 150 ms)
    python bench/retrieval.py --chunks 1000000 --cold-runs 5 --keep DIR
    python bench/retrieval.py --queries-only DIR   # the query rows again on the home a --keep run left

Prints a Markdown table for docs/benchmarks.md: chunking, index build, cold CLI query (a new
process, median), warm query (median of 50), peak RSS of a cold query, index size on disk, and
bm25s alone (index from tokens, warm retrieve) with the overhead ratio.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "be", "da", "fu", "go", "hi", "ju", "ze")
TARGETS_20K = {"chunk": 1.0, "index": 2.0, "cold": 0.150}


def vocabulary(size: int, rng: random.Random) -> list[str]:
    words = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def make_corpus(chunks: int, seed: int = 1) -> tuple[list, list[str]]:  # type: ignore[type-arg]
    """Documents of 100 sections of one ~600-character paragraph each: one chunk per section."""
    documents: list = []  # type: ignore[type-arg]
    words: list[str] = []
    for batch, batch_words in corpus_batches(chunks, seed):
        documents.extend(batch)
        words = batch_words
    return documents, words


def corpus_batches(chunks: int, seed: int = 1, batch_docs: int = 500, per_doc: int = 100,  # type: ignore[no-untyped-def]
                   words_per_chunk: int = 90):
    """``make_corpus`` in batches of ``batch_docs`` documents (same documents, bounded memory);
    ``per_doc`` sections of ``words_per_chunk`` words each."""
    from episteme_core.records.evidence import Block, Document, Provenance, Section, Span, seal

    rng = random.Random(seed)
    words = vocabulary(20_000, rng)
    weights = [1.0 / (rank + 1) for rank in range(len(words))]  # Zipf-like
    cumulative = list(itertools.accumulate(weights))  # what choices(weights=) builds on every call
    documents = []
    for d in range(-(-chunks // per_doc)):
        sections = []
        for s in range(min(per_doc, chunks - d * per_doc)):
            text = " ".join(rng.choices(words, cum_weights=cumulative, k=words_per_chunk)) + "."
            heading = " ".join(rng.choices(words, cum_weights=cumulative, k=3))
            block = Block(id=f"p{s}", kind="paragraph", text=text, section_id=f"s{s}", anchor=f"s{s}",
                          span=Span(0, len(text)))
            sections.append(Section(id=f"s{s}", heading=heading, path=[heading], blocks=[block]))
        sha = f"{d:064x}"
        documents.append(seal(Document(
            id="", source=f"https://bench.example/{d}", source_kind="http", snapshot_id=sha,
            source_sha256=sha,
            content_type="text/plain", document_type="spec", family="generic", authority="normative",
            title=f"doc {d}", status="ok", sections=sections,
            provenance=Provenance("episteme", "0", "text", "1", "generic", "1", sha, sha),
            url=f"https://bench.example/{d}",
        )))
        if len(documents) == batch_docs:
            yield documents, words
            documents = []
    if documents:
        yield documents, words


# Children run as on an installed system: with bytecode caches (a test environment may forbid them).
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def wall_of(cmd: list[str]) -> float:
    """Wall seconds of one new process."""
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=CHILD_ENV)
    return time.perf_counter() - start


RSS_PROBE = (
    "import sys\n"
    "from episteme_core.cli.main import run\n"
    "code = run(sys.argv[1:])\n"
    "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1]\n"
    "sys.stderr.write('RSS %s\\n' % hwm)\n"
    "sys.exit(code)\n"
)


def rss_of(args: list[str]) -> int:
    """Peak RSS (KiB) of a CLI run: VmHWM of the new process image (the parent's pages do not count)."""
    out = subprocess.run([sys.executable, "-c", RSS_PROBE, *args], capture_output=True, text=True, check=True,
                         env=CHILD_ENV)
    return int(out.stderr.strip().splitlines()[-1].split()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--cold-runs", type=int, default=10)
    parser.add_argument("--keep", metavar="DIR", help="build the home here and keep it")
    parser.add_argument("--queries-only", metavar="DIR",
                        help="measure only the queries, on the home a --keep run left in DIR")
    parser.add_argument("--one-chunk-docs", type=int, metavar="WORDS",
                        help="only the warm queries, on --chunks documents of one WORDS-word chunk each")
    args = parser.parse_args()
    if args.queries_only:
        queries_only(Path(args.queries_only) / "home", args)
        return
    if args.one_chunk_docs:
        one_chunk_docs(args)
        return

    from episteme_core.bm25.build import BM25_DEFAULTS, bm25_matrix
    from episteme_core.bm25.fields import document_tokens
    from episteme_core.bm25.shards import open_shards
    from episteme_core.bm25.writer import index_home
    from episteme_core.chunking.paragraph import ParagraphChunker
    from episteme_core.chunking.run import chunk_home
    from episteme_core.chunking.window import WindowChunker
    from episteme_core.search.query import query
    from episteme_core.stages.chunks import iter_chunk_objects
    from episteme_core.stages.documents import write_documents
    from episteme_core.store.home import Home
    from episteme_core.text.analyzer import query_terms
    from episteme_core.text.analyzer import vocabulary as analyzer_vocabulary

    workdir = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="episteme-bench-"))
    shutil.rmtree(workdir / "home", ignore_errors=True)
    home = Home(workdir / "home")
    home.root.mkdir(parents=True)
    words: list[str] = []
    for batch, batch_words in corpus_batches(args.chunks):
        write_documents(home, batch)
        words = batch_words
    del batch

    def timed(fn):  # type: ignore[no-untyped-def]
        wall, cpu = time.perf_counter(), time.process_time()
        result = fn()
        return result, time.perf_counter() - wall, time.process_time() - cpu

    report, chunk_s, chunk_cpu = timed(lambda: chunk_home(
        home, [ParagraphChunker(), WindowChunker()], max_chars=6000, overlap_chars=400))
    assert report.chunks == args.chunks, report

    import bm25s  # noqa: F401  (import cost is not index time: measured apart below)

    _, index_s, index_cpu = timed(lambda: index_home(home))

    # Raw bm25s on the same tokens, over the same shards (chunks sorted by id, shard_size per shard).
    rows = [(r["id"], r["heading"], r["text"]) for body in iter_chunk_objects(home) for r in body["chunks"]]
    rows.sort()
    shard_size = open_shards(home).meta["shardSize"]
    tokenize_s = raw_index_s = ours_matrix_s = bm25s_matrix_s = 0.0
    raws = []
    for start in range(0, len(rows), shard_size):
        t = time.perf_counter()
        tokens = [document_tokens(heading, text, 2) for _, heading, text in rows[start : start + shard_size]]
        tokenize_s += time.perf_counter() - t
        t = time.perf_counter()
        raw = bm25s.BM25()
        raw.index(tokens, show_progress=False)
        raw_index_s += time.perf_counter() - t
        raws.append((raw, rows[start][0]))
        # the BM25 matrix alone from the same sorted vocabulary: ours (numpy) and bm25s's loop
        vocab = analyzer_vocabulary(tokens)
        ids = dict(zip(vocab, range(len(vocab)), strict=True))
        corpus = [[ids[w] for w in doc] for doc in tokens]
        t = time.perf_counter()
        bm25_matrix(tokens, BM25_DEFAULTS)
        ours_matrix_s += time.perf_counter() - t
        t = time.perf_counter()
        bm25s.BM25().index((corpus, ids), create_empty_token=False, show_progress=False)
        bm25s_matrix_s += time.perf_counter() - t
        del tokens, corpus
    del rows

    rng = random.Random(99)
    questions = [" ".join(rng.choices(words[:2000], k=rng.randint(1, 3))) for _ in range(args.queries)]
    shard_set = open_shards(home)
    search_times, query_times, open_times, raw_times = [], [], [], []
    for q in questions:
        t = time.perf_counter()
        shard_set.search(q, 10)
        search_times.append(time.perf_counter() - t)
        t = time.perf_counter()
        query(home, q, limit=10)
        query_times.append(time.perf_counter() - t)
        t = time.perf_counter()
        query(home, q, limit=10, shard_set=shard_set)
        open_times.append(time.perf_counter() - t)
        terms = query_terms(q)
        t = time.perf_counter()
        for raw, _ in raws:  # every shard, as ours: k clamped to its size, then merged
            docs, scores = raw.retrieve([terms], k=min(10, raw.scores["num_docs"]), show_progress=False)
        raw_times.append(time.perf_counter() - t)

    py = sys.executable
    cli = ["--home", str(home.root), "query", "--term"]
    wall_of([py, "-m", "episteme_core", *cli, "warm up the bytecode cache"])
    cold = [wall_of([py, "-m", "episteme_core", *cli, questions[i % len(questions)], "--json"])
            for i in range(args.cold_runs)]
    rss = [rss_of([*cli, q, "--json"]) for q in questions[:3]]
    # The index as one file: write it (a new process: the index is up to date, so this is the bundle),
    # then query it cold (the tar memory-mapped) and from its artifact JSON (held in memory).
    bundle = workdir / "index.tar"
    out_s = wall_of([py, "-m", "episteme_core", "--home", str(home.root), "index", "--out", str(bundle)])
    inline = subprocess.run([py, "-m", "episteme_core", "--home", str(home.root), "--json", "index", "--out",
                             "-"], capture_output=True, check=True, env=CHILD_ENV).stdout
    artifact_json = workdir / "index.json"
    artifact_json.write_text(json.dumps(json.loads(inline)["data"]["artifact"]))
    del inline
    from_file = [rss_of(["query", "--term", q, "--index", str(bundle), "--json"]) for q in questions[:3]]
    cold_file = [wall_of([py, "-m", "episteme_core", "query", "--term", questions[i % len(questions)],
                          "--index", str(bundle), "--json"]) for i in range(args.cold_runs)]
    from_json = rss_of(["query", "--term", questions[0], "--index", str(artifact_json), "--json"])
    python_s = statistics.median(wall_of([py, "-c", "pass"]) for _ in range(5))
    help_s = statistics.median(wall_of([py, "-m", "episteme_core", "--help"]) for _ in range(5))
    bm25s_import = statistics.median(wall_of([py, "-c", "import bm25s"]) for _ in range(3))
    size = sum(p.stat().st_size for p in (home.root / "shards").rglob("*") if p.is_file())

    med = statistics.median
    print(f"Machine: {platform.machine()}, {os.cpu_count()} CPU(s), {platform.platform()}, "
          f"Python {platform.python_version()}, bm25s {bm25s.__version__}")
    print(f"Corpus: {args.chunks:,} synthetic chunks (~600 characters, Zipf vocabulary of 20,000 words), "
          f"{len(shard_set.shards)} shard(s)\n")
    print("| measure | episteme | raw bm25s | ratio | target |")
    print("|---|---:|---:|---:|---:|")
    target = TARGETS_20K if args.chunks == 20_000 else {"chunk": None, "index": 180.0, "cold": 0.5}

    def fmt(v: float | None, unit: str = "s") -> str:
        if v is None:
            return "–"
        return f"{v * 1000:.1f} ms" if unit == "ms" else f"{v:.2f} s"

    print(f"| chunking (cpu {chunk_cpu:.2f} s) | {fmt(chunk_s)} | – | – | {fmt(target['chunk'])} |")
    print(f"| index build: read chunks, analyze, BM25, write (cpu {index_cpu:.2f} s) | {fmt(index_s)} | "
          f"{fmt(raw_index_s)} (from tokens) | {index_s / raw_index_s:.2f}x | {fmt(target['index'])} |")
    print(f"| of which: analyzer over all chunks | {fmt(tokenize_s)} | – | – | – |")
    print(f"| of which: BM25 matrix from tokens, same sorted vocabulary (numpy / bm25s) | "
          f"{fmt(ours_matrix_s)} | {fmt(bm25s_matrix_s)} | {ours_matrix_s / bm25s_matrix_s:.2f}x | – |")
    print(f"| warm query: shard search, top 10 (median of {len(questions)}) | "
          f"{fmt(med(search_times), 'ms')} | "
          f"{fmt(med(raw_times), 'ms')} | {med(search_times) / med(raw_times):.2f}x | – |")
    print(f"| warm query: library `query()` given no set (shards kept open between calls) | "
          f"{fmt(med(query_times), 'ms')} | – | – | – |")
    print(f"| warm query: library `query()` on open shards (as the MCP server keeps them) | "
          f"{fmt(med(open_times), 'ms')} | – | – | – |")
    print(f"| cold CLI query, new process (median of {len(cold)}) | {fmt(med(cold), 'ms')} | – | – | "
          f"{fmt(target['cold'], 'ms')} |")
    print(f"| baseline: `python -c pass` / `episteme --help` / `import bm25s` | {fmt(python_s, 'ms')} / "
          f"{fmt(help_s, 'ms')} / {fmt(bm25s_import, 'ms')} | – | – | – |")
    print(f"| peak RSS of a cold query | {max(rss) / 1024:.0f} MiB | – | – | 1024 MiB (1M) |")
    print(f"| index size on disk | {size / 1024 / 1024:.1f} MiB | – | – | – |")
    print(f"| `index --out FILE` (up to date: the tar of {bundle.stat().st_size / 1024 / 1024:.1f} MiB), new "
          f"process | {fmt(out_s)} | – | – | – |")
    print(f"| cold CLI query from the index file (`--index FILE`, mapped; median of {len(cold_file)}) | "
          f"{fmt(med(cold_file), 'ms')} | – | – | – |")
    json_mib = artifact_json.stat().st_size / 1024 / 1024
    print(f"| peak RSS: query `--index FILE` / `--index ARTIFACT.json` ({json_mib:.0f} MiB) | "
          f"{max(from_file) / 1024:.0f} MiB / {from_json / 1024:.0f} MiB | – | – | 512 MiB |")
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)


def warm_rows(home, questions: list[str]) -> list[tuple[str, float, float]]:  # type: ignore[no-untyped-def]
    """(measure, median wall seconds, median CPU seconds) of the warm query paths, 3 rounds of
    ``questions`` after one round that touches (and verifies) the blocks they read."""
    from episteme_core.bm25.shards import open_shards
    from episteme_core.search.query import query

    shard_set = open_shards(home)
    for q in questions:
        query(home, q, limit=10, shard_set=shard_set)
    paths = {
        "warm query: shard search, top 10": lambda q: shard_set.search(q, 10),
        "warm query: library `query()` on open shards (as the MCP server keeps them)":
            lambda q: query(home, q, limit=10, shard_set=shard_set),
        "warm query: library `query()` given no set (the shards kept open between calls)":
            lambda q: query(home, q, limit=10),
    }
    rows = []
    for name, run in paths.items():
        walls, cpus = [], []
        for _ in range(3):
            for q in questions:
                wall, cpu = time.perf_counter(), time.process_time()
                run(q)
                walls.append(time.perf_counter() - wall)
                cpus.append(time.process_time() - cpu)
        rows.append((name, statistics.median(walls), statistics.median(cpus)))
    return rows


def one_chunk_docs(args: argparse.Namespace) -> None:
    """The warm query rows (numpy imported, as in a server) on ``--chunks`` documents of one chunk of
    ``--one-chunk-docs`` words each: what a query costs beside the ranking (its fixed costs)."""
    import numpy  # noqa: F401  (a warm process has it: the server, a second query)

    from episteme_core.bm25.writer import index_home
    from episteme_core.chunking.paragraph import ParagraphChunker
    from episteme_core.chunking.run import chunk_home
    from episteme_core.chunking.window import WindowChunker
    from episteme_core.stages.documents import write_documents
    from episteme_core.store.home import Home

    workdir = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="episteme-bench-"))
    home = Home(workdir / "home")
    words: list[str] = []
    if not (home.root / "shards").exists():
        shutil.rmtree(home.root, ignore_errors=True)
        home.root.mkdir(parents=True)
        for batch, batch_words in corpus_batches(args.chunks, per_doc=1, words_per_chunk=args.one_chunk_docs):
            write_documents(home, batch)
            words = batch_words
        chunk_home(home, [ParagraphChunker(), WindowChunker()], max_chars=6000, overlap_chars=400)
        index_home(home)
    else:
        words = next(w for _, w in corpus_batches(1))
    rng = random.Random(99)
    questions = [" ".join(rng.choices(words[:2000], k=rng.randint(1, 3))) for _ in range(args.queries)]
    print(f"{args.chunks:,} documents of one chunk of {args.one_chunk_docs} words; {len(questions)} queries "
          f"of 1-3 words from the 2,000 commonest, 3 rounds after one\n")
    print("| measure | median wall | median CPU |")
    print("|---|---:|---:|")
    for name, wall, cpu in warm_rows(home, questions):
        print(f"| {name} | {wall * 1000:.2f} ms | {cpu * 1000:.2f} ms |")
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)


def queries_only(home_root: Path, args: argparse.Namespace) -> None:
    """The query rows on an existing home (built by a --keep run): warm paths (numpy imported, as in a
    server), the cold CLI query and its peak RSS."""
    import numpy  # noqa: F401  (a warm process has it: the server, a second query)

    from episteme_core.store.home import Home

    home = Home(home_root)
    words: list[str] = []
    for _, batch_words in corpus_batches(100):
        words = batch_words
    rng = random.Random(99)
    questions = [" ".join(rng.choices(words[:2000], k=rng.randint(1, 3))) for _ in range(args.queries)]
    rows = warm_rows(home, questions)
    py = sys.executable
    cli = ["--home", str(home.root), "query", "--term"]
    wall_of([py, "-m", "episteme_core", *cli, "warm up the bytecode cache"])
    cold = [wall_of([py, "-m", "episteme_core", *cli, questions[i % len(questions)], "--json"])
            for i in range(args.cold_runs)]
    rss = [rss_of([*cli, q, "--json"]) for q in questions[:3]]
    print(f"Machine: {platform.machine()}, {os.cpu_count()} CPU(s), Python {platform.python_version()}; "
          f"home {home.root}; {len(questions)} queries of 1-3 words from the 2,000 commonest\n")
    print("| measure | median wall | median CPU |")
    print("|---|---:|---:|")
    for name, wall, cpu in rows:
        print(f"| {name} | {wall * 1000:.1f} ms | {cpu * 1000:.1f} ms |")
    cold_ms = statistics.median(cold) * 1000
    print(f"| cold CLI query, new process (median of {len(cold)}) | {cold_ms:.0f} ms | – |")
    print(f"| peak RSS of a cold query | {max(rss) / 1024:.0f} MiB | – |")


if __name__ == "__main__":
    main()
