"""Fixtures shared by every test: an isolated home and environment per test."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test reads the user's real home or plugins restriction by accident."""
    monkeypatch.setenv("EPISTEME_HOME", str(tmp_path / "default-home"))
    monkeypatch.delenv("EPISTEME_LOAD_PLUGINS", raising=False)
    monkeypatch.delenv("EPISTEME_CRASH_AT", raising=False)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A fresh home directory path (not yet created)."""
    return tmp_path / "home"
