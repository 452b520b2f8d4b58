"""Lay out a new home: the stage directories and an empty ``config.json``; idempotent."""

from __future__ import annotations

from episteme_core.records.canonical import canonical_bytes
from episteme_core.store.atomic import atomic_write
from episteme_core.store.home import STAGES, Home


def init_home(home: Home) -> bool:
    """Create what is missing; return True when the home had no ``config.json`` before."""
    created = not home.config_path.exists()
    for stage in STAGES:
        home.stage_dir(stage).mkdir(parents=True, exist_ok=True)
    home.evals_dir.mkdir(parents=True, exist_ok=True)
    if created:
        atomic_write(home.config_path, canonical_bytes({}))
    return created
