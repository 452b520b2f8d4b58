"""PassagesStayInOneRecord: a passage of several chunks is consecutive paragraphs of one record, or consecutive chunks of one section of one document, each shown verbatim where the passage says it is."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from episteme_core.bm25.writer import index_home
from episteme_core.search.query import query
from episteme_core.stages.chunks import iter_chunk_rows

from ._retrieval_world import WORDS, commit_and_chunk, documents


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(docs=documents(), term=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join),
       max_chars=st.sampled_from([120, 300, 20_000]))
def test_passages_stay_in_one_record(docs, term, max_chars) -> None:  # type: ignore[no-untyped-def]
    with tempfile.TemporaryDirectory() as tmp:
        home = commit_and_chunk(Path(tmp) / "home", docs, max_chars=200, overlap=30)
        index_home(home)
        chunks = {row["id"]: row for row, _ in iter_chunk_rows(home)}
        result = query(home, term, limit=100, max_chars=20_000)
        for item in result.results:
            if item.paragraphs is None:
                assert item.snippet == chunks[item.chunk_id]["text"][item.snippet_start:item.snippet_end]
                continue
            rows = [chunks[p.chunk_id] for p in item.paragraphs]
            for p, row in zip(item.paragraphs, rows, strict=True):
                assert item.snippet[p.start:p.end] == row["text"]  # max-chars 20,000: the whole passage
            if rows[0].get("recordId") is not None:
                assert {row["recordId"] for row in rows} == {rows[0]["recordId"]}
                numbers = [(row["paragraph"], row["part"]["index"]) for row in rows]
                assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)
            else:
                assert {(row["documentId"], row["sectionId"]) for row in rows} == {
                    (rows[0]["documentId"], rows[0]["sectionId"])}
                parts = [row["part"]["index"] for row in rows]
                assert parts == list(range(parts[0], parts[0] + len(parts)))
        bounded = query(home, term, limit=100, max_chars=max_chars)
        assert all(len(item.snippet) <= max_chars for item in bounded.results)
