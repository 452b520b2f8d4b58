"""The ``--json`` envelope and the human rendering of results, warnings and errors."""

from __future__ import annotations

import re
from typing import Any

from episteme_core import __version__
from episteme_core.errors import EpistemeError

SCHEMA_VERSION = "1"
_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


_SURROGATE = re.compile("[\ud800-\udfff]")


def terminal_safe(text: str) -> str:
    """Strip control characters (but tab and newline) so source text cannot drive the terminal."""
    return unicode_safe(_UNSAFE.sub("", text))


def unicode_safe(text: str) -> str:
    """``text`` without lone surrogates, which no output can encode: a file name's byte that is not
    UTF-8 (held as U+DC80-U+DCFF) is written ``\\xNN``, any other lone surrogate ``\\uXXXX``."""
    if _SURROGATE.search(text) is None:
        return text

    def escape(match: re.Match[str]) -> str:
        code = ord(match.group())
        return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"

    return _SURROGATE.sub(escape, text)


def _cleaned(value: Any) -> Any:
    if isinstance(value, str):
        return unicode_safe(value)
    if isinstance(value, dict):
        return {unicode_safe(str(k)): _cleaned(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_cleaned(v) for v in value]
    return value


# Characters JSON leaves raw inside strings that many readers treat as line breaks (Python's
# splitlines, JavaScript): written escaped, the envelope stays one line for every reader.
_LINE_BREAKS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}


def dumps(body: dict[str, Any]) -> str:
    """The envelope as one canonical JSON line; strings an encoder cannot write (a lone surrogate
    from a file name that is not UTF-8) are escaped rather than failing the whole output, and
    Unicode line separators are escaped so that the line is one line to every reader."""
    from episteme_core.records.canonical import canonical_text

    try:
        text = canonical_text(body)
    except EpistemeError:
        text = canonical_text(_cleaned(body))
    if any(mark in text for mark in _LINE_BREAKS):
        for mark, escaped in _LINE_BREAKS.items():
            text = text.replace(mark, escaped)
    return text


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
        import traceback  # only for --debug: most runs never format a traceback

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
