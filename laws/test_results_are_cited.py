"""ResultsAreCited: every query result resolves to stored bytes: the quote is the cited block's text at the
TextPositionSelector offsets (in the documents stage), and where the citation claims source offsets, the
decoded captured bytes at that span are exactly the quote; prefix and suffix sit right around it."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from episteme_core.stages.documents import read_documents
from episteme_core.store.blobs import BlobStore
from episteme_core.store.home import Home
from episteme_core.testing import invoke
from episteme_core.text.analyzer import tokenize
from episteme_core.text.decode import decode

from ._retrieval_world import WORDS

_paragraphs = st.lists(
    st.lists(st.sampled_from(WORDS) | st.text(min_size=1, max_size=10), min_size=1, max_size=60).map(" ".join),
    min_size=1, max_size=10,
)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(paragraphs=_paragraphs, term=st.sampled_from(WORDS), max_chars=st.integers(min_value=80, max_value=400))
def test_results_are_cited(tmp_path_factory, paragraphs, term, max_chars) -> None:  # type: ignore[no-untyped-def]
    work = tmp_path_factory.mktemp("src")
    (work / "a.txt").write_text("\r\n\r\n".join(paragraphs), "utf-8")
    (work / "map.json").write_text(json.dumps(
        [{"sourceUrl": "https://example.org/a.txt", "localPath": "a.txt", "contentType": "text/plain"}]))
    root = work / "home"
    run = invoke("--home", str(root), "pipeline", "--map", str(work / "map.json"), "--max-chars", "256",
                 "--overlap-chars", "40", "--json")
    assert run.exit_code == 0, run.stderr
    found = invoke("--home", str(root), "query", "--term", term, "--limit", "100", "--max-chars", str(max_chars),
                   "--json")
    assert found.exit_code == 0, found.stderr
    results = found.envelope["data"]["results"]
    words = {t for p in paragraphs for t in tokenize(p)}
    if set(tokenize(term)) & words:
        assert results, "a term the text holds must be found"
    home = Home(root)
    documents = {d.id: d for d in read_documents(home)}
    for result in results:
        cite = result["citation"]
        quote, position = cite["selector"]
        document = documents[cite["documentId"]]
        block = next(b for b in document.blocks() if b.id == cite["blockId"])
        assert quote["exact"] and quote["exact"] in result["snippet"]
        if cite["positionIn"] == "source":
            text = decode(BlobStore(home.blobs_dir).get(cite["sourceSha256"]), "utf-8")
            start, end = position["start"], position["end"]
            assert cite["span"] == {"start": start, "end": end}
        else:
            text = block.text
            start, end = position["start"], position["end"]
        assert text[start:end] == quote["exact"]
        assert text[:start].endswith(quote["prefix"])
        assert text[end:].startswith(quote["suffix"])
