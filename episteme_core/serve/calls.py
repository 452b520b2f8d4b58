"""One tool call: check the arguments against the schema, run the tool, and make the reply.

Independent of MCP: the server turns a ``Reply`` into a tool result. A refusal carries the same
``error`` object as the CLI's ``--json`` envelope (code, message, retryable, details, hint).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from episteme_core.errors import EpistemeError
from episteme_core.kernel.contracts import ToolLike
from episteme_core.serve.tools import ToolCall

if TYPE_CHECKING:
    from episteme_core.kernel.contracts import SearchableShards
    from episteme_core.kernel.registry import Plugins
    from episteme_core.store.home import Home

log = logging.getLogger("episteme.serve")
TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
REASON_CHARS = 300
SCHEMA_HINT = "tools/list gives each tool's input schema"


@attrs.frozen
class Reply:
    """What a call produced: ``data`` (success) or ``error`` (a refusal), and the warnings."""

    data: dict[str, Any] | None
    error: dict[str, Any] | None
    warnings: list[dict[str, Any]]
    text: str  # data as canonical JSON, or "CODE: message" (and the hint) for a refusal

    @property
    def ok(self) -> bool:
        return self.error is None


def tool_problem(tool: Any) -> str | None:
    """Why ``tool`` cannot be served (not a valid tool), or None."""
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import Draft202012Validator

    name = getattr(tool, "name", None)
    if not isinstance(name, str) or not TOOL_NAME.match(name):
        return f"its name {name!r} is not 1–128 of A-Z a-z 0-9 _ . -"
    if not isinstance(getattr(tool, "description", None), str):
        return "it has no description"
    if not callable(getattr(tool, "run", None)):
        return "it has no run(arguments, call) function"
    schema = getattr(tool, "input_schema", None)
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        return "its input_schema is not a JSON Schema of type object"
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return f"its input_schema is not valid JSON Schema: {exc.message}"
    return None


def _integers(schema: Mapping[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """Whole numbers sent as 5.0 (valid JSON Schema integers) become ints."""
    properties = schema.get("properties") or {}
    fixed = dict(arguments)
    for key, value in arguments.items():
        spec = properties.get(key)
        if isinstance(spec, Mapping) and spec.get("type") == "integer" and isinstance(value, float):
            fixed[key] = int(value)
    return fixed


class Caller:
    """Calls the served tools by name; thread-safe (each call gets its own ``ToolCall``)."""

    def __init__(self, tools: Iterable[ToolLike], home: Home, plugins: Plugins,
                 open_shards: Callable[[], SearchableShards]) -> None:
        from jsonschema.validators import Draft202012Validator

        self.tools = {tool.name: tool for tool in tools}
        self.home = home
        self.plugins = plugins
        self.open_shards = open_shards
        self._validators = {name: Draft202012Validator(dict(tool.input_schema))
                            for name, tool in self.tools.items()}

    def check_arguments(self, name: str, arguments: Any) -> dict[str, Any]:
        """``arguments`` if they fit the tool's schema; else ``INVALID_USAGE`` naming the field."""
        from jsonschema.exceptions import best_match

        if not isinstance(arguments, dict):
            raise EpistemeError("INVALID_USAGE", f"tool {name}: arguments must be a JSON object",
                                details={"tool": name}, hint=SCHEMA_HINT)
        error = best_match(self._validators[name].iter_errors(arguments))
        if error is not None:
            field = ".".join(str(part) for part in error.absolute_path) or None
            reason = error.message
            if len(reason) > REASON_CHARS:
                reason = reason[:REASON_CHARS] + "…"
            where = f" argument {field}" if field else ""
            raise EpistemeError(
                "INVALID_USAGE", f"tool {name}:{where} {reason}",
                details={"tool": name, "field": field, "reason": reason}, hint=SCHEMA_HINT,
            )
        return _integers(self.tools[name].input_schema, arguments)

    def call(self, name: str, arguments: Any) -> Reply:
        """Run tool ``name`` (which must exist) and turn what happens into a ``Reply``."""
        from episteme_core.records.canonical import canonical_text

        call = ToolCall(home=self.home, plugins=self.plugins, open_shards=self.open_shards)
        try:
            checked = self.check_arguments(name, arguments)
            data = self.tools[name].run(checked, call)
            if not isinstance(data, dict):
                raise TypeError(f"tool {name} returned {type(data).__name__}, not a JSON object")
            return Reply(data=data, error=None, warnings=call.warnings, text=canonical_text(data))
        except EpistemeError as exc:
            return refusal(exc, call.warnings)
        except Exception as exc:
            log.exception("tool %s failed", name)
            error = EpistemeError("INTERNAL_ERROR", f"{type(exc).__name__}: {exc}")
            return refusal(error, call.warnings)


def refusal(error: EpistemeError, warnings: list[dict[str, Any]]) -> Reply:
    """The reply for ``error``: the envelope's error object, and its text for people."""
    body = error.body()
    text = f"{error.code}: {error.message}" + (f"\nhint: {error.hint}" if error.hint else "")
    return Reply(data=None, error=body, warnings=warnings, text=text)
