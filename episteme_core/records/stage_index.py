"""attrs records of a stage's commit (``index.json``): what every reader of a home opens first, kept
apart from the other stored records so that a read (a query) creates only these classes."""

from __future__ import annotations

from typing import Any

import attrs

SCHEMA_VERSION = "1"


@attrs.frozen
class StageEntry:
    """One object a stage commit names: a key, and the content-addressed file that holds it."""

    key: str
    sha256: str
    bytes: int
    path: str  # relative to the stage directory


@attrs.frozen
class StageIndex:
    """A stage's commit (``index.json``): the objects it names, stage metadata, and a fingerprint."""

    stage: str
    episteme_version: str
    entries: list[StageEntry]
    meta: dict[str, Any] = attrs.field(factory=dict)
    schema_version: str = SCHEMA_VERSION
    fingerprint: str = ""
