"""What library work receives from its caller, and what a command gives back.

``RunContext``: the home, the plugins, progress, warnings, cancellation and the writer lock, plus how
the caller renders the result (``as_json``: the ``--json`` envelope; ``debug``). Library functions
(ingest, pack, pipeline) and commands take one, so an MCP server or a test can run them without
building a command line. ``Outcome``: a command's result, data for the envelope and text for people.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from episteme_core.errors import Cancelled

if TYPE_CHECKING:
    from episteme_core.kernel.registry import Plugins
    from episteme_core.store.home import Home


class ProgressSink(Protocol):
    """Receives ``(stage, current, total, status, message)`` events; the CLI draws or prints them."""

    def update(
        self, stage: str, current: int, total: int | None = None, status: str = "started", message: str = ""
    ) -> None: ...


class SilentProgress:
    """A progress sink that reports nothing (library callers that do not show progress)."""

    def update(
        self, stage: str, current: int, total: int | None = None, status: str = "started", message: str = ""
    ) -> None:
        return None


@attrs.define
class RunContext:
    """One run of library work: where it writes, which components it may use, how it reports."""

    command: str  # who holds the writer lock, as the lock file names it
    home: Home
    plugins: Plugins
    progress: ProgressSink = attrs.field(factory=SilentProgress)
    warnings: list[dict[str, Any]] = attrs.field(factory=list)
    cancel: threading.Event | None = None  # set it to stop the run at its next check
    as_json: bool = False  # the caller renders the --json envelope (``--out -`` needs it)
    debug: bool = False  # --debug: errors carry their cause chain

    def warn(self, code: str, message: str, **extra: Any) -> None:
        """Record a warning (the CLI puts it in the envelope or prints ``warning: ...``)."""
        self.warnings.append({"code": code, "message": message, **extra})

    def check_cancelled(self) -> None:
        """Raise ``CANCELLED`` when the caller asked the run to stop."""
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled("request")

    @contextlib.contextmanager
    def writing(self) -> Iterator[Home]:
        """Hold the home's writer lock for the block; re-entrant within one thread of a process.

        The outermost block takes the lock, batches file durability and, when the lock file shows
        that the previous writer did not finish (killed), removes the temp files and unnamed objects it
        left; a nested block (a source that takes the lock inside ``ingest
        --reshard``, ``run_ingest`` inside ``ingest --all``) just runs under the lock already held.
        """
        from episteme_core.store.atomic import deferred_sync
        from episteme_core.store.lock import holding
        from episteme_core.store.sweep import recover_home

        self.home.ensure_writable()
        with holding(self.home.lock_path, self.command, warn=self.warn,
                     recover=lambda: recover_home(self.home)) as outermost:
            if not outermost:
                yield self.home
                return
            with deferred_sync():
                yield self.home


@attrs.frozen
class Outcome:
    """A command's result: ``data`` for the envelope, ``text`` for people."""

    data: dict[str, Any]
    text: str = ""


# The name commands were typed against before the run context carried ``as_json`` and ``debug``;
# kept so that plugins written against it load unchanged. New code names ``RunContext``.
Context = RunContext

__all__ = ["Context", "Outcome", "ProgressSink", "RunContext", "SilentProgress"]
