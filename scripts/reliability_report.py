"""Regenerate the measured part of docs/reliability.md: crash points survived, concurrent scenarios,
hostile classes refused, fuzz inputs run, peak memory per hostile class.

Runs the real tests (pytest, in new processes) with their full settings, then replaces what lies
between the ``reliability:begin`` and ``reliability:end`` markers of docs/reliability.md. Run by
``tox -e reliability``; alone: ``python scripts/reliability_report.py [--skip memory ...]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "reliability.md"
BEGIN, END = "<!-- reliability:begin -->", "<!-- reliability:end -->"
PARTS = ("crash", "concurrency", "hostile", "fuzz", "memory")

# hostile input -> what happens, and the tests that hold it (node ids under the repository)
HOSTILE = [
    ("manifest, map or config.json with an integer of more than 4,300 digits", "INVALID_INPUT",
     ["tests/reliability/test_library_errors.py::test_a_huge_integer_in_a_manifest",
      "tests/reliability/test_library_errors.py::test_a_huge_integer_in_a_map",
      "tests/reliability/test_library_errors.py::test_a_huge_integer_in_config_json_and_verify"]),
    ("hosts such as 0177.0.0.1, 127.1, 2130706433, 0x7f.0.0.1, a..b, bad IDNA", "INVALID_INPUT, nothing sent",
     ["tests/reliability/test_library_errors.py::test_odd_hosts_are_refused_before_anything_is_sent"]),
    ("a URL of 8,193 characters to 1 MB", "INVALID_INPUT",
     ["tests/reliability/test_library_errors.py::test_a_long_url_is_refused_past_the_bound"]),
    ("`ingest warc` on an empty, text, gzipped-text or type-less file", "INVALID_INPUT, nothing stored",
     ["tests/reliability/test_library_errors.py::test_ingest_warc_refuses_a_file_that_is_not_warc"]),
    ("transcript line with a lone surrogate (a cut emoji)", "the line skipped and counted (loneSurrogate)",
     ["tests/reliability/test_bad_records.py::test_a_lone_surrogate_skips_its_line_not_the_run"]),
    ("file and folder names that are not UTF-8 (books, transcripts, arguments)",
     "read, ids percent-encode the bytes, counted (namesNotUtf8)",
     ["tests/reliability/test_bad_records.py"]),
    ("a gzip body cut short in transit", "the source fails SOURCE_UNAVAILABLE (retried), never stored",
     ["tests/capture/test_integrity.py::test_a_gzip_body_cut_short_is_never_stored",
      "tests/capture/test_integrity.py::test_only_a_cut_body_fails_the_run_and_stores_nothing"]),
    ("a server that stops sending",
     "SOURCE_UNAVAILABLE (retryable) at --read-timeout; LIMIT_EXCEEDED at --timeout",
     ["tests/capture/test_integrity.py::test_a_stalled_read_is_a_retryable_source_unavailable",
      "tests/capture/test_integrity.py::test_the_whole_source_time_bound_is_a_limit"]),
    ("a map entry swapped for a FIFO or symlink after its check", "INVALID_INPUT at once, lock released",
     ["tests/capture/test_integrity.py::test_a_file_swapped_after_its_check_is_refused_without_hanging"]),
    ("temp files a killed writer left in objects/xx/ and blobs/sha256/xx/", "reported by verify, swept",
     ["tests/reliability/test_temp_sweep.py"]),
    ("SIGTERM or SIGINT during PDF extraction", "exit 143/130, nothing committed",
     ["tests/reliability/test_pdf_cancellation.py"]),
    ("8 MB HTML of a million paragraphs, 6 MB of one-letter paragraphs, a 600 MB PDF stream in 0.6 MB",
     "partial documents within 1 GiB of address space", ["tests/reliability/test_hostile_memory.py"]),
    ("a document past any bound (blocks, characters, sections, depth, elements, stream bytes)",
     "partial with a diagnostic naming the bound", ["tests/reliability/test_extraction_bounds.py"]),
    ("redirect loops, 11 redirects, file: redirects, gzip bombs, private addresses",
     "LIMIT_EXCEEDED / INVALID_INPUT",
     ["tests/capture/test_snapshot_http.py", "tests/capture/test_netguard.py"]),
    ("XML entity bombs, deep nesting, broken and encrypted PDFs", "refused or partial, never a hang",
     ["tests/extract/test_pdf_xml.py"]),
    ("a WARC record with a Content-Length past 2^63 - 1 (and just under)",
     "INVALID_INPUT naming the record and its offset, nothing stored changed",
     ["tests/reliability/test_warc_lengths.py"]),
    ("1 MB of a backtracking run for each pattern applied to source text", "linear: under 2 s each",
     ["tests/reliability/test_linear_patterns.py"]),
    ("a book, sidecar, transcript, sub-agent file or intent.md swapped for a FIFO or symlink after its "
     "check, or grown past the bound",
     "that file skipped (intent: INVALID_INPUT) at once; never a hang, the link's target, or more than "
     "the bound read",
     ["tests/personal/test_hostile_files.py::test_a_book_swapped_for_a_fifo_after_its_check_is_refused_at_once",
      "tests/personal/test_hostile_files.py::test_a_book_swapped_for_a_symlink_after_its_check_is_not_followed",
      "tests/personal/test_hostile_files.py::test_a_book_grown_past_the_bound_after_its_check_is_never_read_past_it",
      "tests/personal/test_hostile_files.py::test_the_descriptor_reads_no_more_than_the_size_it_was_checked_at",
      "tests/personal/test_hostile_files.py::test_the_shared_open_refuses_fifos_symlinks_folders_and_large_files",
      "tests/personal/test_hostile_files.py::test_a_sidecar_swapped_for_a_fifo_is_not_read",
      "tests/personal/test_hostile_files.py::test_an_intent_swapped_for_a_fifo_after_its_check_is_refused",
      "tests/personal/test_hostile_files.py::test_an_intent_swapped_for_a_symlink_after_its_check_is_refused",
      "tests/personal/test_hostile_files.py::test_a_session_swapped_for_a_fifo_after_its_check_is_skipped",
      "tests/personal/test_hostile_files.py::test_a_subagent_file_swapped_for_a_symlink_after_its_check_is_not_followed"]),
    ("a folder of a books folder or of `--projects` swapped for a symlink after the walk listed it",
     "its files skipped (`symlink`) with a warning; nothing from outside stored",
     ["tests/personal/test_hostile_files.py::test_a_book_folder_swapped_for_a_symlink_after_the_walk_is_not_followed",
      "tests/personal/test_hostile_files.py::test_a_project_folder_swapped_for_a_symlink_after_the_listing_is_not_followed"]),
    ("a book of more than --max-paragraphs paragraphs; a session whose files pass --max-bytes together",
     "that book skipped (tooManyParagraphs), the sub-agent file past the bound skipped (tooLarge), each "
     "with a warning; the rest stored",
     ["tests/personal/test_books.py::test_max_paragraphs_is_a_bound",
      "tests/personal/test_claude.py::test_a_session_and_its_subagent_files_share_one_byte_bound"]),
    ("a symlinked session or subagents folder under --projects",
     "not followed, skipped with a warning naming it; nothing from outside stored or found",
     ["tests/personal/test_hostile_files.py::test_a_symlinked_session_folder_is_skipped_and_its_subagents_never_found"]),
    ("a Claude session whose id passes 1,024 characters (long or non-UTF-8 names)",
     "that session skipped with a warning naming it; the rest stored",
     ["tests/personal/test_hostile_files.py::test_a_session_whose_id_is_too_long_is_skipped_and_the_rest_stored"]),
]


def pytest(args: list[str], env: dict[str, str]) -> tuple[int, Path]:
    """Run pytest (a new process) with a JUnit XML report; returns the exit status and the report."""
    report = Path(tempfile.mkstemp(suffix=".xml")[1])
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           f"--junitxml={report}", *args], cwd=ROOT, env={**os.environ, **env})
    return proc.returncode, report


def outcomes(report: Path) -> dict[str, bool]:
    """Test id -> passed, from a JUnit XML report."""
    found: dict[str, bool] = {}
    for case in ET.parse(report).iter("testcase"):
        path = case.get("classname", "").replace(".", "/")
        node = f"{path}.py::{case.get('name')}"
        found[node] = not any(child.tag in ("failure", "error") for child in case)
    return found


def crash_section() -> list[str]:
    with tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False) as handle:
        path = Path(handle.name)
    tests = ["tests/reliability/test_crash_matrix.py", "plugins/episteme-git/tests/test_crash.py",
             "plugins/episteme-honcho/tests/test_crash.py"]
    status, _ = pytest(tests, {"EPISTEME_CRASH_MATRIX": "full", "EPISTEME_CRASH_REPORT": str(path)})
    reports = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    from episteme_core.store.faults import POINTS

    used = [p for p in POINTS if any(p in r["trace"] for r in reports)]
    lines = ["### Crash points survived", "",
             "Each cell: kills at that step (every time the command takes it) after which `verify` passed, "
             "every stage held its previous or its new commit, the answer to `query` was the previous "
             "commit's or the new one's byte for byte (or a STALE_INDEX refusal between two stages' "
             "commits), and a re-run equalled a clean run. `–`: the command never takes that step.", "",
             "| command | " + " | ".join(f"`{p}`" for p in used) + " | kills |",
             "|---|" + "---:|" * (len(used) + 1)]
    total = 0
    for report in sorted(reports, key=lambda r: r["scenario"]):
        cells = []
        for point in used:
            n = sum(1 for case in report["cases"] if case["point"] == point and case["killed"])
            cells.append(str(n) if point in report["trace"] else "–")
        kills = len(report["cases"])
        total += kills
        lines.append(f"| `{report['scenario']}` | " + " | ".join(cells) + f" | {kills} |")
    lines += ["", f"{total} kills over {len(reports)} commands, "
              f"{'all survived' if status == 0 else 'SOME FAILED (see the test run)'}."]
    return lines


def concurrency_section() -> list[str]:
    scenarios = [
        ("55 writer processes start at once on one home", "exactly the successful ones committed; the "
         "others RESOURCE_BUSY (exit 7); home verifies",
         "tests/reliability/test_concurrency.py::test_concurrent_writers_one_proceeds_the_others_are_busy"),
        ("2,048 reads of the snapshots stage while a writer commits 11 times", "every read a whole commit "
         "(old or new), verified byte for byte",
         "tests/reliability/test_concurrency.py::test_readers_during_writes_see_a_whole_commit"),
        ("racing lock takers (law LockIsExclusive)", "never two holders",
         "laws/test_lock_is_exclusive.py"),
        ("a stage commit killed at any step, both durability modes (law CommitIsAtomic)",
         "the old or the new commit, whole", "laws/test_commit_is_atomic.py"),
        ("a dead writer's lock, a live holder, a lock of another host", "broken with a warning / "
         "RESOURCE_BUSY / never broken", "tests/kernel/test_lock.py"),
        ("SIGINT/SIGTERM to a writer", "130/143, lock released, no temp files",
         "tests/kernel/test_signals_and_progress.py"),
    ]
    status, report = pytest([s[2] for s in scenarios], {"EPISTEME_CONCURRENT_WRITERS": "55",
                                                          "EPISTEME_CONCURRENT_READS": "2048"})
    results = outcomes(report)
    lines = ["### Concurrent scenarios", "", "| scenario | expected | held |", "|---|---|---|"]
    for what, expected, node in scenarios:
        held = [ok for name, ok in results.items() if name.startswith(node)]
        lines.append(f"| {what} | {expected} | {_held(held)} |")
    return lines


def hostile_section() -> list[str]:
    nodes = sorted({node for _, _, tests in HOSTILE for node in tests})
    _, report = pytest(nodes, {})
    results = outcomes(report)
    lines = ["### Hostile classes refused", "", "| input | outcome | held |", "|---|---|---|"]
    for what, outcome, tests in HOSTILE:
        held = [ok for name, ok in results.items() if any(name.startswith(t) for t in tests)]
        lines.append(f"| {what} | {outcome} | {_held(held)} |")
    return lines


def _held(results: list[bool]) -> str:
    verdict = "yes" if results and all(results) else "NO"
    return f"{verdict} ({len(results)} test{'' if len(results) == 1 else 's'})"


def fuzz_section(long: bool) -> list[str]:
    with tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False) as handle:
        path = Path(handle.name)
    tests = ["tests/reliability/test_fuzz.py", "plugins/episteme-git/tests/test_fuzz.py",
             "plugins/episteme-honcho/tests/test_fuzz.py"]
    env = {"EPISTEME_FUZZ_COUNTS": str(path)}
    if long:
        env["EPISTEME_FUZZ"] = "long"
    status, _ = pytest(tests, env)
    counts: dict[str, int] = {}
    for line in path.read_text().splitlines():
        row = json.loads(line)
        counts[row["parser"]] = counts.get(row["parser"], 0) + row["inputs"]
    lines = ["### Fuzz inputs run", "",
             f"Profile: {'long (`tox -e fuzz`)' if long else 'the test suite (`tox -e fuzz` runs 50x)'}; "
             f"crashes: {'none' if status == 0 else 'SOME (see the test run)'}.", "",
             "| parser | inputs |", "|---|---:|"]
    lines += [f"| {name} | {n:,} |" for name, n in sorted(counts.items())]
    lines.append(f"| **all** | **{sum(counts.values()):,}** |")
    return lines


def memory_section() -> list[str]:
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as handle:
        path = Path(handle.name)
    subprocess.run([sys.executable, str(ROOT / "bench" / "memory.py"), "--json", str(path)], check=True,
                   stdout=subprocess.DEVNULL)
    rows = json.loads(path.read_text())
    lines = ["### Peak memory per hostile class", "",
             "`bench/memory.py`: each input captured, then `extract`, `chunk` and `index`, each a new "
             "process; peak RSS from `wait4`. Target: 512 MiB.", "",
             "| input | command | peak RSS (MiB) | seconds | outcome |", "|---|---|---:|---:|---|"]
    for row in rows:
        flag = "" if row["withinTarget"] else " **over**"
        lines.append(f"| {row['input']} | {row['command']} | {row['peakMiB']}{flag} | {row['seconds']} | "
                     f"{row['outcome']} |")
    worst = max(rows, key=lambda r: r["peakMiB"])
    lines += ["", f"Highest: {worst['peakMiB']} MiB ({worst['input']}, {worst['command']})."]
    return lines


def machine() -> str:
    cores = os.cpu_count()
    try:
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError):
        mem = 0.0
    return (f"Measured on {platform.machine()}, {cores} cores, {mem:.0f} GiB, {platform.system()} "
            f"{platform.release()}, Python {platform.python_version()}; a shared machine, so seconds vary.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skip", nargs="*", default=[], choices=PARTS, help="parts to leave as they are")
    parser.add_argument("--long-fuzz", action="store_true", help="run the long fuzz profile")
    options = parser.parse_args()
    text = DOC.read_text("utf-8")
    head, _, rest = text.partition(BEGIN)
    old, _, tail = rest.partition(END)
    kept = _sections(old)
    builders = {"crash": crash_section, "concurrency": concurrency_section, "hostile": hostile_section,
                "fuzz": lambda: fuzz_section(options.long_fuzz), "memory": memory_section}
    for part in PARTS:
        if part not in options.skip:
            print(f"reliability report: {part}...", file=sys.stderr, flush=True)
            kept[part] = "\n".join(builders[part]())
    body = "\n\n".join(kept[p] for p in PARTS if p in kept)
    DOC.write_text(f"{head}{BEGIN}\n\n{machine()}\n\n{body}\n\n{END}{tail}", "utf-8")


def _sections(old: str) -> dict[str, str]:
    """The sections already in the document (kept for the parts skipped)."""
    titles = {"### Crash points": "crash", "### Concurrent": "concurrency", "### Hostile": "hostile",
              "### Fuzz": "fuzz", "### Peak memory": "memory"}
    found: dict[str, str] = {}
    current: str | None = None
    for line in old.splitlines():
        for title, part in titles.items():
            if line.startswith(title):
                current = part
                found[part] = ""
        if current is not None:
            found[current] += line + "\n"
    return {part: value.strip() for part, value in found.items()}


if __name__ == "__main__":
    main()
