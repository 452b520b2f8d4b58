"""ServedAnswerIsOneCommit: after any sequence of commits, a query through the server's shard cache answers exactly as the CLI does on the committed shards (never from an older commit, never a mix), and refuses stale shards with the CLI's error."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from episteme_core.bm25.writer import index_home
from episteme_core.errors import EpistemeError
from episteme_core.search.query import query
from episteme_core.serve.shardcache import ShardCache

from ._retrieval_world import WORDS, commit_and_chunk, documents


def _answer(home, term, shard_set=None):  # type: ignore[no-untyped-def]
    try:
        if shard_set is not None:
            return query(home, term, shard_set=shard_set())
        return query(home, term)
    except EpistemeError as exc:
        return (exc.code, exc.message, exc.hint)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rounds=st.lists(st.tuples(documents(max_documents=3), st.booleans(), st.booleans(), st.booleans()),
                    min_size=1, max_size=4),
    term=st.sampled_from(WORDS),
)
def test_served_answer_is_one_commit(tmp_path_factory, rounds, term) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("h")
    cache = None
    for docs, replace, index, reshard in rounds:
        home = commit_and_chunk(root, docs, replace=replace)
        if cache is None:
            cache = ShardCache(home)
        if index:
            index_home(home, reshard=reshard)
        assert _answer(home, term, cache.get) == _answer(home, term)
        assert _answer(home, term, cache.get) == _answer(home, term)  # cached: still the same commit
