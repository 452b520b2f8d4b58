"""CommitInFlightAnswersTheLastCommit: while a writer is at work, a query whose shards lag behind the chunks or the log answers exactly as it did from the last commit (never STALE_INDEX because of the commit in flight), and says so; once no writer is at work, it refuses as stale."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from episteme_core.bm25.writer import index_home
from episteme_core.errors import EpistemeError
from episteme_core.kernel.context import RunContext
from episteme_core.kernel.loader import load_plugins
from episteme_core.records.storage import LogEntry
from episteme_core.search.query import query
from episteme_core.stages.chunks import read_chunks
from episteme_core.store.log import Log

from ._retrieval_world import WORDS, commit_and_chunk, documents


def _answer(home, term, warn=None):  # type: ignore[no-untyped-def]
    try:
        return query(home, term, warn=warn)
    except EpistemeError as exc:
        return (exc.code, exc.message)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    first=documents(max_documents=3),
    second=documents(max_documents=3),
    captured=st.booleans(),
    term=st.sampled_from(WORDS),
)
def test_commit_in_flight_answers_the_last_commit(tmp_path_factory, first, second, captured, term) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("h")
    home = commit_and_chunk(root, first)
    index_home(home)
    before = _answer(home, term)
    chunks = {c.id for c in read_chunks(home)}
    ctx = RunContext(command="ingest", home=home, plugins=load_plugins())
    with ctx.writing():
        commit_and_chunk(root, second)
        if captured:
            Log(home.log_path).append(LogEntry(time="2026-01-01T00:00:00Z", command="ingest",
                                               source="https://e.org/x", status="captured", snapshot_id="d" * 64))
        behind = captured or {c.id for c in read_chunks(home)} != chunks
        notes: list[str] = []
        assert _answer(home, term, lambda code, message, **extra: notes.append(code)) == before
        assert notes == (["INDEX_UPDATING"] if behind else [])
    after = _answer(home, term)
    if behind:
        assert after[0] == "STALE_INDEX"
    else:
        assert after == before
