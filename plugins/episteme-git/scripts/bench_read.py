"""Time reading a repository of N commits: the plugin's disarmed git, the same three git commands
run plainly (as the plugin did before it disarmed them), pygit2 (libgit2 in process, when
installed), and a whole ``episteme ingest git``. docs/security.md quotes the table it prints.

    python plugins/episteme-git/scripts/bench_read.py [--commits 3000] [--runs 5] [--ingest]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path


def make_repo(path: Path, commits: int, files: int = 50) -> None:
    """A linear history: each commit rewrites a few lines of two of ``files`` files."""
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    stream = []
    for i in range(1, commits + 1):
        message = f"Change {i}: adjust the parser\n\nBody of change {i}, which says why.\n".encode()
        stream.append(
            b"commit refs/heads/main\n"
            + f"mark :{i}\nauthor A <a@e.org> {1_700_000_000 + i} +0000\n"
              f"committer A <a@e.org> {1_700_000_000 + i} +0000\n".encode()
            + f"data {len(message)}\n".encode() + message
            + (f"from :{i - 1}\n".encode() if i > 1 else b"")
        )
        for name in (i % files, (i * 7) % files):
            data = "".join(f"line {j} of version {i}\n" for j in range(i % 20 + 5)).encode()
            stream.append(f"M 644 inline f{name}.txt\ndata {len(data)}\n".encode() + data)
        stream.append(b"\n")
    subprocess.run(["git", "-C", str(path), "fast-import", "--quiet"], input=b"".join(stream), check=True)
    subprocess.run(["git", "-C", str(path), "checkout", "-q", "main"], check=True)


def plain(path: Path) -> int:
    """The three commands as the plugin ran them before: ``git -C``, the user's environment."""
    def git(*args: str, stdin: bytes | None = None) -> bytes:
        return subprocess.run(["git", "-C", str(path), "--no-pager", *args], input=stdin,
                              capture_output=True, check=True).stdout
    shas = git("rev-list", "--reverse", "--topo-order", "HEAD", "--").decode().split()
    listing = ("\n".join(shas) + "\n").encode()
    git("cat-file", "--batch", stdin=listing)
    git("diff-tree", "--stdin", "-r", "-z", "--numstat", "--no-renames", "--root", "-m", stdin=listing)
    return len(shas)


def disarmed(path: Path) -> int:
    """The plugin's own reading: open (probe, config), list, read objects and changed paths."""
    from episteme_git.repo import list_commits, open_repo, read_commits

    repo = open_repo(path)
    return len(read_commits(repo, list_commits(repo), stat=True))


def disarmed_git_only(path: Path) -> int:
    """The plugin's git processes alone, without building records."""
    from episteme_git.repo import changed_paths, list_commits, open_repo, read_objects

    repo = open_repo(path)
    shas = list_commits(repo)
    read_objects(repo, shas)
    changed_paths(repo, shas)
    return len(shas)


def with_pygit2(path: Path) -> int:
    """The same data through libgit2: raw commit objects and per-file line counts."""
    import pygit2  # type: ignore[import-not-found]

    repo = pygit2.Repository(str(path))
    count = 0
    order = pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE
    for commit in repo.walk(repo.head.target, order):
        repo.odb.read(commit.id)
        diff = (repo.diff(commit.parents[0], commit) if commit.parents
                else commit.tree.diff_to_tree(swap=True))
        sum(patch.line_stats[1] + patch.line_stats[2] for patch in diff)  # (context, added, deleted)
        count += 1
    return count


def timed(run: Callable[[Path], int], path: Path, runs: int) -> tuple[float, int]:
    times, count = [], 0
    for _ in range(runs):
        start = time.perf_counter()
        count = run(path)
        times.append(time.perf_counter() - start)
    return statistics.median(times), count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--commits", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--ingest", action="store_true", help="also time a whole episteme ingest git")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "bench"
        make_repo(path, args.commits)
        rows = [("plain git (before): 3 processes", plain), ("disarmed git: 3 processes", disarmed_git_only),
                ("disarmed git + records (read_commits)", disarmed)]
        try:
            import pygit2  # type: ignore[import-not-found]  # noqa: F401

            rows.append(("pygit2 (libgit2 in process)", with_pygit2))
        except ImportError:
            print("(pygit2 not installed: its row is left out)", file=sys.stderr)
        print(f"| reading {args.commits} commits (median of {args.runs}) | seconds | ms per 1,000 commits |")
        print("|---|---|---|")
        for label, run in rows:
            seconds, count = timed(run, path, args.runs)
            assert count == args.commits, (label, count)
            print(f"| {label} | {seconds:.3f} | {1000 * seconds / count * 1000:.0f} |")
        if args.ingest:
            home = Path(scratch) / "home"
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "episteme_core", "--home", str(home), "ingest", "git",
                            str(path), "--no-pack", "--json"], check=True, capture_output=True,
                           env={**os.environ, "EPISTEME_LOAD_PLUGINS": "git"})
            seconds = time.perf_counter() - start
            print(f"| episteme ingest git --no-pack (storing {args.commits} records) | {seconds:.1f} | "
                  f"{1000 * seconds / args.commits * 1000:.0f} |")


if __name__ == "__main__":
    main()
