"""Fixtures: real git repositories made in tmp_path with the git binary."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

GitRun = Callable[..., bytes]


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("EPISTEME_HOME", str(tmp_path / "default-home"))
    monkeypatch.setenv("EPISTEME_LOAD_PLUGINS", "git")  # only this plugin, whatever else is installed
    for key in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


def make_git(repo: Path) -> GitRun:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Ada Lovelace", "GIT_AUTHOR_EMAIL": "ada@example.org",
        "GIT_COMMITTER_NAME": "Ada Lovelace", "GIT_COMMITTER_EMAIL": "ada@example.org",
        "GIT_AUTHOR_DATE": "2024-05-01T10:00:00+02:00", "GIT_COMMITTER_DATE": "2024-05-02T10:00:00+02:00",
    }

    def git(*args: str, stdin: bytes | None = None) -> bytes:
        return subprocess.run(["git", "-C", str(repo), *args], input=stdin, env=env, check=True,
                              capture_output=True).stdout

    return git


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, GitRun]:
    path = tmp_path / "proj"
    path.mkdir()
    git = make_git(path)
    git("init", "-q", "-b", "main")
    return path, git


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"
