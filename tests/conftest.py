"""Fixtures shared by every test: an isolated home and environment per test."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test reads the user's real home, or loads a plugin that happens to be installed: the
    kernel's tests see the builtins only, plus the fixture plugins a test asks for (``plugin_site``)."""
    monkeypatch.setenv("EPISTEME_HOME", str(tmp_path / "default-home"))
    monkeypatch.setenv("EPISTEME_LOAD_PLUGINS", "")
    monkeypatch.delenv("EPISTEME_CRASH_AT", raising=False)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A fresh home directory path (not yet created)."""
    return tmp_path / "home"


PLUGIN_SITES = Path(__file__).parent / "fixtures" / "plugins"


@pytest.fixture
def plugin_site(monkeypatch: pytest.MonkeyPatch):
    """Make fixture plugin distributions (``site-<name>``) visible on sys.path and PYTHONPATH, and
    load them (their entry points are named ``<name>``); returns the environment for a new process."""
    import os
    import sys

    def use(*names: str) -> dict[str, str]:
        paths = [str(PLUGIN_SITES / f"site-{name}") for name in names]
        for path in paths:
            monkeypatch.syspath_prepend(path)
        pythonpath = os.pathsep.join([*paths, os.environ.get("PYTHONPATH", "")]).strip(os.pathsep)
        monkeypatch.setenv("PYTHONPATH", pythonpath)
        monkeypatch.setenv("EPISTEME_LOAD_PLUGINS", ",".join(names))
        prefixes = tuple(f"episteme_{name}" for name in names)
        for module in [m for m in sys.modules if m.startswith(prefixes)]:
            del sys.modules[module]
        return {"PYTHONPATH": pythonpath, "EPISTEME_LOAD_PLUGINS": ",".join(names)}

    return use
