"""The snapshots-stage API other stages build on: catalog reads, writer observations, commits."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from episteme_core.errors import EpistemeError
from episteme_core.stages.snapshots import SnapshotWriter, make_identity, read_catalog
from episteme_core.store.home import Home
from episteme_core.store.log import Log


def _observe(home: Home, source: str, data: bytes, **options: str) -> str:
    writer = SnapshotWriter(home, "test", clock=lambda: "2024-01-01T00:00:00Z")
    identity = make_identity("record", source, data, content_type="text/plain", charset="utf-8")
    status = writer.observe(identity, data, options=options or None).status
    writer.commit()
    return status


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_empty_home_is_an_empty_catalog(home: Path) -> None:
    catalog = read_catalog(Home(home))
    assert catalog.sources() == [] and catalog.fingerprint is None and len(catalog) == 0


def test_observe_commit_read_back(home: Path) -> None:
    h = Home(home)
    assert _observe(h, "book:c/a", b"one\n\ntwo\n", family="generic") == "captured"
    catalog = read_catalog(h)
    assert catalog.sources() == ["book:c/a"]
    record = catalog.latest("book:c/a")
    assert catalog.content(record) == b"one\n\ntwo\n"
    assert record.content_sha256 == hashlib.sha256(b"one\n\ntwo\n").hexdigest()
    assert record.id == record.identity.snapshot_id
    assert catalog.options("book:c/a") == {"family": "generic"}
    entries = list(Log(h.log_path).entries())
    assert [(e.source, e.record_id, e.status, e.snapshot_id) for e in entries] == [
        ("record", "book:c/a", "captured", record.id)
    ]


def test_unchanged_writes_nothing(home: Path) -> None:
    h = Home(home)
    _observe(h, "book:c/a", b"same", family="generic")
    before = _tree(home)
    assert _observe(h, "book:c/a", b"same", family="generic") == "unchanged"
    assert _tree(home) == before


def test_changed_content_keeps_history(home: Path) -> None:
    h = Home(home)
    _observe(h, "book:c/a", b"v1")
    first = read_catalog(h).latest("book:c/a").id
    assert _observe(h, "book:c/a", b"v2") == "captured"
    catalog = read_catalog(h)
    assert [r.id for r in catalog.history("book:c/a")][0] == first
    assert len(catalog.history("book:c/a")) == 2
    assert catalog.content(catalog.latest("book:c/a")) == b"v2"
    assert catalog.content(catalog.record(first)) == b"v1"


def test_tampered_blob_is_refused(home: Path) -> None:
    h = Home(home)
    _observe(h, "book:c/a", b"original")
    catalog = read_catalog(h)
    record = catalog.latest("book:c/a")
    catalog.blob_path(record).write_bytes(b"tampered")
    with pytest.raises(EpistemeError) as info:
        read_catalog(h).content(record)
    assert info.value.code == "INVALID_INPUT"
