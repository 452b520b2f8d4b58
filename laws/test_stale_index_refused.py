"""StaleIndexRefused: after the chunks change or a new capture is logged, query refuses with STALE_INDEX
("run episteme index") until the index is rebuilt, whenever no writer is at work; it never answers from
obsolete evidence (while a writer is at work it answers from the last commit: CommitInFlightAnswersTheLastCommit)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from episteme_core.bm25.shards import open_shards
from episteme_core.bm25.writer import index_home
from episteme_core.errors import EpistemeError
from episteme_core.records.storage import LogEntry
from episteme_core.search.query import query
from episteme_core.stages.chunks import read_chunks
from episteme_core.store.log import Log

from ._retrieval_world import commit_and_chunk, documents


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    first=documents(max_documents=3),
    second=documents(max_documents=3),
    capture=st.sampled_from(["captured", "unchanged", None]),
)
def test_stale_index_refused(tmp_path_factory, first, second, capture) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("h")
    home = commit_and_chunk(root, first)
    with pytest.raises(EpistemeError) as missing:
        query(home, "whale")
    assert missing.value.code == "STALE_INDEX" and missing.value.hint == "run episteme index"
    index_home(home)
    query(home, "whale")  # fresh: answers
    before = {c.id for c in read_chunks(home)}
    commit_and_chunk(root, second)
    changed = {c.id for c in read_chunks(home)} != before
    if capture is not None:
        Log(home.log_path).append(LogEntry(time="2026-01-01T00:00:00Z", command="snapshot",
                                           source="https://e.org/x", status=capture, snapshot_id="d" * 64))
    if changed or capture == "captured":
        with pytest.raises(EpistemeError) as stale:
            open_shards(home)
        assert stale.value.code == "STALE_INDEX" and stale.value.hint == "run episteme index"
    index_home(home)
    live = {c.id for c in read_chunks(home)}
    hits, _ = open_shards(home).search("whale sea ship a must", 1000)
    assert {hit.chunk_id for hit in hits} <= live
