"""What a search is asked and what it returns: the filters on chunk labels and one ranked hit.

Every indexer's shards take ``Filters`` and return ``Hit`` records (``kernel.contracts``), so these
live below the search code and the indexers both.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import attrs


@attrs.frozen
class Filters:
    """Exact-match filters on chunk labels; ``since`` keeps chunks whose time is at or after it."""

    family: str | None = None
    authority: str | None = None
    document_type: str | None = None
    normativity: str | None = None
    source: Sequence[str] | None = None  # shard sources (http, books, claude, ...)
    since: str | None = None

    def facet_values(self) -> dict[str, str]:
        """The facet filters given, by the chunk JSON field they compare."""
        wanted = {
            "family": self.family,
            "authority": self.authority,
            "documentType": self.document_type,
            "normativity": self.normativity,
        }
        return {field: value for field, value in wanted.items() if value is not None}

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {**self.facet_values(), "since": self.since}
        if self.source is not None:
            data["source"] = sorted(self.source)
        return {key: value for key, value in data.items() if value is not None}

    def accepts(self, row: Mapping[str, Any]) -> bool:
        """True when the chunk ``row`` (its JSON) passes the facet and time filters (``source``
        selects shards, not chunks); a chunk without a time fails ``since``."""
        for field, value in self.facet_values().items():
            if row.get(field) != value:
                return False
        if self.since is not None:
            return epoch_seconds(row.get("time")) >= epoch_seconds(self.since)
        return True


@attrs.frozen
class Hit:
    """One ranked unit of one shard: a chunk, or a run of consecutive chunks (``unit`` is its number;
    ``chunk_id`` and ``row`` are its first chunk's, the shard's ``shown_rows`` gives them all)."""

    score: float
    chunk_id: str
    row: int
    shard: str
    unit: int = -1


def epoch_seconds(value: str | None) -> float:
    """An ISO 8601 time as seconds since the epoch (UTC when no offset); NaN when absent or bad."""
    if not value:
        return math.nan
    from datetime import datetime  # only for a time: a query without --since never parses one

    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return math.nan
    if moment.tzinfo is None:
        from datetime import UTC

        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()
