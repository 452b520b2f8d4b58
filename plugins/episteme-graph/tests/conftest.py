"""Shared fixtures: the reference graphs and an isolated home; helpers live in helpers.py."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from helpers import fixture_graph  # noqa: E402


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("EPISTEME_HOME", str(tmp_path / "default-home"))
    monkeypatch.setenv("EPISTEME_LOAD_PLUGINS", "graph")  # only this plugin, whatever else is installed
    monkeypatch.delenv("EPISTEME_CRASH_AT", raising=False)


@pytest.fixture
def minimal() -> dict[str, Any]:
    return fixture_graph("minimal")


@pytest.fixture
def contextual() -> dict[str, Any]:
    return fixture_graph("contextual")
