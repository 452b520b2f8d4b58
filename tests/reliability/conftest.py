"""Helpers for the reliability tests: what a home holds, and whether all of it is referenced."""

from __future__ import annotations

from pathlib import Path

from episteme_core.stages.snapshots import read_catalog
from episteme_core.store.home import Home


def unreferenced(home: Path) -> list[str]:
    """Blobs and snapshot objects in ``home`` that no committed snapshot names (a failed run's litter)."""
    catalog = read_catalog(Home(home))
    objects = {entry.path for entry in catalog.index.entries} if catalog.index else set()
    blobs = {record.content_sha256 for record in catalog.records()}
    left = []
    for path in sorted((home / "snapshots" / "objects").rglob("*")):
        if path.is_file() and path.relative_to(home / "snapshots").as_posix() not in objects:
            left.append(str(path))
    for path in sorted((home / "blobs" / "sha256").rglob("*")):
        if path.is_file() and path.name not in blobs:
            left.append(str(path))
    return left
