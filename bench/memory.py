"""Memory benchmark: peak RSS of every writing stage on each hostile input class (target <= 512 MiB).

Each class is made on the fly (``tests/reliability/hostile.py``), captured with ``manual-ingest``,
then ``extract``, ``chunk`` and ``index`` run, each as a new ``episteme`` process whose peak RSS
comes from ``wait4``. The table says how each ended: the document's status and diagnostics.

``--large`` measures large runs instead (a table of its own): ``pipeline --map`` over 20,000 small
text files (first run), then ``index --reshard`` of that home with ``--jobs 1`` and ``--jobs 2``;
with ``--million`` also ``index --reshard`` over the synthetic corpus of a million chunks of
``bench/retrieval.py`` (20 shards of 50,000; building its home takes minutes). A run's peak is the
highest ``VmHWM`` of the command and every process under it (its workers), read every 0.2 s.

``--ingest`` measures personal-record ingest (a table of its own): ``ingest books`` of a 3 MB book of
a million one-letter paragraphs and of 10 books of 30 MB, ``ingest claude`` of a 300 MB transcript of
20 tool results; then, at the default bounds, a 63 MB book, a book of 1,000,000 paragraphs and a
332 MB session; each with its pack step (extract, chunk, index in the same process).

    python bench/memory.py [--only CLASS ...] [--json FILE]
    python bench/memory.py --large [--files 20000] [--million] [--json FILE]
    python bench/memory.py --ingest [--scale 1.0] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.reliability import hostile  # noqa: E402

TARGET_MIB = 512
COMMANDS = ("extract", "chunk", "index")

# class name -> (what it is, generator, content type)
CLASSES: dict[str, tuple[str, Callable[[Path], Path], str]] = {
    "html-tiny-paragraphs": ("8 MB HTML: a million `<p>a</p>`", hostile.html_tiny_paragraphs, "text/html"),
    "text-one-letter": ("6 MB text: two million one-letter paragraphs", hostile.text_one_letter_paragraphs,
                        "text/plain"),
    "text-most-chunks": ("32 MB text: 99,000 paragraphs of 320 distinct characters (the most chunks one "
                         "document holds)", hostile.text_most_chunks, "text/plain"),
    "markdown-headings": ("5 MB Markdown: a million one-letter headings", hostile.markdown_headings,
                          "text/markdown"),
    "html-huge-paragraph": ("24 MB HTML: one paragraph", hostile.html_one_huge_paragraph, "text/html"),
    "html-deep-sections": ("20 MB HTML: 60 nested sections with long headings, then paragraphs",
                           hostile.html_deep_sections, "text/html"),
    "xml-tiny-elements": ("8 MB XML: a million tiny elements", hostile.xml_tiny_elements, "application/xml"),
    "pdf-flate-bomb": ("0.6 MB PDF: one stream inflating to 600 MB", hostile.pdf_flate_bomb,
                       "application/pdf"),
    "pdf-runlength-bomb": ("1 MB PDF: a RunLength stream of 64x growth", hostile.pdf_runlength_bomb,
                           "application/pdf"),
    "pdf-many-glyphs": ("PDF: one page of 95,000 glyphs (the bound is 100,000 objects)",
                        hostile.pdf_many_glyphs, "application/pdf"),
}


def run(args: list[str], env: dict[str, str]) -> tuple[int, float, float, str]:
    """Exit status, wall seconds, peak RSS (MiB) and stdout of ``episteme ARGS``."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen([sys.executable, "-m", "episteme_core", *args], stdout=out,
                                stderr=subprocess.STDOUT, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    code = os.waitstatus_to_exitcode(status)
    return code, wall, usage.ru_maxrss / 1024, text


def outcome(command: str, code: int, text: str) -> str:
    """What a run ended with, in a few words."""
    try:
        envelope = json.loads(text.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return f"exit {code} (no envelope)"
    if not envelope.get("ok"):
        return f"exit {code} {envelope['error']['code']}"
    data = envelope["data"]
    if command == "extract":
        docs = data["documents"]
        return "; ".join(f"{d['status']} {d['blocks']} blocks {','.join(d['diagnostics'])}".strip()
                         for d in docs)
    if command == "chunk":
        return f"{data['chunks']} chunks"
    return f"{data.get('shards', data.get('built', '?'))} shards" if isinstance(data, dict) else "ok"


def measure(name: str, folder: Path) -> list[dict[str, object]]:
    what, make, content_type = CLASSES[name]
    path = make(folder)
    home = folder / f"home-{name}"
    map_path = folder / f"map-{name}.json"
    map_path.write_text(json.dumps([{"sourceUrl": f"https://example.org/{name}",
                                     "localPath": str(path), "contentType": content_type}]))
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    code, _, _, text = run(["manual-ingest", "--json", "--home", str(home), "--map", str(map_path),
                            "--max-bytes", str(64 * 1024 * 1024)], env)
    if code != 0:
        raise SystemExit(f"manual-ingest of {name} failed: {text}")
    rows = []
    for command in COMMANDS:
        code, wall, peak, text = run([command, "--json", "--home", str(home)], env)
        rows.append({"class": name, "input": what, "bytes": path.stat().st_size, "command": command,
                     "exit": code, "outcome": outcome(command, code, text), "peakMiB": round(peak, 1),
                     "seconds": round(wall, 1), "withinTarget": peak <= TARGET_MIB})
    path.unlink()
    return rows


def tree_peak(args: list[str], env: dict[str, str]) -> tuple[int, float, float, float, str]:
    """Exit status, wall seconds, peak RSS (MiB) of the command (``wait4``) and of its largest
    descendant (a worker, ``VmHWM`` read every 0.2 s; 0 when none), and stdout of ``episteme ARGS``."""
    started = time.perf_counter()
    peaks: dict[int, float] = {}
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen([sys.executable, "-m", "episteme_core", *args], stdout=out,
                                stderr=subprocess.DEVNULL, env=env)
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            for child in descendants(proc.pid):
                peaks[child] = max(peaks.get(child, 0.0), vm_hwm(child))
            time.sleep(0.2)
        wall = time.perf_counter() - started
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    return (os.waitstatus_to_exitcode(status), wall, usage.ru_maxrss / 1024, max(peaks.values(), default=0.0),
            text)


def descendants(pid: int) -> list[int]:
    """Every process under ``pid`` (Linux ``/proc``)."""
    found: list[int] = []
    frontier = [pid]
    while frontier:
        parent = frontier.pop()
        for task in Path(f"/proc/{parent}/task").glob("*/children"):
            try:
                children = [int(c) for c in task.read_text().split()]
            except OSError:
                continue
            found.extend(children)
            frontier.extend(children)
    return found


def vm_hwm(pid: int) -> float:
    """Peak RSS (MiB) of a live process so far; 0 when it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def large(files: int, million: bool) -> list[dict[str, object]]:
    """The large-run rows: a pipeline over ``files`` small files, its reshard, and (``million``) the
    reshard of a million synthetic chunks."""
    sys.path.insert(0, str(ROOT / "bench"))
    from scale import write_files

    from episteme_core.capture.statcache import COARSE_RACY_NS

    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    rows: list[dict[str, object]] = []

    def measure_run(what: str, args: list[str]) -> None:
        code, wall, own, worker, text = tree_peak([*args, "--json", "--progress", "never"], env)
        if code != 0:
            raise SystemExit(f"{what} failed: {text[-2000:]}")
        peak = max(own, worker)
        shown = [a for a, before in zip(args, ["", *args[:-1]], strict=True)
                 if before not in ("--home", "--map") and a not in ("--home", "--map")]
        rows.append({"input": what, "command": " ".join(shown),
                     "peakMiB": round(own, 1), "workerPeakMiB": round(worker, 1), "seconds": round(wall, 1),
                     "withinTarget": peak <= TARGET_MIB})
        print(f"{what:40} {own:8.1f} MiB (workers {worker:6.1f}) {wall:7.1f} s", file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        map_path = write_files(folder / "files", files)
        time.sleep(COARSE_RACY_NS / 1e9)
        home = folder / "home"
        label = f"{files:,} small text files"
        measure_run(label, ["pipeline", "--home", str(home), "--map", str(map_path),
                            "--max-sources", str(files)])
        for jobs in ("1", "2"):
            measure_run(label, ["index", "--home", str(home), "--reshard", "--jobs", jobs])
        if million:
            big = folder / "million"
            synthetic_home(big, 1_000_000)
            for jobs in ("1", "2"):
                measure_run("1,000,000 synthetic chunks (20 shards)",
                            ["index", "--home", str(big), "--reshard", "--jobs", jobs])
    return rows


def synthetic_home(root: Path, chunks: int) -> None:
    """A home of ``chunks`` synthetic chunks (``bench/retrieval.py``'s corpus), chunked, not indexed."""
    from retrieval import corpus_batches

    from episteme_core.chunking.paragraph import ParagraphChunker
    from episteme_core.chunking.run import chunk_home
    from episteme_core.chunking.window import WindowChunker
    from episteme_core.stages.documents import write_documents
    from episteme_core.store.home import Home

    home = Home(root)
    root.mkdir(parents=True)
    for batch, _ in corpus_batches(chunks):
        write_documents(home, batch)
    chunk_home(home, [ParagraphChunker(), WindowChunker()], max_chars=6000, overlap_chars=400)


def print_large(rows: list[dict[str, object]]) -> None:
    print("| input | command | peak RSS (MiB) | largest worker (MiB) | seconds |")
    print("|---|---|---:|---:|---:|")
    for row in rows:
        mark = "" if row["withinTarget"] else " **over target**"
        worker = row["workerPeakMiB"] or "–"
        print(f"| {row['input']} | `{row['command']}` | {row['peakMiB']}{mark} | {worker} | "
              f"{row['seconds']} |")


def tiny_book(folder: Path, megabytes: float) -> list[str]:
    shelf = folder / "tiny"
    shelf.mkdir()
    (shelf / "tiny.txt").write_bytes(b"a\n\n" * int(megabytes * 1e6 / 3))
    return ["books", str(shelf)]


def ten_books(folder: Path, megabytes: float) -> list[str]:
    shelf = folder / "shelf"
    shelf.mkdir()
    paragraph = ("word " * 60).strip() + "\n\n"
    for number in range(10):
        count = int(megabytes * 1e6 / (len(paragraph) + 30))
        body = "".join(f"Paragraph {j} of book {number}: {paragraph}" for j in range(count))
        (shelf / f"book{number:02d}.txt").write_text(body, encoding="utf-8")
    return ["books", str(shelf)]


def big_transcript(folder: Path, megabytes: float) -> list[str]:
    project = folder / "projects" / "proj"
    project.mkdir(parents=True)
    size = int(megabytes * 1e6 / 20)
    with open(project / "session.jsonl", "w", encoding="utf-8") as out:
        out.write(json.dumps({"type": "user", "uuid": "u0", "timestamp": "2024-01-01T00:00:00Z",
                              "message": {"role": "user", "content": "run the tool"}}) + "\n")
        for i in range(20):
            text = f"line of tool output {i:04d}\n" * (size // 26)
            block = {"type": "tool_result", "tool_use_id": f"t{i}", "content": text}
            out.write(json.dumps({"type": "user", "uuid": f"r{i}", "timestamp": "2024-01-01T00:00:01Z",
                                  "message": {"role": "user", "content": [block]}}) + "\n")
    return ["claude", "--projects", str(folder / "projects"), "--max-line-bytes", str(64 * 1024 * 1024)]


def book_at_bound(folder: Path, megabytes: float) -> list[str]:
    """One book just under the default ``--max-bytes`` (64 MiB), paragraphs of 60 words."""
    shelf = folder / "big"
    shelf.mkdir()
    paragraph = ("word " * 60).strip() + "\n\n"
    count = int(megabytes * 1e6 / (len(paragraph) + 25))
    body = "".join(f"Paragraph {j} of the book: {paragraph}" for j in range(count))
    (shelf / "book.txt").write_text(body, encoding="utf-8")
    return ["books", str(shelf)]


def paragraphs_at_bound(folder: Path, megabytes: float) -> list[str]:
    """The default ``--max-paragraphs`` (1,000,000) paragraphs of 60 characters each."""
    shelf = folder / "many"
    shelf.mkdir()
    count = min(1_000_000, int(megabytes * 1e6 / 61))
    line = "x" * 58
    (shelf / "book.txt").write_text("".join(f"{line}{j % 10}\n\n" for j in range(count)), encoding="utf-8")
    return ["books", str(shelf)]


def session_at_bound(folder: Path, megabytes: float) -> list[str]:
    """One session just under the default ``--max-bytes`` (320 MiB), lines under the default
    ``--max-line-bytes`` (16 MiB): the largest session the defaults take."""
    project = folder / "projects" / "proj"
    project.mkdir(parents=True)
    lines = max(1, int(megabytes / 15.8))
    with open(project / "session.jsonl", "w", encoding="utf-8") as out:
        out.write(json.dumps({"type": "user", "uuid": "u0", "timestamp": "2024-01-01T00:00:00Z",
                              "message": {"role": "user", "content": "run the tool"}}) + "\n")
        for i in range(lines):
            text = f"line of tool output {i:04d}\n" * int(min(megabytes, 15.8) * 1e6 / 26)
            block = {"type": "tool_result", "tool_use_id": f"t{i}", "content": text}
            out.write(json.dumps({"type": "user", "uuid": f"r{i}", "timestamp": "2024-01-01T00:00:01Z",
                                  "message": {"role": "user", "content": [block]}}) + "\n")
    return ["claude", "--projects", str(folder / "projects")]


def git_at_bound(folder: Path, megabytes: float) -> list[str]:
    """A repository of commits whose messages are just under the default ``--max-commit-bytes``
    (16 MiB): paragraphs of 60 words, one file changed each (made with ``git fast-import``)."""
    import subprocess

    repo = folder / "repo"
    repo.mkdir()
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True, env=env)
    paragraph = ("word " * 60).strip() + "\n\n"
    each = min(15.9, megabytes)
    commits = max(1, int(megabytes / each))
    body = (paragraph * int(each * 1e6 / len(paragraph))).encode("ascii")
    proc = subprocess.Popen(["git", "-C", str(repo), "fast-import", "--quiet"], stdin=subprocess.PIPE,
                            env=env)
    assert proc.stdin is not None
    for i in range(1, commits + 1):
        message = f"commit {i}\n\n".encode() + body
        data = f"{i}\n".encode()
        when = 1_700_000_000 + i
        proc.stdin.write(f"commit refs/heads/main\nmark :{i}\nauthor A <a@e.org> {when} +0000\n"
                         f"committer A <a@e.org> {when} +0000\ndata {len(message)}\n".encode())
        proc.stdin.write(message)
        proc.stdin.write((f"from :{i - 1}\n" if i > 1 else "").encode()
                         + f"M 644 inline f{i}.txt\ndata {len(data)}\n".encode() + data + b"\n")
    proc.stdin.close()
    assert proc.wait() == 0
    return ["git", str(repo), "--name", "big"]


# name -> (what it is, maker of the input and the ingest arguments, megabytes at scale 1)
INGESTS: dict[str, tuple[str, Callable[[Path, float], list[str]], float]] = {
    "tiny-paragraphs": ("3 MB book: a million one-letter paragraphs", tiny_book, 3.0),
    "ten-books": ("10 books of 30 MB", ten_books, 30.0),
    "big-transcript": ("300 MB transcript: 20 tool results", big_transcript, 300.0),
    "book-at-bound": ("63 MB book (the default --max-bytes is 64 MiB)", book_at_bound, 63.0),
    "paragraphs-at-bound": ("1,000,000 paragraphs of 60 characters (the default --max-paragraphs)",
                            paragraphs_at_bound, 61.0),
    "session-at-bound": ("332 MB session of 15.8 MB lines (the defaults: 320 MiB, 16 MiB a line)",
                         session_at_bound, 332.0),
    "git-at-bound": ("git: 20 commits of 15.9 MB messages (the default --max-commit-bytes is 16 MiB)",
                     git_at_bound, 318.0),
}


def ingest_rows(scale: float, cases: list[str] | None = None) -> list[dict[str, object]]:
    """Peak RSS of ``ingest`` (store, then pack in the same process) for each case of ``INGESTS``
    (or those named in ``cases``)."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    rows: list[dict[str, object]] = []
    for name, (what, make, megabytes) in INGESTS.items():
        if cases and name not in cases:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            args = make(folder, megabytes * scale)
            code, wall, peak, text = run(["ingest", *args, "--json", "--home", str(folder / "home")], env)
            try:
                data = json.loads(text.strip().splitlines()[-1])["data"]
                outcome = f"{data['paragraphs']} paragraphs; {data['pack'].get('summary', '')}"
            except (ValueError, IndexError, KeyError, TypeError):
                outcome = f"exit {code}"
            rows.append({"case": name, "input": what if scale == 1 else f"{what} (x{scale})", "exit": code,
                         "peakMiB": round(peak, 1), "seconds": round(wall, 1), "outcome": outcome,
                         "withinTarget": peak <= TARGET_MIB})
            print(f"{name:18} {peak:8.1f} MiB {wall:7.1f} s  {outcome}", file=sys.stderr, flush=True)
    return rows


def print_ingest(rows: list[dict[str, object]]) -> None:
    print("| input | peak RSS (MiB) | seconds | outcome |")
    print("|---|---:|---:|---|")
    for row in rows:
        mark = "" if row["withinTarget"] else " **over target**"
        print(f"| {row['input']} | {row['peakMiB']}{mark} | {row['seconds']} | {row['outcome']} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="*", choices=sorted(CLASSES), help="classes to run (default: all)")
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    parser.add_argument("--large", action="store_true", help="large runs instead of the hostile classes")
    parser.add_argument("--files", type=int, default=20_000, help="files of the --large pipeline")
    parser.add_argument("--million", action="store_true", help="with --large: also a million chunks")
    parser.add_argument("--ingest", action="store_true", help="personal-record ingest instead")
    parser.add_argument("--scale", type=float, default=1.0, help="with --ingest: input sizes times this")
    parser.add_argument("--case", nargs="*", choices=sorted(INGESTS), help="with --ingest: cases to run")
    options = parser.parse_args()
    if options.ingest:
        found = ingest_rows(options.scale, options.case)
        print_ingest(found)
        if options.json:
            Path(options.json).write_text(json.dumps(found, indent=1) + "\n")
        return
    if options.large:
        found = large(options.files, options.million)
        print_large(found)
        if options.json:
            Path(options.json).write_text(json.dumps(found, indent=1) + "\n")
        return
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in options.only or CLASSES:
            rows.extend(measure(name, Path(tmp)))
            last = rows[-len(COMMANDS):]
            for row in last:
                print(f"{row['class']:22} {row['command']:8} {row['peakMiB']:8.1f} MiB "
                      f"{row['seconds']:7.1f} s  {row['outcome']}", file=sys.stderr, flush=True)
    print("| input | command | peak RSS (MiB) | seconds | outcome |")
    print("|---|---|---:|---:|---|")
    for row in rows:
        mark = "" if row["withinTarget"] else " **over target**"
        print(f"| {row['input']} | {row['command']} | {row['peakMiB']}{mark} | {row['seconds']} | "
              f"{row['outcome']} |")
    if options.json:
        Path(options.json).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
