"""Each test gets its own home, and only this plugin loads (whatever else is installed)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("EPISTEME_HOME", str(tmp_path / "default-home"))
    monkeypatch.setenv("EPISTEME_LOAD_PLUGINS", "rfc")
