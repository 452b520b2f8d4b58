"""CommitOfChangesEqualsWhole: a commit of a few changed keys leaves the files a commit of the whole would.

``Stage.commit_changes`` over a bucketed stage reads and rewrites only the buckets the changed keys
fall in (and commits the whole when the layout changes); whatever changed, the stage's files after
it and its prune are byte for byte those of a whole commit of the same content in a home of its
own, and a new process reads back the same entries and metadata.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from episteme_core.records.storage import StageEntry
from episteme_core.store.commits import BUCKETS_FROM_ENV, Stage, forget_process_memory
from episteme_core.store.home import Home


@pytest.fixture(autouse=True)
def fresh_process_memory(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv(BUCKETS_FROM_ENV, "64")
    forget_process_memory()
    yield
    forget_process_memory()


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _put(stage: Stage, key: str, version: int) -> StageEntry:
    return stage.put_bytes(key, f"{key} version {version}".encode(), ".json")  # the bytes name the key


def _whole(stage: Stage, content: dict[str, int]) -> Any:
    entries = [_put(stage, key, version) for key, version in content.items()]
    meta = {"inputs": {key: f"v{version}" for key, version in content.items()},
            "total": sum(content.values()), "options": {"size": 3}}
    return stage.commit(entries, meta)


changes = st.lists(st.tuples(st.integers(0, 199), st.sampled_from(["put", "drop"]), st.integers(1, 3)),
                   min_size=0, max_size=12)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(changes=changes, first=st.integers(120, 200))
def test_a_commit_of_changes_is_the_commit_of_the_whole(
        tmp_path_factory: pytest.TempPathFactory, changes: list[tuple[int, str, int]], first: int) -> None:
    work = tmp_path_factory.mktemp("changes")
    content = {f"key{n:04d}": 0 for n in range(first)}
    stage = Stage(Home(work / "a"), "chunks")
    _whole(stage, content)
    stage.prune(stage.read_index())  # type: ignore[arg-type]
    forget_process_memory()
    base = stage.read_index()
    touched: set[str] = set()
    for number, what, version in changes:
        key = f"key{number:04d}"
        touched.add(key)
        if what == "put":
            content[key] = version
        else:
            content.pop(key, None)
    put = [_put(stage, key, content[key]) for key in sorted(touched) if key in content]
    drop = sorted(key for key in touched if key not in content)
    values = {key: f"v{content[key]}" for key in touched if key in content}
    committed = stage.commit_changes(base, head={"total": sum(content.values()), "options": {"size": 3}},
                                     fields=["inputs"], put=put, drop=drop, values={"inputs": values})
    stage.prune(committed)
    other = Stage(Home(work / "b"), "chunks")
    whole = _whole(other, content)
    other.prune(whole)
    assert committed.fingerprint == whole.fingerprint
    assert _files(stage.dir) == _files(other.dir)
    forget_process_memory()
    again = stage.read_index()
    assert again is not None and again.entries == whole.entries and again.meta == whole.meta
