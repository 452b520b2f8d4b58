"""What an extractor is handed: one snapshot's record and bytes, its family and the manifest's choices."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from episteme_core.records.storage import SnapshotRecord


@attrs.frozen
class ExtractRequest:
    """One snapshot to extract: its record, its bytes, the family, and the manifest's choices.

    ``options`` are the extractor's own settings (``maxPages``, ``timeLimitS``, ...): JSON data,
    hashed into the configuration sha256 with the family's rules, ``fragment`` and ``authority``.
    """

    record: SnapshotRecord
    content: bytes
    family: Any  # a Family component
    fragment: str | None = None
    authority: str | None = None  # the manifest's authority; None: the family's
    options: Mapping[str, Any] = attrs.field(factory=dict)

    @property
    def url(self) -> str:
        """The URL (or record id) a citation points at."""
        return self.record.final_url or self.record.source

    @property
    def effective_authority(self) -> str:
        return str(self.authority or getattr(self.family, "authority", None) or "informative")
