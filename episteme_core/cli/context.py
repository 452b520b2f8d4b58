"""What a running command gets: the home, the plugins, progress, warnings, and the writer lock."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import attrs

from episteme_core.cli.progress import Progress
from episteme_core.plugins import Plugins
from episteme_core.store.home import Home


@attrs.define
class Context:
    """Per-invocation state handed to ``Command.run``."""

    command: str
    home: Home
    plugins: Plugins
    progress: Progress
    as_json: bool = False
    debug: bool = False
    warnings: list[dict[str, Any]] = attrs.field(factory=list)

    def warn(self, code: str, message: str, **extra: Any) -> None:
        """Record a warning for the envelope (``--json``) or stderr (``warning: ...``)."""
        self.warnings.append({"code": code, "message": message, **extra})

    @contextlib.contextmanager
    def writing(self) -> Iterator[Home]:
        """Hold the home's writer lock for the block; sweep temp files a killed writer left."""
        from episteme_core.store.atomic import deferred_sync
        from episteme_core.store.lock import WriterLock
        from episteme_core.store.sweep import sweep_home

        self.home.ensure_writable()
        with WriterLock(self.home.lock_path, self.command, warn=self.warn), deferred_sync():
            sweep_home(self.home)
            yield self.home


__all__ = ["Context"]
