"""OneSourcePerShard: every shard holds chunks of exactly one source, never more than shard_size of them,
and together the shards hold every committed chunk exactly once."""

from __future__ import annotations

import json
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from episteme_core.bm25.shards import open_shards
from episteme_core.bm25.writer import index_home
from episteme_core.stages.chunks import read_chunks

from ._retrieval_world import commit_and_chunk, documents


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(docs=documents(), shard_size=st.integers(min_value=1, max_value=6))
def test_one_source_per_shard(tmp_path_factory, docs, shard_size) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("h")
    (root / "config.json").write_text(json.dumps({"shard_size": shard_size}))
    home = commit_and_chunk(root, docs)
    index_home(home)
    held: Counter[str] = Counter()
    for shard in open_shards(home).shards:
        assert 1 <= shard.rows <= shard_size
        assert shard.name.startswith(shard.source)
        for row in range(shard.rows):
            data = shard.row_json(row)
            assert data["sourceKind"] == shard.source
            held[data["id"]] += 1
    assert held == Counter(chunk.id for chunk in {c.id: c for c in read_chunks(home)}.values())
