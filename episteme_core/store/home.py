"""Where the home is, and where each stage lives inside it (or where a command overrides it)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import attrs

from episteme_core.errors import EpistemeError

STAGES = ("snapshots", "documents", "chunks", "shards")
DEFAULT_HOME = "~/.local/share/episteme"


def resolve_home(option: str | None) -> Path:
    """``--home``, else ``$EPISTEME_HOME``, else ``~/.local/share/episteme``."""
    raw = option or os.environ.get("EPISTEME_HOME") or DEFAULT_HOME
    return Path(raw).expanduser().absolute()


@attrs.define
class Home:
    """The directory that holds all state; stages may be relocated per command."""

    root: Path
    stage_overrides: dict[str, Path] = attrs.field(factory=dict)

    @property
    def log_path(self) -> Path:
        return self.root / "log.jsonl"

    @property
    def lock_path(self) -> Path:
        return self.root / "writer.lock"

    @property
    def config_path(self) -> Path:
        return self.root / "config.json"

    @property
    def blobs_dir(self) -> Path:
        return self.root / "blobs" / "sha256"

    @property
    def telemetry_path(self) -> Path:
        return self.root / "telemetry.jsonl"

    @property
    def evals_dir(self) -> Path:
        return self.root / "evals"

    def stage_dir(self, stage: str) -> Path:
        return self.stage_overrides.get(stage, self.root / stage)

    def ensure_writable(self) -> None:
        """Create the home if needed; a home that cannot be written is a clear error naming it."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            probe = self.root / f".probe.{os.getpid()}.tmp"
            probe.write_bytes(b"")
            probe.unlink(missing_ok=True)  # a writer sweeping leftovers may have removed it already
        except OSError as exc:
            raise EpistemeError(
                "INVALID_INPUT",
                f"home {self.root} cannot be written: {exc.strerror or exc}",
                details={"path": str(self.root)},
                hint="pass a writable --home or set EPISTEME_HOME",
            ) from exc

    def config(self) -> dict[str, Any]:
        """The home's ``config.json`` as strict JSON (empty when absent)."""
        from episteme_core.records.canonical import loads_strict
        from episteme_core.records.inputs import read_input

        if not self.config_path.exists():
            return {}
        value = loads_strict(read_input(str(self.config_path)), source=str(self.config_path))
        if not isinstance(value, dict):
            raise EpistemeError(
                "INVALID_INPUT",
                f"{self.config_path}: must be a JSON object",
                details={"path": str(self.config_path)},
            )
        return value
