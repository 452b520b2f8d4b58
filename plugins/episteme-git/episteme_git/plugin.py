"""The plugin module named by the entry point: registers the ``git`` source."""

from __future__ import annotations

from episteme_core.api import Register, hookimpl


@hookimpl
def episteme_sources(register: Register) -> None:
    from episteme_git.source import GitSource

    register(GitSource())
