"""Write snapshots straight through the snapshots writer, as a capture command would."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from episteme_core.stages.snapshots import SnapshotWriter, make_identity
from episteme_core.store.home import Home

FIXTURES = Path(__file__).parent.parent / "fixtures" / "extract"


def add_snapshots(home: Path, items: list[tuple[str, bytes, str | None, dict[str, Any]]]) -> None:
    """Record ``(source, bytes, content type, options)`` snapshots in ``home``."""
    writer = SnapshotWriter(Home(home), "test")
    for source, data, content_type, options in items:
        identity = make_identity("file", source, data, final_url=source, content_type=content_type)
        writer.observe(identity, data, options=options)
    writer.commit()


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES
