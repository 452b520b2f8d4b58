"""Memory benchmark: peak RSS of every writing stage on each hostile input class (target <= 512 MiB).

Each class is made on the fly (``tests/reliability/hostile.py``), captured with ``manual-ingest``,
then ``extract``, ``chunk`` and ``index`` run, each as a new ``episteme`` process whose peak RSS
comes from ``wait4``. The table says how each ended: the document's status and diagnostics.

    python bench/memory.py [--only CLASS ...] [--json FILE]
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="*", choices=sorted(CLASSES), help="classes to run (default: all)")
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    options = parser.parse_args()
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
