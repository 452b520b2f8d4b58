"""Laws run against real processes and files; each test gets an isolated environment."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("EPISTEME_HOME", str(tmp_path / "default-home"))
    monkeypatch.setenv("EPISTEME_LOAD_PLUGINS", "")  # the builtins only, whatever is installed
    monkeypatch.delenv("EPISTEME_CRASH_AT", raising=False)
