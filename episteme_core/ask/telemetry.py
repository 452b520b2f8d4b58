"""Telemetry: one whole JSON line per question (ask, eval, serve) appended to ``telemetry.jsonl``.

Lines are written with one ``write`` on an ``O_APPEND`` descriptor under an exclusive ``flock``, so
concurrent askers never interleave. Nothing secret is written: readers appear by name only, and the
value of any environment variable whose name says KEY, TOKEN, SECRET or PASSWORD is redacted from
every string. ``EPISTEME_TELEMETRY=off`` (or 0, false, no) disables it; a home that does not exist
is never created for telemetry.
"""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs

from episteme_core.records.canonical import canonical_bytes

OFF_VALUES = frozenset({"off", "0", "false", "no"})
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)
REDACTED = "[redacted]"


@attrs.frozen
class SourceHit:
    """One source a question reached: shards read, candidates in, excerpts out and their size."""

    source: str
    shards: int
    candidates: int
    excerpts: int
    chars: int


@attrs.frozen
class ShardLine:
    name: str
    source: str
    paragraphs_in: int
    excerpts_out: int
    reader: str
    fallback: bool


@attrs.frozen
class TelemetryLine:
    """What one question did; ``schema/telemetry-line.schema.json``."""

    time: str
    command: str
    question: str
    filter: list[str] | None
    since: str | None
    duration_ms: int
    sources: list[SourceHit]
    shards: list[ShardLine]
    readers: list[str]
    fallbacks: int
    answered: int
    omitted: int
    ok: bool
    error: str | None = None
    label: str | None = None
    schema_version: str = "1"


def enabled() -> bool:
    return os.environ.get("EPISTEME_TELEMETRY", "").strip().lower() not in OFF_VALUES


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _secrets() -> list[str]:
    return sorted(
        (v for k, v in os.environ.items() if _SECRET_NAME.search(k) and len(v) >= 8),
        key=len, reverse=True,
    )


def redact(value: Any, secrets: list[str]) -> Any:
    """``value`` with every secret replaced in every string it holds."""
    if isinstance(value, str):
        for secret in secrets:
            if secret in value:
                value = value.replace(secret, REDACTED)
        return value
    if isinstance(value, dict):
        return {redact(k, secrets): redact(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v, secrets) for v in value]
    return value


def append_line(path: Path, data: dict[str, Any]) -> None:
    """Append ``data`` as one canonical JSON line, whole, even with concurrent appenders."""
    import fcntl

    line = canonical_bytes(redact(data, _secrets()))
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        view = memoryview(line)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    finally:
        os.close(fd)  # closing releases the flock


def record(home_root: Path, line: TelemetryLine) -> bool:
    """Write ``line`` to ``<home>/telemetry.jsonl`` unless disabled or the home does not exist.
    Telemetry never fails a question: an unwritable file is silently skipped."""
    from episteme_core.records.convert import unstructure

    if not enabled() or not home_root.is_dir():
        return False
    try:
        from episteme_core.store.home import Home

        append_line(Home(home_root).telemetry_path, unstructure(line))
    except OSError:
        return False
    return True
