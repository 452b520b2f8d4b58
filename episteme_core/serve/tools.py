"""What an MCP tool is: a name, a description, a JSON Schema for its arguments, and a function.

Plugins register ``Tool`` records through ``episteme_tools``; ``episteme serve`` lists and calls
them. This module is light (attrs only): plugin modules import it at every start.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from episteme_core.kernel.contracts import SearchableShards
    from episteme_core.kernel.registry import Plugins
    from episteme_core.store.home import Home

ToolFunction = Callable[[dict[str, Any], "ToolCall"], dict[str, Any]]


@attrs.define
class ToolCall:
    """What one call of a tool gets: the home, the plugins, the server's shards, and its warnings.

    ``shard_set()`` returns the server's open shards, checked fresh (``STALE_INDEX`` otherwise) and
    reopened only when a commit changed them. Within one call it always returns the same set, so an
    answer comes from one commit however often the tool asks.
    """

    home: Home
    plugins: Plugins
    open_shards: Callable[[], SearchableShards]
    warnings: list[dict[str, Any]] = attrs.field(factory=list)
    _shards: SearchableShards | None = attrs.field(default=None, init=False)

    def warn(self, code: str, message: str, **extra: Any) -> None:
        """Report a warning with the result (the CLI's envelope ``warnings``)."""
        self.warnings.append({"code": code, "message": message, **extra})

    def shard_set(self) -> SearchableShards:
        if self._shards is None:
            self._shards = self.open_shards()
        return self._shards


@attrs.frozen
class Tool:
    """An MCP tool. ``run(arguments, call)`` gets arguments already checked against ``input_schema``
    (a JSON Schema 2020-12 object schema) and returns the JSON object of the result; it refuses by
    raising ``EpistemeError``, and never writes to the home."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    run: ToolFunction
    title: str | None = None
