"""QueryIsBounded: a query never returns more than --limit results nor a snippet longer than --max-chars, and its paging (offset, nextOffset, total) is consistent: a page is full unless it is the last, no passage is shown twice, and no page is named past the deepest offset (``MAX_OFFSET``)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from episteme_core.bm25.shards import Filters
from episteme_core.bm25.writer import index_home
from episteme_core.search.query import MAX_OFFSET, query
from episteme_core.store.home import Home

from ._retrieval_world import SOURCES, WORDS, commit_and_chunk, make_document


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Home:
    import random

    rng = random.Random(7)
    docs = []
    for d in range(8):
        kind = SOURCES[d % len(SOURCES)]
        sections = [[" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 80))) for _ in range(4)]
                    for _ in range(3)]
        docs.append(make_document(f"{kind}:doc/{d}", kind, sections, record=kind in ("books", "git")))
    home = commit_and_chunk(tmp_path_factory.mktemp("h") / "home", docs, max_chars=400, overlap=50)
    index_home(home)
    return home


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    term=st.lists(st.sampled_from(WORDS) | st.text(min_size=1, max_size=6), min_size=1, max_size=3).map(" ".join),
    limit=st.integers(min_value=1, max_value=100),
    offset=st.integers(min_value=0, max_value=40),
    max_chars=st.integers(min_value=80, max_value=500),
    source=st.none() | st.sampled_from(["http", "books", "git"]).map(lambda s: (s,)),
)
# a quoted phrase over overlapping runs: its passages are joined as an unquoted query's are
@example(term='" whale', limit=100, offset=0, max_chars=500, source=("git",))
def test_query_is_bounded(built: Home, term, limit, offset, max_chars, source) -> None:  # type: ignore[no-untyped-def]
    if not term.strip():
        return
    result = query(built, term, filters=Filters(source=source), limit=limit, offset=offset, max_chars=max_chars)
    assert len(result.results) <= limit
    for item in result.results:
        assert 0 < len(item.snippet) <= max_chars
        assert item.snippet_end - item.snippet_start == len(item.snippet)
    # total counts matching passages before overlapping runs are joined: pages hold at most that many
    assert len(result.results) <= max(0, min(limit, result.total - offset))
    if result.next_offset is not None:
        assert len(result.results) == limit and result.next_offset == offset + limit
        assert query(built, term, filters=Filters(source=source), limit=1, offset=result.next_offset,
                     max_chars=max_chars).results, "nextOffset points at a result"
        assert result.next_offset <= MAX_OFFSET
    elif result.results and offset + len(result.results) <= MAX_OFFSET:  # past it no page is named
        after = query(built, term, filters=Filters(source=source), limit=100, offset=offset + len(result.results),
                      max_chars=max_chars)
        assert after.results == [], "no nextOffset but more results"
    assert [r.rank for r in result.results] == list(range(offset + 1, offset + 1 + len(result.results)))
    # results come best first, and a passage (its chunks) is never shown twice on the way
    everything = query(built, term, filters=Filters(source=source), limit=100, offset=0, max_chars=max_chars)
    scores = [r.score for r in everything.results]
    assert scores == sorted(scores, reverse=True)
    shown = [c for r in everything.results for c in ([p.chunk_id for p in r.paragraphs] if r.paragraphs
                                                     else [r.chunk_id])]
    assert len(shown) == len(set(shown))
