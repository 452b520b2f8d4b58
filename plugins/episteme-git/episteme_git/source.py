"""The ``git`` source: ``episteme ingest git REPO_DIR... [--name N] [--rev REV] [--stat]``."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from episteme_core.api import EpistemeError

if TYPE_CHECKING:
    from episteme_core.api import Context, Outcome, RunContext

# commits read (one ``git cat-file --batch``, one ``git diff-tree --stdin``) and stored per batch: at
# most this many, and at most BATCH_BYTES of commit objects (their sizes asked first), so what a
# batch holds is bounded whatever the messages' sizes
COMMIT_BATCH = 2_000
BATCH_BYTES = 64 * 1024 * 1024
MAX_COMMIT_BYTES = 16 * 1024 * 1024  # default --max-commit-bytes: a larger commit is skipped
MAX_COMMIT_BYTES_LIMIT = 256 * 1024 * 1024  # the most --max-commit-bytes may be


def batches(shas: list[str], sizes: dict[str, int], *, count: int, limit: int) -> Iterator[list[str]]:
    """``shas`` in order, cut into runs of at most ``count`` commits and at most ``limit`` bytes of
    objects (a commit larger than ``limit`` alone in its run); a sha without a size counts 0 (git
    lacks it: ``read_commits`` reports it)."""
    run: list[str] = []
    held = 0
    for sha in shas:
        size = sizes.get(sha, 0)
        if run and (len(run) >= count or held + size > limit):
            yield run
            run, held = [], 0
        run.append(sha)
        held += size
    if run:
        yield run


def ingest_repos(
    ctx: RunContext, repos: list[tuple[Path, str | None]], *, rev: str = "HEAD", stat: bool = False,
    pack: bool = True, max_commit_bytes: int = MAX_COMMIT_BYTES,
) -> dict[str, Any]:
    """Commits not yet stored, from each repository: one record each; a commit object larger than
    ``max_commit_bytes`` is skipped with a warning (``GIT_COMMIT_TOO_LARGE``), never read."""
    from episteme_core.api import Collected, known_ids, run_ingest
    from episteme_git.repo import list_commits, object_sizes, open_repo, read_commits

    opened = [open_repo(path, name) for path, name in repos]
    for repo in opened:
        if repo.alternates is not None:
            ctx.warn("GIT_ALTERNATES_IGNORED",
                     f"{repo.alternates}: objects of another repository are not read; only the "
                     "commits this repository holds itself are", repo=repo.name)
    names = [repo.name for repo in opened]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise EpistemeError(
            "INVALID_USAGE", f"two repositories share the name {duplicates[0]!r}",
            hint="give each one a name (--name, or {\"path\", \"name\"} in config.json git_repos)",
        )

    def collect() -> Collected:
        from episteme_core.api import Record

        per_repo: dict[str, dict[str, int]] = {}

        def records() -> Iterator[Record]:
            # read and stored a batch at a time: a history of a million commits is never held whole
            for repo in opened:
                known = known_ids(ctx.home, f"git:{repo.name}@")
                shas = list_commits(repo, rev)
                new = [sha for sha in shas if f"git:{repo.name}@{sha}" not in known]
                sizes = object_sizes(repo, new)
                large = [sha for sha in new if sizes.get(sha, 0) > max_commit_bytes]
                if large:
                    ctx.warn("GIT_COMMIT_TOO_LARGE",
                             f"{repo.path}: {len(large)} commit(s) are larger than --max-commit-bytes "
                             f"({max_commit_bytes} bytes: {', '.join(s[:12] for s in large[:3])}"
                             f"{', ...' if len(large) > 3 else ''}); skipped, not read",
                             repo=repo.name, commits=large, maxCommitBytes=max_commit_bytes)
                    skipped = set(large)
                    new = [sha for sha in new if sha not in skipped]
                per_repo[repo.name] = {"commits": len(shas), "new": len(new), "tooLarge": len(large)}
                for run in batches(new, sizes, count=COMMIT_BATCH, limit=BATCH_BYTES):
                    yield from read_commits(repo, run, stat=stat, warn=ctx.warn)

        return Collected(records(), {}, lambda: {"repos": per_repo})

    return run_ingest(ctx, "git", collect, pack=pack)


def configured_repos(ctx: RunContext) -> list[tuple[Path, str | None]]:
    """``git_repos`` in config.json: paths, or ``{"path": ..., "name": ...}`` objects."""
    raw = ctx.home.config().get("git_repos") if ctx.home.config_path.exists() else None
    if raw is None:
        return []
    where = f"{ctx.home.config_path}: git_repos"
    if not isinstance(raw, list):
        raise EpistemeError(
            "INVALID_INPUT", f"{where} must be a list", details={"path": str(ctx.home.config_path)}
        )
    repos: list[tuple[Path, str | None]] = []
    for item in raw:
        if isinstance(item, str):
            repos.append((Path(item).expanduser(), None))
        elif isinstance(item, dict) and isinstance(item.get("path"), str) and set(item) <= {"path", "name"}:
            name = item.get("name")
            repos.append((Path(item["path"]).expanduser(), name if isinstance(name, str) else None))
        else:
            raise EpistemeError(
                "INVALID_INPUT", f"{where}: each entry is a path or {{\"path\", \"name\"}}",
                details={"path": str(ctx.home.config_path)},
            )
    return repos


class GitSource:
    name = "git"
    block_kind = "commit_message"  # what the record extractor calls each paragraph of a commit
    help = "git repositories: one record git:<repo>@<sha> per commit (runs the git binary)"
    description = (
        "Ingest the commits of each repository not yet in the store: one record git:<repo>@<sha>\n"
        "per commit with the author time, the subject and body paragraphs, the parents and the\n"
        "changed paths (--stat adds a diff-stat paragraph). Runs the real git binary."
    )

    def configure(self, parser: argparse.ArgumentParser) -> None:
        from episteme_core.api import add_pack_option

        parser.add_argument("repos", nargs="+", metavar="REPO_DIR", help="a git work tree or bare repository")
        parser.add_argument("--name", default=None,
                            help="the repository's name in record ids (default: its folder's name); "
                                 "only with one REPO_DIR")
        parser.add_argument("--rev", default="HEAD",
                            help="ingest the commits reachable from REV (default HEAD)")
        parser.add_argument("--stat", action="store_true",
                            help="add a diff-stat paragraph (path | +added -deleted) to each new commit")
        parser.add_argument("--max-commit-bytes", type=int, default=MAX_COMMIT_BYTES, metavar="N",
                            help="skip, with a warning, a commit whose object (headers and message) is "
                                 f"larger than N bytes (default {MAX_COMMIT_BYTES}; "
                                 f"1-{MAX_COMMIT_BYTES_LIMIT})")
        add_pack_option(parser)

    def ingest(self, args: argparse.Namespace, ctx: Context) -> Outcome:
        from episteme_core.api import ingest_outcome

        if args.name and len(args.repos) > 1:
            raise EpistemeError("INVALID_USAGE", "--name needs exactly one REPO_DIR")
        if not 1 <= args.max_commit_bytes <= MAX_COMMIT_BYTES_LIMIT:
            raise EpistemeError("INVALID_USAGE", f"--max-commit-bytes must be 1-{MAX_COMMIT_BYTES_LIMIT}",
                                details={"maxCommitBytes": args.max_commit_bytes})
        repos = [(Path(p), args.name) for p in args.repos]
        return ingest_outcome(ingest_repos(ctx, repos, rev=args.rev, stat=args.stat, pack=args.pack,
                                           max_commit_bytes=args.max_commit_bytes))

    def ingest_all(self, ctx: Context) -> Outcome | None:
        from episteme_core.api import ingest_outcome

        repos = configured_repos(ctx)
        if not repos:
            return None
        return ingest_outcome(ingest_repos(ctx, repos, pack=False))
