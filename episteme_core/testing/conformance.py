"""Conformance: ``check_component`` runs a component through its kind's contract and behaviour."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from episteme_core.testing.sample import make_sample_home, store_snapshot
from episteme_core.testing.schemas import validate


def check_component(component: Any, kind: str | None = None, *, options: Mapping[str, Any] | None = None,
                    argv: Sequence[str] = ()) -> str:
    """Assert that ``component`` keeps its kind's contract and behaves as its kind must; its kind.

    ``kind`` defaults to the kind whose contract ``component`` keeps with the most required members
    (and, for one that keeps none, the error names the kind it comes closest to). Beyond the members
    the registry checks (``episteme_core.kernel.contracts``), each kind is run on a small sample:

    - extractor: a sample snapshot of a media type it declares, and bytes that are no such thing,
      each give a sealed document that validates (never an exception);
    - family: its hooks are called once and return what they must;
    - chunker: a sample document is cut into valid, sealed, bounded, reproducible chunks;
    - indexer: it builds and opens a sample home, ranks, filters and refuses stale shards;
    - reader: ``open(spec)`` (``options`` are the spec's) gives a reader that names, among a sample
      read's candidates, at least one and only those offered;
    - exporter: its options parsed from ``argv``, it writes bytes to a binary stream over a sample home
      (extracted, chunked and indexed) and returns a JSON summary;
    - source, command: their options configure a parser; tool: its input schema is valid JSON Schema.
    """
    from episteme_core.kernel.contracts import CONTRACTS, missing_members

    if kind is None:
        kind = _kind_of(component)
    missing = missing_members(component, kind)
    assert not missing, f"{kind} {getattr(component, 'name', component)!r} lacks {', '.join(missing)}"
    checks: dict[str, Any] = {
        "source": lambda: _check_source(component),
        "extractor": lambda: _check_extractor(component),
        "family": lambda: _check_family(component),
        "chunker": lambda: _check_chunker(component),
        "indexer": lambda: _check_indexer(component),
        "reader": lambda: _check_reader(component, options or {}),
        "exporter": lambda: _check_exporter(component, argv),
        "command": lambda: _check_command(component),
        "tool": lambda: _check_tool(component),
    }
    assert set(checks) == set(CONTRACTS), "a kind without a behaviour check"
    try:
        checks[kind]()
    except AssertionError as exc:  # every failure names the kind it was checked as
        if str(exc).startswith(kind):
            raise
        raise AssertionError(f"{kind} {getattr(component, 'name', component)!r}: {exc}") from exc
    return kind


def _kind_of(component: Any) -> str:
    """The kind whose contract ``component`` keeps with the most required members; for one that keeps
    none, an error naming the kind it holds the most required members of, and what it lacks there."""
    from episteme_core.kernel.contracts import CONTRACTS, missing_members

    def size(kind: str) -> int:
        return len(CONTRACTS[kind].attributes) + len(CONTRACTS[kind].methods)

    fitting = [k for k in CONTRACTS if not missing_members(component, k)]
    if fitting:
        return max(fitting, key=size)
    closest = max(CONTRACTS, key=lambda k: (size(k) - len(missing_members(component, k)), -size(k)))
    raise AssertionError(
        f"{component!r} is no component: as a {closest} it lacks "
        f"{', '.join(missing_members(component, closest))}"
    )


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


def _check_source(source: Any) -> None:
    import argparse

    if callable(getattr(source, "configure", None)):
        source.configure(argparse.ArgumentParser(prog=f"episteme ingest {source.name}"))
    kind = getattr(source, "block_kind", "paragraph")
    assert isinstance(kind, str) and kind, "block_kind must be a non-empty string"


# What ``_check_extractor`` feeds an extractor of each media type: a real sample where one is small.
_SAMPLES: dict[str, bytes] = {
    "text/plain": b"A title\n\nA paragraph of sample text.\n",
    "text/markdown": b"# A title\n\nA paragraph of sample text.\n",
    "text/html": b"<!doctype html><title>T</title><h1 id=a>A title</h1><p>A paragraph of sample text.</p>",
    "application/xhtml+xml": b"<html xmlns='http://www.w3.org/1999/xhtml'><body><p>Sample.</p></body></html>",
    "application/xml": b"<?xml version='1.0'?><doc><p>A paragraph of sample text.</p></doc>",
    "text/xml": b"<?xml version='1.0'?><doc><p>A paragraph of sample text.</p></doc>",
}
_JUNK = b"\x00\xff\xfe not what it claims to be \x89PNG\r\n\x1a\n" * 8


def _check_extractor(extractor: Any) -> None:
    import tempfile

    from episteme_core.extract.family import Family
    from episteme_core.records.evidence import Document, document_id
    from episteme_core.records.extraction import ExtractRequest
    from episteme_core.stages.snapshots import read_catalog

    declared = [t for t in extractor.content_types if isinstance(t, str)]
    assert declared, f"extractor {extractor.name!r} declares no content type"
    media_type = next((t for t in declared if t in _SAMPLES), declared[0])
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder) / "home"
        inputs = [(_SAMPLES.get(media_type, _JUNK), "https://sample.example/good"),
                  (_JUNK, "https://sample.example/junk")]
        for content, url in inputs:
            store_snapshot(home, url, content, content_type=media_type)
        from episteme_core.store.home import Home

        for record in read_catalog(Home(home)).records():
            content = next(c for c, u in inputs if u == record.source)
            request = ExtractRequest(record=record, content=content, family=Family())
            try:
                document = extractor.extract(request)
            except Exception as exc:  # the contract: damage is a diagnostic, never an exception
                raise AssertionError(f"extractor {extractor.name!r} raised {type(exc).__name__} on "
                                     f"{record.source}: {exc} (give a partial or failed document)") from exc
            assert isinstance(document, Document), f"extract() of {extractor.name} gave no Document"
            data = document.to_json()
            validate(data, "document")
            assert document.id == document_id(data), (
                f"the document of {record.source} is not sealed (build it with DocumentBuilder)")


def _check_reader(kind: Any, options: Mapping[str, Any]) -> None:
    from episteme_core.records.reading import Candidate, ReaderSpec, ReadReply, ReadRequest

    spec = ReaderSpec(name="check", kind=kind.name, options=dict(options))
    try:
        reader = kind.open(spec)
    except Exception as exc:
        raise AssertionError(f"reader kind {kind.name!r}: open(spec) raised {type(exc).__name__}: {exc} "
                             "(give check_component the options it needs: options=...)") from exc
    for member in ("name", "kind", "slots", "timeout"):
        assert hasattr(reader, member), (
            f"open() of reader kind {kind.name!r} gave {reader!r}, which has no {member}")
    for method in ("read", "health", "begin_run", "close"):
        assert callable(getattr(reader, method, None)), f"the reader of {kind.name!r} has no {method}()"
    texts = ["Tides follow the moon.", "The capital of France is Paris.", "Bread needs flour and water."]
    candidates = tuple(Candidate(label=f"p{i}", text=t, score=float(3 - i), ref=f"sample#{i}")
                       for i, t in enumerate(texts, start=1))
    request = ReadRequest(question="What is the capital of France?", shard="sample", source="sample",
                          candidates=candidates)
    try:
        reader.health()
        reader.begin_run(request.question, [request.shard])
        reply = reader.read(request)
    finally:
        reader.close()
    assert isinstance(reply, ReadReply), f"read() of {kind.name!r} gave {reply!r}, not a ReadReply"
    named = list(reply.labels)
    assert named, f"the reader of {kind.name!r} named no candidate for a question one of them answers"
    assert set(named) <= set(request.labels), f"the reader of {kind.name!r} named {named}, not all offered"


def _check_exporter(exporter: Any, argv: Sequence[str]) -> None:
    import argparse
    import io
    import tempfile

    from episteme_core.kernel.context import RunContext
    from episteme_core.kernel.loader import load_plugins
    from episteme_core.records.canonical import canonical_bytes
    from episteme_core.search.indexers import build_index
    from episteme_core.store.output import ExportStream

    parser = argparse.ArgumentParser(prog=f"episteme export {exporter.name}", exit_on_error=False)
    exporter.configure(parser)
    try:
        args = parser.parse_args(list(argv))
    except (argparse.ArgumentError, SystemExit) as exc:
        raise AssertionError(f"exporter {exporter.name!r}: its options refuse {list(argv)!r} "
                             "(give check_component the arguments it needs: argv=...)") from exc
    with tempfile.TemporaryDirectory() as folder:
        sample = make_sample_home(Path(folder) / "home")
        ctx = RunContext(command="check", home=sample.home, plugins=load_plugins())
        build_index(ctx)  # an exporter may export query results: the sample home is indexed too
        buffer = io.BytesIO()
        stream = ExportStream(buffer)
        summary = exporter.export(args, ctx, stream)
        if not stream.closed:
            stream.flush()
    assert isinstance(summary, Mapping), f"export() of {exporter.name!r} returned {summary!r}, not a mapping"
    canonical_bytes(dict(summary))  # JSON data, or this raises
    assert buffer.getvalue(), f"exporter {exporter.name!r} wrote no bytes"


def _check_command(command: Any) -> None:
    import argparse

    command.configure(argparse.ArgumentParser(prog=f"episteme {command.name}"))


def _check_tool(tool: Any) -> None:
    from episteme_core.serve.calls import tool_problem

    problem = tool_problem(tool)
    assert problem is None, f"tool {tool.name!r} cannot be served: {problem}"
