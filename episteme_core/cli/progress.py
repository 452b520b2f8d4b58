"""Progress on stderr: a rich bar on a terminal, JSON Lines under --json, plain lines when forced."""

from __future__ import annotations

import sys
from typing import Any, TextIO

from episteme_core.records.canonical import canonical_text

STATUSES = ("started", "completed", "retrying", "failed")


class Progress:
    """Reports ``(stage, current, total, status, message)`` events for one command."""

    def __init__(self, mode: str, as_json: bool, command: str, stream: TextIO | None = None):
        self.stream = stream or sys.stderr
        self.command = command
        self.as_json = as_json
        is_tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.enabled = mode == "always" or (mode == "auto" and is_tty)
        self._rich_wanted = self.enabled and not as_json and is_tty
        self._bar: Any = None
        self._tasks: dict[str, Any] = {}

    def update(
        self,
        stage: str,
        current: int,
        total: int | None = None,
        status: str = "started",
        message: str = "",
    ) -> None:
        if not self.enabled:
            return
        if self.as_json:
            event = {
                "type": "progress",
                "command": self.command,
                "stage": stage,
                "current": current,
                "total": total,
                "status": status,
                "message": message,
            }
            self.stream.write(canonical_text(event) + "\n")
            self.stream.flush()
        elif self._rich_wanted:
            self._rich_update(stage, current, total, message)
        else:
            of = f"/{total}" if total is not None else ""
            self.stream.write(f"{stage}: {message} ({current}{of}) {status}\n")
            self.stream.flush()

    def _rich_update(self, stage: str, current: int, total: int | None, message: str) -> None:
        if self._bar is None:
            from rich.console import Console
            from rich.progress import Progress as RichProgress

            self._bar = RichProgress(console=Console(file=self.stream), transient=True)
            self._bar.start()
        if stage not in self._tasks:
            self._tasks[stage] = self._bar.add_task(stage, total=total)
        self._bar.update(
            self._tasks[stage], completed=current, total=total, description=f"{stage} {message}"
        )

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
