"""Retrieval quality on the dev question set: episteme's `query` and `ask` beside a plain bm25s script.

Builds one home from the files of ``../shared/corpus`` through the CLI (specs, RFCs and PDFs with
`pipeline --map`, the books with `ingest books`, the Claude transcripts with `ingest claude`), asks
every question of ``../shared/eval/dev-questions.jsonl`` through the CLI (`query --json` and `ask
--json`), and prints hit@1, hit@5, hit@10 and MRR overall, per kind, per difficulty and per half
(questions of even and of odd number: a change is kept only when it hurts neither) for:

- `query`, whole result: the result's text (a chunk, or a run of paragraphs for records) holds an
  answer phrase (asked with the largest `--max-chars`, so the snippet is the whole text);
- `query`, default snippet: the snippet that `--max-chars 1200` shows holds it;
- `ask`: a paragraph of the answer holds it, cited at the question's file (its own place, or one of
  the places its identical text is also at, ``alsoAt``) (rank = the place of that paragraph in the
  order readers named them, ``priority``); the answer's characters and paragraphs are averaged per
  group. `ask` offers Claude's tool output (where most answers of the chat questions are),
  `ask --exclude-marked` prose only, `ask --include-marked` every marked paragraph (thinking,
  summaries, a book's contents);
- the plain-bm25s baseline of ``../shared/eval/baseline.py`` (6,000-char windows, English stemmer,
  stop words), computed in the same run from the same files.

With ``--reader onnx --model DIR`` (plugin episteme-onnx and a sentence-embedding model directory),
`ask` is asked once with the bm25 reader and once with an onnx reader written into the home's
config.json (rows ``... [onnx]``), and `query`'s whole results are reranked by the plugin's
``rerank`` (the rule the kernel's `query --rerank onnx` is to use; row ``query (whole) [onnx]``).
CPU seconds and wall seconds per `ask` are printed per reader, and the process's peak RSS.

Hit rule (the eval set's): a passage of the question's own file whose text, whitespace collapsed,
contains one of the question's phrases; a PDF question's phrase also counts with every whitespace
removed (its phrases are pdfplumber's text, which glues table cells' words that episteme splits).
The test suite never reads ``../shared``; this script does.

``--questions FILE`` asks another set over the same corpus instead: ``bench/questions/second-set.jsonl``
(40 questions, s01-s40, written from the documents alone, apart from the tuning) checks that a change
kept on the dev set also holds on questions it was not tuned on; ``bench/questions/third-set.jsonl``
(t01-t40, written the same way later) is a third such check.

    python bench/quality.py [--corpus DIR] [--eval DIR] [--questions FILE] [--home DIR] [--reuse]
                            [--json FILE] [--processes] [--no-baseline] [--no-ask]
                            [--reader onnx --model DIR [--weight W]]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
KINDS = ("spec", "rfc", "pdf", "book", "chat")
KS = (1, 5, 10)
DEFAULT_SHARED = HERE.parents[1] / "shared"
# Each file gets a URL on its publisher's host, as a user capturing it would, so that the families
# (w3c, whatwg, rfc) apply as they do in real use.
HOSTS = {"w3c-": "https://www.w3.org/TR/", "whatwg-": "https://url.spec.whatwg.org/",
         "rfc": "https://www.rfc-editor.org/rfc/"}
OTHER_HOST = "https://corpus.example/"
SCOPED = "book+chat, answer unmarked"
CONTENT_TYPES = {".pdf": "application/pdf", ".html": "text/html", ".xml": "application/xml"}


def norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


# -- the corpus and the home ------------------------------------------------------------------------
def corpus_files(corpus: Path) -> list[str]:
    """The files the baseline reads (everything but Bikeshed sources and notes), relative paths."""
    out = []
    for path in sorted(corpus.rglob("*")):
        if not path.is_file():
            continue
        low = path.name.lower()
        if low.endswith(".bs") or ".source." in low or ".src." in low:
            continue
        if low in ("schema.md", "sources.md") or "readme" in low:
            continue
        out.append(path.relative_to(corpus).as_posix())
    return out


class Cli:
    """Runs `episteme` against one home: in this process (the CLI's own entry) or as new processes."""

    def __init__(self, home: Path, processes: bool) -> None:
        self.home = home
        self.processes = processes

    def __call__(self, *args: str, check: bool = True) -> dict[str, Any]:
        argv = ["--home", str(self.home), *args, "--json"]
        if self.processes:
            proc = subprocess.run([sys.executable, "-m", "episteme_core", *argv], capture_output=True,
                                  text=True, check=False)
            code, out, err = proc.returncode, proc.stdout, proc.stderr
        else:
            from episteme_core.testing import invoke

            result = invoke(*argv)
            code, out, err = result.exit_code, result.stdout, result.stderr
        text = out if code == 0 else (err.strip().splitlines() or ["{}"])[-1]
        try:
            envelope: dict[str, Any] = json.loads(text)
        except ValueError:
            envelope = {"ok": False, "error": {"message": err[-2000:]}}
        if check and code != 0:
            raise SystemExit(f"episteme {' '.join(args)} failed ({code}): {envelope.get('error')}")
        return envelope


def build_home(corpus: Path, root: Path, cli: Cli) -> dict[str, str]:
    """Put every corpus file into the home through the CLI; returns source (url or record) -> file."""
    docs, books, projects = root / "docs", root / "books" / "gutenberg", root / "projects" / "corpus"
    for folder in (docs, books, projects):
        folder.mkdir(parents=True, exist_ok=True)
    owners: dict[str, str] = {}
    entries = []
    for rel in corpus_files(corpus):
        path = corpus / rel
        if rel.startswith("books/"):
            shutil.copy(path, books / path.name)
            owners[f"book:gutenberg/{path.stem}"] = rel
        elif rel.startswith("claude/"):
            shutil.copy(path, projects / path.name)
            owners[f"chat:claude/corpus/{path.stem}"] = rel
        else:
            shutil.copy(path, docs / path.name)
            host = next((url for prefix, url in HOSTS.items() if path.name.startswith(prefix)), OTHER_HOST)
            entries.append({"sourceUrl": host + path.name, "localPath": path.name,
                            "contentType": CONTENT_TYPES.get(path.suffix, "text/plain")})
            owners[host + path.name] = rel
    (docs / "map.json").write_text(json.dumps(entries), "utf-8")
    cli("pipeline", "--map", str(docs / "map.json"), check=False)  # the empty and scanned PDFs fail
    cli("ingest", "books", str(books))
    cli("ingest", "claude", "--projects", str(projects.parent))
    (root / "owners.json").write_text(json.dumps(owners, indent=1, sort_keys=True), "utf-8")
    return owners


# -- measuring ---------------------------------------------------------------------------------------
def first_hit(passages: Sequence[tuple[str | None, str]], question: dict[str, Any],
              owners: dict[str, str]) -> int | None:
    """1-based rank of the first passage of the question's file holding a phrase; None if none.

    A PDF question's phrase also matches with every whitespace removed from both sides: its phrases
    are pdfplumber's ``extract_text()``, which glues the words of table cells (``BAIN,JMATTHEW
    DISTRICTDIRECTOR``) that episteme's extraction splits by the gaps' width (``BAIN, J MATTHEW``,
    ``DISTRICT DIRECTOR``), so the verbatim rule alone could never find such a row."""
    phrases = [norm(p) for p in question["phrases"]]
    glued = [re.sub(r"\s+", "", p) for p in phrases] if question.get("kind") == "pdf" else []
    for rank, (source, text) in enumerate(passages, start=1):
        if source is not None and owners.get(source) == question["file"]:
            flat = norm(text)
            if any(p in flat for p in phrases):
                return rank
            if glued:
                bare = re.sub(r"\s+", "", text)
                if any(p in bare for p in glued):
                    return rank
    return None


def ask_rank(answer: dict[str, Any], question: dict[str, Any], owners: dict[str, str]) -> int | None:
    """1-based place, among the answer's paragraphs in the order readers named them (``priority``), of
    the first that holds a phrase and is cited at the question's file (its own place, or one of the
    places its identical text is also at, ``alsoAt``); None when the answer does not hold one."""
    for p in sorted(answer["paragraphs"], key=lambda p: p["priority"]):
        source = p["recordId"] if p["recordId"] in owners else p["citation"].get("url", p["source"])
        # the same text found at other places (another rendering of one RFC) is cited there too
        also = [ref.split("#", 1)[0] for ref in p.get("alsoAt") or ()]
        if any(first_hit([(s, p["text"])], question, owners) is not None for s in [source, *also]):
            return int(p["priority"])
    return None


ONNX_READER = "onnx-bench"  # the name of the onnx reader the bench writes into the home's config.json


def configure_onnx(home: Path, model: Path, weight: float | None) -> dict[str, Any]:
    """Write an onnx reader entry into the home's config.json (``main`` puts the file back after the
    questions, so a home kept with ``--home`` answers with bm25 again); returns the entry."""
    entry: dict[str, Any] = {"name": ONNX_READER, "kind": "onnx", "model": str(model), "timeout": 120}
    if weight is not None:
        entry["weight"] = weight
    (home / "config.json").write_text(json.dumps({"readers": [entry]}), "utf-8")
    return entry


def onnx_order(question: str, results: list[dict[str, Any]], entry: dict[str, Any]) -> list[dict[str, Any]]:
    """``query``'s results reordered by episteme-onnx's ``rerank`` (ties keep the query's order)."""
    from episteme_onnx.rerank import rerank

    weight = {"weight": entry["weight"]} if "weight" in entry else {}
    scores = rerank(question, [r["snippet"] for r in results], [float(r["score"]) for r in results],
                    model=entry["model"], **weight)
    return [results[i] for i in sorted(range(len(results)), key=lambda i: (-scores[i], i))]


def run_questions(cli: Cli, questions: list[dict[str, Any]], owners: dict[str, str], ask: bool,
                  log: Callable[[str], None], onnx: dict[str, Any] | None = None,
                  costs: dict[str, list[tuple[float, float]]] | None = None,
                  sizes: dict[str, list[tuple[int, int]]] | None = None) -> dict[str, list[int | None]]:
    """Ranks per question for each row; ``costs`` gets (CPU s, wall s) of every `ask` per row,
    ``sizes`` (characters, paragraphs) of every answer per row."""
    ranks: dict[str, list[int | None]] = {"query (whole)": [], "query (snippet)": []}
    readers = [("", "bm25")] + ([(" [onnx]", ONNX_READER)] if onnx else [])
    for number, q in enumerate(questions, start=1):
        whole = cli("query", "--term", q["question"], "--limit", "10", "--max-chars", "20000")
        snippet = cli("query", "--term", q["question"], "--limit", "10")
        ranks["query (whole)"].append(first_hit(
            [(r["source"], r["snippet"]) for r in whole["data"]["results"]], q, owners))
        ranks["query (snippet)"].append(first_hit(
            [(r["source"], r["snippet"]) for r in snippet["data"]["results"]], q, owners))
        if onnx:
            reordered = onnx_order(q["question"], whole["data"]["results"], onnx)
            ranks.setdefault("query (whole) [onnx]", []).append(first_hit(
                [(r["source"], r["snippet"]) for r in reordered], q, owners))
        if ask:
            for suffix, reader in readers:
                for label, extra in (("ask", ()), ("ask --exclude-marked", ("--exclude-marked",)),
                                     ("ask --include-marked", ("--include-marked",))):
                    cpu, wall = time.process_time(), time.perf_counter()
                    answer = cli("ask", "--reader", reader, q["question"], *extra)["data"]
                    if costs is not None and not cli.processes:
                        costs.setdefault(label + suffix, []).append(
                            (time.process_time() - cpu, time.perf_counter() - wall))
                    ranks.setdefault(label + suffix, []).append(ask_rank(answer, q, owners))
                    if sizes is not None:
                        sizes.setdefault(label + suffix, []).append(
                            (answer["chars"], len(answer["paragraphs"])))
        log(f"  {number}/{len(questions)} {q['id']}")
    return ranks


def cost_lines(costs: dict[str, list[tuple[float, float]]]) -> list[str]:
    """CPU and wall seconds per `ask`, per row: mean, median, the worst, and the first (a model's load)."""
    lines = ["| ask | n | CPU s mean / median / max | wall s mean / median / max | first ask CPU s |",
             "|---|---:|---|---|---:|"]
    for label, rows in costs.items():
        cpu = sorted(c for c, _ in rows)
        wall = sorted(w for _, w in rows)
        def cells(values: list[float]) -> str:
            return f"{sum(values) / len(values):.3f} / {values[len(values) // 2]:.3f} / {values[-1]:.3f}"
        lines.append(f"| {label} | {len(rows)} | {cells(cpu)} | {cells(wall)} | {rows[0][0]:.3f} |")
    return lines


def baseline_ranks(eval_dir: Path, questions: list[dict[str, Any]]) -> list[int | None]:
    """The eval set's own plain bm25s baseline (6,000-char windows), in this run."""
    sys.path.insert(0, str(eval_dir))
    try:
        import baseline  # type: ignore[import-not-found]
    finally:
        sys.path.pop(0)
    passages, owners = baseline.build_passages(6000, 400)
    return [rank for _, rank, _ in baseline.evaluate(questions, passages, owners)]


def default_scope(home: Path, questions: list[dict[str, Any]], owners: dict[str, str]) -> set[str]:
    """Ids of the questions whose answer an unmarked chunk holds: what `ask` can answer without
    `--include-marked` (Claude's thinking, tool calls and tool results are marked, and the product
    leaves them out of `ask` by default). Read from the home's committed chunks."""
    from episteme_core.stages.chunks import iter_chunk_objects
    from episteme_core.store.home import Home

    unmarked: dict[str, list[str]] = {}
    for body in iter_chunk_objects(Home(home)):
        file = owners.get(body["source"])
        for chunk in body["chunks"]:
            if file is not None and not (chunk.get("attributes") or {}).get("marked"):
                unmarked.setdefault(file, []).append(norm(chunk["text"]))
    return {q["id"] for q in questions
            if any(norm(p) in text for text in unmarked.get(q["file"], ()) for p in q["phrases"])}


def groups(questions: list[dict[str, Any]], scope: set[str] | None = None) -> dict[str, list[int]]:
    out: dict[str, list[int]] = collections.OrderedDict()
    out["all"] = list(range(len(questions)))
    for kind in KINDS:
        out[kind] = [i for i, q in enumerate(questions) if q["kind"] == kind]
    out["book+chat"] = [i for i, q in enumerate(questions) if q["kind"] in ("book", "chat")]
    if scope is not None:
        out[SCOPED] = [i for i in out["book+chat"] if questions[i]["id"] in scope]
    for level in ("easy", "hard"):
        out[level] = [i for i, q in enumerate(questions) if q["difficulty"] == level]
    # two halves by the parity of the question's number: a change tuned on the set is kept only when
    # it hurts neither half (a guard against fitting the dev questions)
    for name, parity in (("half: even id", 0), ("half: odd id", 1)):
        out[name] = [i for i, q in enumerate(questions) if _number(q["id"]) % 2 == parity]
    return out


def _number(question_id: str) -> int:
    """The number in a question id ("d07" -> 7; 0 when it has none)."""
    digits = re.sub("[^0-9]", "", question_id)
    return int(digits) if digits else 0


def measures(ranks: list[int | None], members: list[int]) -> dict[str, float]:
    n = len(members) or 1
    row = {f"hit@{k}": sum(1 for i in members if ranks[i] is not None and ranks[i] <= k) / n
           for k in (1, 3, 5, 10)}
    row["mrr"] = sum(1 / ranks[i] for i in members if ranks[i] is not None and ranks[i] <= 10) / n
    row["holds"] = sum(1 for i in members if ranks[i] is not None) / n
    return row


def table(questions: list[dict[str, Any]], runs: dict[str, list[int | None]],
          scope: set[str] | None = None,
          sizes: dict[str, list[tuple[int, int]]] | None = None) -> tuple[str, dict[str, Any]]:
    lines = ["| group | n | " + " | ".join(runs) + " |", "|---|---:|" + "---|" * len(runs)]
    report: dict[str, Any] = {}
    for name, members in groups(questions, scope).items():
        cells = []
        for label, ranks in runs.items():
            m = measures(ranks, members)
            report.setdefault(label, {})[name] = m
            cells.append(" / ".join(f"{m[key]:.3f}" for key in ("hit@1", "hit@5", "hit@10", "mrr")))
        lines.append(f"| {name} | {len(members)} | " + " | ".join(cells) + " |")
    asks = [label for label in runs if label.startswith("ask")]
    if asks:
        lines += ["", "the answer holds it / among its first three paragraphs named / mean characters / mean "
                  "paragraphs:", "",
                  "| group | n | " + " | ".join(asks) + " |", "|---|---:|" + "---|" * len(asks)]
        for name, members in groups(questions, scope).items():
            cells = []
            for label in asks:
                m = report[label][name]
                cell = f"{m['holds']:.3f} / {m['hit@3']:.3f}"
                if sizes and label in sizes and members:
                    chars = sum(sizes[label][i][0] for i in members) / len(members)
                    paras = sum(sizes[label][i][1] for i in members) / len(members)
                    m["chars"], m["paragraphs"] = round(chars, 1), round(paras, 2)
                    cell += f" / {chars:,.0f} / {paras:.1f}"
                cells.append(cell)
            lines.append(f"| {name} | {len(members)} | " + " | ".join(cells) + " |")
    whole, snippet = runs.get("query (whole)"), runs.get("query (snippet)")
    if whole and snippet:
        lines += ["", "the default snippet holds it, of the whole passages that do (hit@5 / hit@10):", "",
                  "| group | n | hit@5 | hit@10 |", "|---|---:|---|---|"]
        for name, members in groups(questions, scope).items():
            cells = []
            for k in (5, 10):
                held = [i for i in members if whole[i] is not None and whole[i] <= k]
                kept = [i for i in held if snippet[i] is not None and snippet[i] <= k]
                cells.append(f"{len(kept)} / {len(held)} = {len(kept) / len(held):.3f}" if held else "–")
            lines.append(f"| {name} | {len(members)} | " + " | ".join(cells) + " |")
    return "\n".join(lines), report


def targets(report: dict[str, Any]) -> str:
    """The issue's targets against this run's measures (hit@5 unless said), one line each."""
    whole, snippet = report.get("query (whole)"), report.get("query (snippet)")
    base = report.get("bm25s baseline")
    lines = []

    def line(name: str, value: str, met: bool) -> None:
        lines.append(f"| {name} | {value} | {'yes' if met else 'no'} |")

    if whole:
        h5, h10 = whole["all"]["hit@5"], whole["all"]["hit@10"]
        line("query hit@5 >= 0.80", f"{h5:.3f}", h5 >= 0.80 - 1e-9)
        if base:
            line("query hit@5 >= baseline + 0.08", f"{h5:.3f} vs {base['all']['hit@5']:.3f} + 0.08",
                 h5 >= base["all"]["hit@5"] + 0.08 - 1e-9)
        line("query hit@10 >= 0.90", f"{h10:.3f}", h10 >= 0.90 - 1e-9)
    if whole and snippet:
        for k in ("hit@5", "hit@10"):
            ratio = snippet["all"][k] / whole["all"][k] if whole["all"][k] else 0.0
            line(f"default snippet >= 0.95 of the whole passage ({k})",
                 f"{snippet['all'][k]:.3f} / {whole['all'][k]:.3f} = {ratio:.3f}", ratio >= 0.95 - 1e-9)
    default = report.get("ask")
    if default:
        held, top3 = default["all"]["holds"], default["all"]["hit@3"]
        line("ask (default) holds the answer for >= 0.85 of all questions", f"{held:.3f}", held >= 0.85)
        if "chars" in default["all"]:
            chars = default["all"]["chars"]
            line("ask: mean answer size <= 3,000 characters", f"{chars:,.0f}", chars <= 3000)
        line("ask: the answer-bearing paragraph among the first three named (share of all questions)",
             f"{top3:.3f} (of {held:.3f} held)", top3 >= held - 1e-9)
    if whole and snippet:
        for half in ("half: even id", "half: odd id"):
            ratio = snippet[half]["hit@5"] / whole[half]["hit@5"] if whole[half]["hit@5"] else 0.0
            line(f"default snippet >= 0.95 of the whole passage ({half}, hit@5)", f"{ratio:.3f}",
                 ratio >= 0.95 - 1e-9)
    if whole and base:
        below = [f"{kind} {whole[kind]['hit@5']:.3f} < {base[kind]['hit@5']:.3f}" for kind in KINDS
                 if whole[kind]["hit@5"] < base[kind]["hit@5"] - 1e-9]
        line("no kind below its baseline (hit@5)", "; ".join(below) or "none below", not below)
    return "\n".join(["| target | measured | met |", "|---|---|---|", *lines])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_SHARED / "corpus")
    parser.add_argument("--eval", type=Path, default=DEFAULT_SHARED / "eval")
    parser.add_argument("--questions", type=Path,
                        help="a questions file in the eval set's format over the same corpus (default: "
                        "the eval set's dev-questions.jsonl; bench/questions/second-set.jsonl and "
                        "third-set.jsonl are sets written apart from the tuning, to check that a change "
                        "holds off the dev set)")
    parser.add_argument("--home", type=Path, help="build the home here (default: a temporary folder)")
    parser.add_argument("--reuse", action="store_true", help="use the home already built at --home")
    parser.add_argument("--processes", action="store_true",
                        help="run every command as a new process (default: the CLI in this process)")
    parser.add_argument("--no-baseline", action="store_true", help="skip the plain bm25s baseline")
    parser.add_argument("--no-ask", action="store_true", help="measure query only")
    parser.add_argument("--only", help="comma-separated question ids")
    parser.add_argument("--reader", choices=("bm25", "onnx"), default="bm25",
                        help="onnx: also ask with an episteme-onnx reader and rerank query with it")
    parser.add_argument("--model", type=Path, help="--reader onnx: the model directory (model.onnx, "
                        "tokenizer.json)")
    parser.add_argument("--weight", type=float, help="--reader onnx: the weight of both the reader (ask) and "
                        "rerank (query) (default: their own)")
    parser.add_argument("--json", type=Path, help="write the measures and per-question ranks here")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args()
    qfile = args.questions or args.eval / "dev-questions.jsonl"
    if not qfile.is_file() or not args.corpus.is_dir():
        print(f"skipped: no eval set at {qfile} or corpus at {args.corpus} (this bench reads the shared "
              "corpus, not the repository)")
        return
    if args.reader == "onnx" and (args.model is None or not args.model.is_dir()):
        parser.error("--reader onnx needs --model DIR, a directory holding model.onnx and tokenizer.json")
    questions = [json.loads(line) for line in qfile.read_text("utf-8").splitlines() if line.strip()]
    if args.only:
        wanted = set(args.only.split(","))
        questions = [q for q in questions if q["id"] in wanted]

    def log(text: str) -> None:
        if not args.quiet:
            print(text, file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        root = args.home or Path(tmp)
        cli = Cli(root / "home", args.processes)
        started = time.perf_counter()
        if args.reuse:
            owners = json.loads((root / "owners.json").read_text("utf-8"))
        else:
            if args.home and root.exists():
                shutil.rmtree(root)
            log("building the home through the CLI ...")
            owners = build_home(args.corpus, root, cli)
        built = time.perf_counter() - started
        shards = json.loads((root / "home" / "shards" / "index.json").read_text("utf-8"))["meta"]
        scope = default_scope(root / "home", questions, owners)
        config = root / "home" / "config.json"
        kept = config.read_bytes() if config.exists() else None  # put back after: a kept home stays bm25's
        onnx = (configure_onnx(root / "home", args.model.resolve(), args.weight)
                if args.reader == "onnx" else None)
        costs: dict[str, list[tuple[float, float]]] = {}
        sizes: dict[str, list[tuple[int, int]]] = {}
        log(f"asking {len(questions)} questions ...")
        try:
            runs = run_questions(cli, questions, owners, not args.no_ask, log, onnx, costs, sizes)
        finally:
            if onnx is not None and kept is not None:
                config.write_bytes(kept)
            elif onnx is not None:
                config.unlink(missing_ok=True)
        asked = time.perf_counter() - started - built
    if not args.no_baseline:
        log("the plain bm25s baseline ...")
        runs["bm25s baseline"] = baseline_ranks(args.eval, questions)
    text, report = table(questions, runs, scope, sizes)
    analyzer = shards.get("analyzer", {})
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"home: {shards.get('chunks')} chunks in {len(shards.get('shards', {}))} shards; analyzer "
          f"{analyzer.get('name', '')} {analyzer.get('version')}; build {built:.1f} s, "
          f"questions {asked:.1f} s")
    print("cells: hit@1 / hit@5 / hit@10 / MRR@10\n")
    print(text)
    print(f"\n{SCOPED}: the book and chat questions whose answer an unmarked paragraph holds (what "
          "`ask --exclude-marked` can find).\n")
    print(targets(report))
    if costs:
        print("\ncost of one `ask` (in this process; CPU = all its threads):\n")
        print("\n".join(cost_lines(costs)))
    if not args.processes:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"\npeak RSS of this process (the home built and every question asked in it): {peak:.0f} MiB")
    if args.json:
        per_question = [{"id": q["id"], "kind": q["kind"], "difficulty": q["difficulty"],
                         "answerUnmarked": q["id"] in scope,
                         **{label: ranks[i] for label, ranks in runs.items()}}
                        for i, q in enumerate(questions)]
        args.json.write_text(json.dumps({"measures": report, "questions": per_question}, indent=1), "utf-8")


if __name__ == "__main__":
    main()
