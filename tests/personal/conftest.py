"""Fixtures for personal records: real books and transcripts copied into tmp_path, a CLI helper."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from episteme_core.testing import CliResult, invoke

Cli = Callable[..., CliResult]
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "personal"
SPOTTER = "-home-marco-projects-spotter"
SHORT = "55604662-cf2a-4331-851a-ec234028f8ca"
HEAVY = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
V1 = "5c0375b4-0000-4000-8000-000000000001"


@pytest.fixture
def books(tmp_path: Path) -> Path:
    """A folder ``library`` with the two Gutenberg excerpts."""
    target = tmp_path / "library"
    shutil.copytree(FIXTURES / "books", target)
    return target


@pytest.fixture
def projects(tmp_path: Path) -> Path:
    """``projects/<project>/<session>.jsonl`` as Claude Code lays them out, sub-agents included."""
    root = tmp_path / "projects"
    claude = FIXTURES / "claude"
    spotter = root / SPOTTER
    (spotter / HEAVY / "subagents").mkdir(parents=True)
    shutil.copy(claude / "spotter__short.jsonl", spotter / f"{SHORT}.jsonl")
    shutil.copy(claude / "spotter__tool_heavy.jsonl", spotter / f"{HEAVY}.jsonl")
    shutil.copy(claude / "spotter__ae4a77f8__subagents__agent-aac57f5.jsonl",
                spotter / HEAVY / "subagents" / "agent-aac57f5.jsonl")
    (root / "-tmp").mkdir()
    shutil.copy(claude / "claude-code-log__edge_cases.jsonl", root / "-tmp" / "edge_cases.jsonl")
    (root / "-path-to-Demo").mkdir()
    shutil.copy(claude / f"v1__{V1}.jsonl", root / "-path-to-Demo" / f"{V1}.jsonl")
    return root


@pytest.fixture
def cli(home: Path) -> Cli:
    """Run the CLI in-process against ``home``."""

    def run(*args: str, **kwargs: object) -> CliResult:
        return invoke(*args, "--home", str(home), **kwargs)  # type: ignore[arg-type]

    return run


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` with its bytes (to prove a command wrote nothing)."""
    if not root.exists():
        return {}
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }
