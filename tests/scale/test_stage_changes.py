"""A commit of a few changed keys (``Stage.commit_changes``) reads and rewrites only the buckets those
keys fall in, plus the head (that it leaves the bytes of a whole commit is the law
CommitOfChangesEqualsWhole)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from episteme_core.records.storage import StageEntry
from episteme_core.store.commits import (
    BUCKETS_FROM_ENV,
    LazyStageIndex,
    Stage,
    bucket_of,
    forget_process_memory,
)
from episteme_core.store.home import Home


@pytest.fixture(autouse=True)
def fresh_process_memory(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv(BUCKETS_FROM_ENV, "64")
    forget_process_memory()
    yield
    forget_process_memory()


def _put(stage: Stage, key: str, version: int) -> StageEntry:
    return stage.put_bytes(key, f"{key} version {version}".encode(), ".json")  # the bytes name the key


def _whole(stage: Stage, content: dict[str, int]) -> Any:
    entries = [_put(stage, key, version) for key, version in content.items()]
    meta = {"inputs": {key: f"v{version}" for key, version in content.items()},
            "total": sum(content.values()), "options": {"size": 3}}
    return stage.commit(entries, meta)


def test_one_changed_key_reads_and_writes_one_bucket_and_the_head(tmp_path: Path) -> None:
    from . import audit

    stage = Stage(Home(tmp_path), "chunks")
    content = {f"key{n:04d}": 0 for n in range(1000)}  # 8 buckets of about 128
    _whole(stage, content)
    forget_process_memory()
    base = stage.read_index()
    assert isinstance(base, LazyStageIndex) and len(base.buckets) == 8
    before = set(os.listdir(stage.dir / "buckets"))
    audit._seen.clear()
    audit._watching[:] = [str(stage.dir / "buckets")]
    try:
        entry = _put(stage, "key0500", 7)
        committed = stage.commit_changes(base, head={"total": 7, "options": {"size": 3}}, fields=["inputs"],
                                         put=[entry], values={"inputs": {"key0500": "v7"}})
        removed = stage.prune(committed)
    finally:
        audit._watching.clear()
    opened = {Path(path).name for event, path in audit._seen if event == "open"}
    number = bucket_of("key0500", 8)
    old = base.buckets[number]["sha256"]
    untouched = {f"{b['sha256']}.json" for n, b in enumerate(base.buckets) if n != number}
    assert f"{old}.json" in opened and not opened & untouched  # the changed bucket read, no other
    after = set(os.listdir(stage.dir / "buckets"))
    assert len(after - before) == 1 and before - after == {f"{old}.json"}
    assert removed == 1  # the object key0500 named before
    assert not base._entries  # the other buckets were never read
    forget_process_memory()
    assert stage.read_index().meta["inputs"]["key0500"] == "v7"  # type: ignore[union-attr]
