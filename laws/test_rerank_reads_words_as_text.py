"""RerankReadsWordsAsText: a query answered from the shards' stored words (``bm25.words``) gives the results, scores, snippets and citations it gives from its candidates' text."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import attrs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from episteme_core.bm25.shards import open_shards
from episteme_core.bm25.writer import index_home
from episteme_core.records.evidence import Block, Document, Provenance, Section, Span, seal
from episteme_core.search.query import query

from ._retrieval_world import SHA, WORDS, commit_and_chunk, texts

KINDS = (None, None, "contents", "caption", "boilerplate", "prose")


@st.composite
def documents(draw: Any) -> list[Document]:
    """Documents and records (their paragraphs of random kinds: a book's contents weigh less)."""
    out = []
    for d in range(draw(st.integers(min_value=1, max_value=4))):
        record = draw(st.booleans())
        sections, position, number = [], 0, 0
        for s, paragraphs in enumerate(draw(st.lists(st.lists(texts, min_size=1, max_size=4), min_size=1,
                                                     max_size=3)), start=1):
            blocks = []
            for text in paragraphs:
                number += 1
                kind = draw(st.sampled_from(KINDS))
                attributes = {"n": number, **({"paragraphKind": kind} if kind else {})} if record else {}
                blocks.append(Block(id=f"b{number}", kind="paragraph", text=text, section_id=f"s{s}",
                                    span=Span(position, position + len(text)), attributes=attributes))
                position += len(text) + 2
            sections.append(Section(id=f"s{s}", heading=f"Heading {s}", path=[f"Heading {s}"], blocks=blocks))
        source = f"books:doc/{d}" if record else f"https://example.org/{d}"
        out.append(seal(Document(
            id="", source=source, source_kind="books" if record else "http", snapshot_id="c" * 64,
            source_sha256=SHA, content_type="text/plain", document_type="record" if record else "text",
            family="generic", authority="informative", title=source, status="ok", sections=sections,
            provenance=Provenance("episteme", "0", "text", "1", "generic", "1", SHA, "b" * 64),
            url=None if record else source,
        )))
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(docs=documents(), term=st.lists(st.sampled_from(WORDS) | texts, min_size=1, max_size=3).map(" ".join),
       limit=st.sampled_from([1, 3, 10]), max_chars=st.sampled_from([80, 300, 20_000]))
def test_rerank_reads_words_as_text(docs, term, limit, max_chars) -> None:  # type: ignore[no-untyped-def]
    with tempfile.TemporaryDirectory() as tmp:
        home = commit_and_chunk(Path(tmp) / "home", docs, max_chars=200, overlap=30)
        index_home(home)
        stored = open_shards(home)
        assert all(shard.words for shard in stored.shards)  # one language: every shard has its words
        from_text = open_shards(home)
        for shard in from_text.shards:
            shard.words = False  # as a shard built before them: the rerank reads the rows' text
        for quoted in (term, f'"{term}"'):
            kwargs: dict[str, Any] = {"limit": limit, "max_chars": max_chars}
            assert attrs.asdict(query(home, quoted, shard_set=stored, **kwargs)) == attrs.asdict(
                query(home, quoted, shard_set=from_text, **kwargs))


def _shard_bytes(root: Path, docs: list[Document], *, reanalysed: bool,
                 fields: dict[str, int] | None = None) -> list[bytes]:
    """The shards a fresh home of ``docs`` is indexed into (with ``fields`` weights in its
    config.json): their words taken from the build's own tokens, or (``reanalysed``) from each row's
    text analysed again (``words.word_arrays``)."""
    import json
    from unittest import mock

    from episteme_core.bm25.words import WordSpans

    home = commit_and_chunk(root, docs, max_chars=200, overlap=30)
    if fields is not None:
        (root / "config.json").write_text(json.dumps({"fields": fields}))
    if reanalysed:
        with mock.patch.object(WordSpans, "arrays", lambda self, views: None):
            index_home(home)
    else:
        index_home(home)
    return [path.read_bytes() for path in sorted((root / "shards" / "objects").rglob("*.shard"))]


@settings(max_examples=25, deadline=None)
@given(docs=documents())
def test_the_stored_words_are_the_rows_text_analysed(docs) -> None:  # type: ignore[no-untyped-def]
    """The words a shard stores, gathered from the tokens its build numbered, are byte for byte
    those of its rows' text analysed on its own, runs of several chunks and marked kinds included."""
    with tempfile.TemporaryDirectory() as tmp:
        taken = _shard_bytes(Path(tmp) / "taken", docs, reanalysed=False)
        again = _shard_bytes(Path(tmp) / "again", docs, reanalysed=True)
        assert taken and taken == again


def test_identifiers_leave_the_stored_words_as_the_text_analysed() -> None:
    """Identifiers add tokens after a row's words (``frameancestors``, ``max``/``idle``, ``rfc``/``2119``,
    ``@vocab``): the stored words are still the text's words alone."""
    text = ("The frame-ancestors directive sets maxIdleTimeout per RFC2119 and @vocab, HTTPServer "
            "binary64 x_y_z; then plain words follow the identifiers.")
    docs = [seal(Document(
        id="", source=f"https://example.org/{n}", source_kind="http", snapshot_id="c" * 64,
        source_sha256=SHA, content_type="text/plain", document_type="text", family="generic",
        authority="informative", title=f"maxIdle {n}", status="ok",
        sections=[Section(id="s1", heading="Heading RFC2119", path=["Heading RFC2119"], blocks=[
            Block(id=f"b{i}", kind="paragraph", text=f"{text} {n} {i}", section_id="s1",
                  span=Span(0, len(text)), attributes={}) for i in range(3)])],
        provenance=Provenance("episteme", "0", "text", "1", "generic", "1", SHA, "b" * 64),
        url=f"https://example.org/{n}")) for n in range(3)]
    with tempfile.TemporaryDirectory() as tmp:
        for n, fields in enumerate((None, {"body": 2, "title": 3, "heading": 0})):
            taken = _shard_bytes(Path(tmp) / f"taken{n}", docs, reanalysed=False, fields=fields)
            assert taken == _shard_bytes(Path(tmp) / f"again{n}", docs, reanalysed=True, fields=fields)
