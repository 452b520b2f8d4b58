"""PagesCompose: following ``nextOffset`` from the first page shows, page by page, exactly the results
of one page holding them all, each once, copies folded alike; a ``nextOffset`` always names a page
with results, and the last page has none, even where only copies of shown texts follow it."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from episteme_core.bm25.writer import index_home
from episteme_core.search.query import query
from episteme_core.store.home import Home

from ._retrieval_world import WORDS, commit_and_chunk, make_document


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Home:
    import random

    rng = random.Random(11)
    docs = []
    for d in range(6):
        sections = [[" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 40))) for _ in range(3)]
                    for _ in range(3)]
        docs.append(make_document(f"http:doc/{d}", "http", sections))
        if d % 2 == 0:  # the same text under another URL of the shard, and in another shard
            docs.append(make_document(f"http:copy/{d}", "http", sections))
            docs.append(make_document(f"file:copy/{d}", "file", sections))
        if d % 3 == 0:  # the same words in capitals: other text, one identity of words
            docs.append(make_document(f"http:loud/{d}", "http", [[text.upper() for text in section]
                                                                 for section in sections]))
        if d % 2 == 1:  # records: runs of several paragraphs, held twice, and once with two joined
            docs.append(make_document(f"books:doc/{d}", "books", sections, record=True))
            docs.append(make_document(f"books:copy/{d}", "books", sections, record=True))
            joined = [[" ".join(section[:2]), *section[2:]] for section in sections]
            docs.append(make_document(f"books:joined/{d}", "books", joined, record=True))
    home = commit_and_chunk(tmp_path_factory.mktemp("h") / "home", docs, max_chars=300, overlap=40)
    index_home(home)
    return home


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    term=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join),
    limit=st.integers(min_value=1, max_value=9),
    exact=st.booleans(),
)
def test_pages_compose(built: Home, term: str, limit: int, exact: bool) -> None:
    whole = query(built, term, limit=100, exact=exact)
    assert whole.next_offset is None, "the world holds fewer than 100 results"
    shown, offset = [], 0
    while True:
        page = query(built, term, limit=limit, offset=offset, exact=exact)
        assert page.results or offset == 0, f"nextOffset {offset} names an empty page"
        shown.extend((r.chunk_id, r.snippet) for r in page.results)
        if page.next_offset is None:
            break
        assert len(page.results) == limit and page.next_offset == offset + limit
        offset = page.next_offset
    assert shown == [(r.chunk_id, r.snippet) for r in whole.results]
