"""Conformance: ``check_component`` runs a component through its kind's contract and behaviour."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from episteme_core.testing.sample import make_sample_home, store_snapshot
from episteme_core.testing.schemas import validate


def check_component(component: Any, kind: str | None = None) -> str:
    """Assert that ``component`` keeps its kind's contract; returns the kind.

    ``kind`` defaults to the most specific kind ``component`` fully satisfies. Beyond the members the
    registry checks (``episteme_core.kernel.contracts``), a chunker is run over a sample document (its
    chunks must be valid, sealed, bounded and reproducible), a family's hooks are called once, and an
    indexer builds and opens a sample home (its set and shards must keep their Protocols, name the
    indexer, rank by (-score, chunk id), apply filters, hold only committed chunks, and refuse shards
    a capture made stale).
    """
    from episteme_core.kernel.contracts import CONTRACTS, missing_members

    if kind is None:
        fitting = [k for k in CONTRACTS if not missing_members(component, k)]
        if not fitting:
            closest = min(CONTRACTS, key=lambda k: len(missing_members(component, k)))
            raise AssertionError(
                f"{component!r} is no component: as a {closest} it lacks "
                f"{', '.join(missing_members(component, closest))}"
            )
        kind = max(fitting, key=lambda k: len(CONTRACTS[k].attributes) + len(CONTRACTS[k].methods))
    missing = missing_members(component, kind)
    assert not missing, f"{kind} {getattr(component, 'name', component)!r} lacks {', '.join(missing)}"
    if kind == "chunker":
        _check_chunker(component)
    elif kind == "family":
        _check_family(component)
    elif kind == "indexer":
        _check_indexer(component)
    return kind


def sample_document(document_type: str | None = "text") -> Any:
    """A small sealed document (two sections, a long paragraph, a diagnostic and a limit)."""
    from episteme_core.records.evidence import Block, Diagnostic, Document, Provenance, Section, Span, seal

    sha = "0" * 64
    long_text = " ".join(f"Sentence {n} of a long paragraph." for n in range(1, 400))
    sections = [
        Section(id="intro", heading="Introduction", path=["Introduction"], anchor="intro", blocks=[
            Block(id="intro/1", kind="paragraph", text="A short first paragraph.", section_id="intro",
                  span=Span(0, 24)),
            Block(id="intro/2", kind="paragraph", text=long_text, section_id="intro",
                  normativity="normative"),
        ]),
        Section(id="more", heading="More", path=["More"], blocks=[
            Block(id="more/1", kind="note", text="A note.", section_id="more", normativity="informative"),
        ]),
    ]
    return seal(Document(
        id="", source="https://sample.example/doc", source_kind="http", snapshot_id="1" * 64,
        source_sha256=sha, content_type="text/plain", document_type=document_type, family="generic",
        authority="informative", title="Sample", status="ok", sections=sections,
        provenance=Provenance("episteme", "0", "text", "1", "generic", "1", sha, sha),
        url="https://sample.example/doc", diagnostics=[Diagnostic("SAMPLE", "info", "a sample")],
        limits=["no-layout"],
    ))


def _check_chunker(chunker: Any) -> None:
    from episteme_core.records.evidence import chunk_id

    for document_type in ("text", "record", "spec", None):
        document = sample_document(document_type)
        if not chunker.accepts(document):
            continue
        options = {"max_chars": 512, "overlap_chars": 64, "verbatim": frozenset()}
        chunks = chunker.chunk(document, **options)
        again = chunker.chunk(document, **options)
        assert [c.to_json() for c in chunks] == [c.to_json() for c in again], "chunks are not reproducible"
        for chunk in chunks:
            data = chunk.to_json()
            validate(data, "chunk")
            assert chunk.id == chunk_id(data), f"chunk {chunk.id} is not sealed (build it with build_chunks)"
            assert chunk.document_id == document.id and chunk.source == document.source
            assert chunk.chunker == f"{chunker.name}/{chunker.version}", chunk.chunker
        if callable(getattr(chunker, "accepts_json", None)):
            assert chunker.accepts_json(document.to_json()) is True
        if callable(getattr(chunker, "chunk_rows", None)):
            rows = chunker.chunk_rows(document.to_json(), **options)
            assert [json.loads(row) for row in rows] == [c.to_json() for c in chunks], (
                "chunk_rows and chunk disagree")


def _check_family(family: Any) -> None:
    from episteme_core.records.evidence import Block

    for url in ("https://example.org/", "https://sample.example/a#b", "not a url"):
        assert isinstance(family.matches(url), bool), f"matches({url!r}) is not a bool"
    number = family.section_number("1. Introduction", "intro")
    assert number is None or isinstance(number, str)
    refine = getattr(family, "refine_block", None)
    if callable(refine):
        block = Block(id="b", kind="paragraph", text="It MUST be so.")
        assert isinstance(refine(block, None), Block), "refine_block must return a Block"


def _check_indexer(indexer: Any) -> None:
    import tempfile

    from episteme_core.errors import EpistemeError
    from episteme_core.kernel.context import RunContext
    from episteme_core.kernel.contracts import SearchableShard, SearchableShards
    from episteme_core.kernel.loader import load_plugins
    from episteme_core.records.hits import Filters

    with tempfile.TemporaryDirectory() as folder:
        sample = make_sample_home(Path(folder) / "home")
        ctx = RunContext(command="check", home=sample.home, plugins=load_plugins())
        with ctx.writing():
            indexer.build(ctx, reshard=False)
        opened = indexer.open(sample.home)
        assert isinstance(opened, SearchableShards), f"open() of {indexer.name} is no SearchableShards"
        assert opened.indexer == indexer.name and opened.meta.get("indexer") == indexer.name, (
            "the commit must name its indexer (ShardsWriter does)")
        for shard in opened.shards:
            name = getattr(shard, "name", shard)
            assert isinstance(shard, SearchableShard), f"shard {name!r} is no SearchableShard"
        hits, total = opened.search("paragraph", 10)
        assert hits and total >= len(hits), "a word of the sample home finds nothing"
        ordered = sorted(hits, key=lambda hit: (-hit.score, hit.chunk_id))
        assert hits == ordered, "hits are not sorted by (-score, chunk id)"
        committed = {chunk.id for chunk in sample.chunks}
        for hit in hits:
            shard = opened.shard(hit.shard)
            assert {shard.row_json(row)["id"] for row in shard.shown_rows(hit)} <= committed
            assert shard.chunk(hit.chunk_id).id == hit.chunk_id
        assert opened.search("paragraph", 10, Filters(family="no-such-family")) == ([], 0), "filters ignored"
        store_snapshot(sample.home, "https://sample.example/later", b"A later capture.\n")
        try:
            indexer.open(sample.home)
        except EpistemeError as exc:
            assert exc.code == "STALE_INDEX", exc.code
        else:
            raise AssertionError(f"{indexer.name} answers from shards older than a capture "
                                 "(open_committed refuses them)")
