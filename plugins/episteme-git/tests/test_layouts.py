"""Every layout of a repository git knows: a work tree, its ``.git`` folder, a linked worktree, a
bare repository (also when the user's git config says ``safe.bareRepository=explicit``)."""

from __future__ import annotations

import os
from pathlib import Path

from episteme_core.testing import invoke

from .conftest import GitRun, make_git


def _commit(repo: Path, git: GitRun, name: str, message: str) -> str:
    (repo / name).write_text(name, encoding="utf-8")
    git("add", name)
    git("commit", "-q", "-m", message)
    return git("rev-parse", "HEAD").decode().strip()


def _ingested(path: Path, home: Path, *extra: str) -> list[str]:
    """The record ids an ingest of ``path`` wrote, sorted."""
    result = invoke("ingest", "git", str(path), *extra, "--no-pack", "--json", "--home", str(home))
    assert result.exit_code == 0, result.stderr
    return sorted(result.envelope["data"]["records"])


def test_a_bare_repository_with_a_pushed_history(repo: tuple[Path, GitRun], tmp_path: Path,
                                                 home: Path) -> None:
    path, git = repo
    shas = [_commit(path, git, "a.txt", "First"), _commit(path, git, "b.txt", "Second")]
    bare = tmp_path / "proj.git"
    make_git(tmp_path)("init", "-q", "--bare", "-b", "main", str(bare))
    git("push", "-q", str(bare), "main")
    with open(os.environ["GIT_CONFIG_GLOBAL"], "a", encoding="utf-8") as config:
        config.write("[safe]\n\tbareRepository = explicit\n")  # git >= 2.38 then refuses `git -C bare`
    assert _ingested(bare, home) == sorted(f"git:proj@{sha}" for sha in shas)  # "proj.git" names "proj"
    mirror = _ingested(bare, tmp_path / "home2", "--name", "mirror")
    assert mirror == sorted(f"git:mirror@{sha}" for sha in shas)
    named = tmp_path / "plain-bare"
    make_git(tmp_path)("init", "-q", "--bare", "-b", "main", str(named))
    git("push", "-q", str(named), "main")
    assert _ingested(named, tmp_path / "home3") == sorted(f"git:plain-bare@{sha}" for sha in shas)
    assert _ingested(bare / "refs", tmp_path / "home4") == sorted(f"git:proj@{sha}" for sha in shas)


def test_the_git_folder_and_a_subfolder_name_the_work_tree(repo: tuple[Path, GitRun], home: Path) -> None:
    path, git = repo
    sha = _commit(path, git, "a.txt", "First")
    (path / "sub").mkdir()
    assert _ingested(path / ".git", home) == [f"git:proj@{sha}"]
    assert _ingested(path / "sub", home.with_name("home2")) == [f"git:proj@{sha}"]


def test_a_linked_worktree_reads_its_own_head(repo: tuple[Path, GitRun], tmp_path: Path, home: Path) -> None:
    path, git = repo
    base = _commit(path, git, "a.txt", "First")
    linked = tmp_path / "side-tree"
    git("worktree", "add", "-q", "-b", "side", str(linked))
    side = _commit(linked, make_git(linked), "b.txt", "Side work")
    main = _commit(path, git, "c.txt", "Main work")
    assert _ingested(linked, home) == sorted([f"git:side-tree@{base}", f"git:side-tree@{side}"])
    assert _ingested(path, home) == sorted([f"git:proj@{base}", f"git:proj@{main}"])
