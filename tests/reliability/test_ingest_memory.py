"""Personal-record ingest holds one record at a time, and its pack step one shard's rows at a time: a
real ``episteme ingest`` process stays far below what holding the whole run took (peak RSS from
``wait4``; bounds generous against a loaded machine, below what the code took before)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# The measured process is started by a small one: a child forked straight from pytest would count
# pytest's own pages in its peak (the high-water mark of a process spans its fork, before its exec).
_MEASURE = (
    "import resource, subprocess, sys\n"
    "proc = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)\n"
    "sys.stdout.write(proc.stdout.decode())\n"
    "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "sys.stdout.write('\\n%d %d\\n' % (proc.returncode, peak))\n"
)


def _peak_run(args: list[str]) -> tuple[dict, float]:
    """The envelope's data and the peak RSS (MiB) of ``episteme ingest ARGS`` in its own process."""
    proc = subprocess.run(
        [sys.executable, "-S", "-c", _MEASURE, sys.executable, "-m", "episteme_core", "ingest", *args,
         "--json"], capture_output=True, env={**os.environ, "OPENBLAS_NUM_THREADS": "1"}, timeout=900)
    lines = [line for line in proc.stdout.decode().splitlines() if line.strip()]
    status, peak_kib = (int(x) for x in lines[-1].split())
    assert proc.returncode == 0 and status == 0, proc.stdout.decode()[-2000:] + proc.stderr.decode()[-2000:]
    return json.loads(lines[-2])["data"], peak_kib / 1024


def test_ten_books_are_stored_one_at_a_time(tmp_path: Path) -> None:
    """10 books of 8 MB: 245 MiB when the run held every book; 93 MiB one at a time; about 63 MiB
    with a book's paragraphs kept as spans of its text and its record streamed to the blob file."""
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    paragraph = ("word " * 60).strip() + "\n\n"
    for number in range(10):
        body = "".join(f"Paragraph {j} of book {number}: {paragraph}" for j in range(24_000))
        (shelf / f"book{number:02d}.txt").write_text(body, encoding="utf-8")
    data, peak = _peak_run(["books", str(shelf), "--home", str(tmp_path / "home"), "--no-pack"])
    assert data["captured"] == 10 and data["paragraphs"] == 240_000
    assert peak < 85, f"peak RSS {peak:.0f} MiB"


def test_a_book_of_tiny_paragraphs_is_ingested_and_packed_in_bounded_memory(tmp_path: Path) -> None:
    """0.5 MB of one-letter paragraphs (166,666 paragraphs, 100,000 chunks in two shards): 1,138 MiB
    when a shard build parsed every row of the document's chunks object; 478 MiB when the record's
    paragraphs were objects and the chunks object one bytes; about 290 MiB now."""
    shelf = tmp_path / "tiny"
    shelf.mkdir()
    (shelf / "tiny.txt").write_bytes(b"a\n\n" * 166_666)
    data, peak = _peak_run(["books", str(shelf), "--home", str(tmp_path / "home")])
    assert data["paragraphs"] == 166_666 and data["pack"]["status"] == "ok"
    assert data["pack"]["chunks"] == 100_000
    assert peak < 400, f"peak RSS {peak:.0f} MiB"
