"""ShardsAreFrozen: once written, a shard's bytes never change while the index names it; new chunks go to
new shards, and a chunk that is gone is never returned by a query."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from episteme_core.bm25.shards import STAGE, open_shards
from episteme_core.bm25.writer import index_home
from episteme_core.stages.chunks import read_chunks
from episteme_core.store.commits import Stage

from ._retrieval_world import commit_and_chunk, documents


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rounds=st.lists(st.tuples(documents(max_documents=3), st.booleans()), min_size=2, max_size=4))
def test_shards_are_frozen(tmp_path_factory, rounds) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("h")
    seen: dict[str, bytes] = {}  # shard name -> bytes when first written
    for docs, replace in rounds:
        home = commit_and_chunk(root, docs, replace=replace)
        index_home(home)
        stage = Stage(home, STAGE)
        index = stage.read_index()
        assert index is not None
        for entry in index.entries:
            data = stage.read_bytes(entry)
            assert seen.setdefault(entry.key, data) == data
        live = {chunk.id for chunk in read_chunks(home)}
        shard_set = open_shards(home)
        for word in ("whale", "sea", "a", "must"):
            hits, _ = shard_set.search(word, 100)
            assert {hit.chunk_id for hit in hits} <= live
