"""The ``git`` source: ``episteme ingest git REPO_DIR... [--name N] [--rev REV] [--stat]``."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from episteme_core.api import EpistemeError

if TYPE_CHECKING:
    from episteme_core.api import Context, Outcome, RunContext

# commits read (one ``git cat-file --batch``, one ``git diff-tree --stdin``) and stored per batch
COMMIT_BATCH = 2_000


def ingest_repos(
    ctx: RunContext, repos: list[tuple[Path, str | None]], *, rev: str = "HEAD", stat: bool = False,
    pack: bool = True,
) -> dict[str, Any]:
    """Commits not yet stored, from each repository: one record each."""
    from episteme_core.api import Collected, known_ids, run_ingest
    from episteme_git.repo import list_commits, open_repo, read_commits

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
                per_repo[repo.name] = {"commits": len(shas), "new": len(new)}
                for start in range(0, len(new), COMMIT_BATCH):
                    yield from read_commits(repo, new[start : start + COMMIT_BATCH], stat=stat, warn=ctx.warn)

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
        add_pack_option(parser)

    def ingest(self, args: argparse.Namespace, ctx: Context) -> Outcome:
        from episteme_core.api import ingest_outcome

        if args.name and len(args.repos) > 1:
            raise EpistemeError("INVALID_USAGE", "--name needs exactly one REPO_DIR")
        repos = [(Path(p), args.name) for p in args.repos]
        return ingest_outcome(ingest_repos(ctx, repos, rev=args.rev, stat=args.stat, pack=args.pack))

    def ingest_all(self, ctx: Context) -> Outcome | None:
        from episteme_core.api import ingest_outcome

        repos = configured_repos(ctx)
        if not repos:
            return None
        return ingest_outcome(ingest_repos(ctx, repos, pack=False))
