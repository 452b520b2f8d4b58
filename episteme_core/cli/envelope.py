"""The ``--json`` envelope and the human rendering of results, warnings and errors."""

from __future__ import annotations

import re
import traceback
from typing import Any

from episteme_core import __version__
from episteme_core.errors import EpistemeError

SCHEMA_VERSION = "1"
_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_safe(text: str) -> str:
    """Strip control characters (but tab and newline) so source text cannot drive the terminal."""
    return _UNSAFE.sub("", text)


def success(command: str | None, data: dict[str, Any], warnings: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "schemaVersion": SCHEMA_VERSION,
        "ok": True,
        "command": command,
        "data": data,
        "warnings": warnings,
        "error": None,
        "meta": {"epistemeVersion": __version__},
    }


def failure(
    command: str | None,
    error: EpistemeError,
    warnings: list[dict[str, Any]],
    *,
    debug: bool,
) -> dict[str, Any]:
    body = error.body()
    if debug:
        body["debug"] = {"causes": cause_chain(error)}
    return {
        "schemaVersion": SCHEMA_VERSION,
        "ok": False,
        "command": command,
        "data": None,
        "warnings": warnings,
        "error": body,
        "meta": {"epistemeVersion": __version__},
    }


def cause_chain(error: BaseException) -> list[dict[str, Any]]:
    """The error and its causes, each with its traceback; cycles are cut."""
    causes: list[dict[str, Any]] = []
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        stack = "".join(traceback.format_tb(current.__traceback__)) or None
        causes.append({"name": type(current).__name__, "message": str(current), "stack": stack})
        current = current.__cause__ or current.__context__
    return causes


def human_error(error: EpistemeError, *, debug: bool) -> str:
    lines = [f"error: {terminal_safe(error.message)}"]
    lines.append(f"hint: {terminal_safe(error.hint)}" if error.hint else "")
    if error.retryable:
        lines.append("This failure is retryable.")
    if error.code == "INTERNAL_ERROR" and not debug:
        lines.append("Rerun with --debug to see the cause.")
    if debug:
        for cause in cause_chain(error):
            lines.append(f"cause: {cause['name']}: {cause['message']}")
            if cause["stack"]:
                lines.append(cause["stack"].rstrip())
    return "\n".join(line for line in lines if line) + "\n"
