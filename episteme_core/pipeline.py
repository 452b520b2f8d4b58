"""``episteme pipeline``: capture (snapshot or manual-ingest), extract, chunk, index in one locked run.

Every stage skips what did not change: capture records unchanged content as unchanged, extraction
runs only for sources whose latest snapshot has no document of this episteme version, chunking
reuses the chunks of unchanged documents, and indexing keeps every shard it can. A re-run on
unchanged inputs therefore reads indexes and hashes files, and writes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from episteme_core.kernel.defaults import DEFAULT_MAX_CHARS, DEFAULT_OVERLAP_CHARS

if TYPE_CHECKING:
    from episteme_core.capture.http import FetchSettings
    from episteme_core.executor.base import ExecutorSpec
    from episteme_core.kernel.context import RunContext

STAGES = ("capture", "extract", "chunk", "index")


@attrs.frozen
class PipelineOptions:
    """What to capture and how: a manifest fetched with ``fetch`` (the settings ``snapshot`` builds
    from the same options), or a map of local files under ``root``; then the chunk options."""

    max_input_bytes: int
    max_sources: int
    manifest: str | None = None
    fetch: FetchSettings | None = None
    fail_fast: bool = False
    map: str | None = None
    root: Path | None = None
    confine_absolute: bool = False  # absolute localPath values must lie under root (``--root`` given)
    max_bytes: int | None = None  # per local file of a map
    max_chars: int = DEFAULT_MAX_CHARS
    overlap_chars: int = DEFAULT_OVERLAP_CHARS
    chunker: str | None = None  # the chunker to prefer (``--chunker``)
    executor: ExecutorSpec | None = None  # where extract, chunk and index run (None: this process)
    rehash: bool = False  # hash every local file of a map, trusting no recorded stat (``--rehash``)
    indexer: str | None = None  # the indexer (``--indexer``; default: config.json's, else bm25)
    list_unchanged: bool = False  # a map's unchanged files get report rows too (``--list-unchanged``)


def _capture(ctx: RunContext, options: PipelineOptions) -> Any:
    """The capture stage: the very functions ``snapshot`` and ``manual-ingest`` call."""
    update = ctx.progress.update
    if options.manifest is not None:
        from episteme_core.capture.manifest import read_manifest
        from episteme_core.capture.run import snapshot_sources

        assert options.fetch is not None, "a manifest run needs its fetch settings"
        known = {kind: sorted(c.name for c in ctx.plugins.all(kind)) for kind in ("family", "extractor")}
        entries = read_manifest(options.manifest, max_input_bytes=options.max_input_bytes,
                                max_sources=options.max_sources, known=known)
        return snapshot_sources(ctx.home, entries, options.fetch, fail_fast=options.fail_fast,
                                progress=update, warn=ctx.warn, command=ctx.command)
    from episteme_core.capture.manual import manual_ingest, read_map_of

    assert options.map is not None and options.root is not None and options.max_bytes is not None
    mapped, stats = read_map_of(ctx.home, options.map, max_input_bytes=options.max_input_bytes,
                                max_sources=options.max_sources, rehash=options.rehash)
    return manual_ingest(ctx.home, mapped, options.root, max_bytes=options.max_bytes, progress=update,
                         warn=ctx.warn, command=ctx.command, confine_absolute=options.confine_absolute,
                         rehash=options.rehash, stats=stats, list_unchanged=options.list_unchanged)


def run_pipeline(ctx: RunContext, options: PipelineOptions) -> dict[str, Any]:
    """Run every stage under one writer lock; returns each stage's report (JSON data)."""
    from episteme_core.chunking.run import check_options, chunk_home
    from episteme_core.executor import running
    from episteme_core.extract.run import extract_sources
    from episteme_core.records.convert import unstructure
    from episteme_core.search.indexers import build_index, get_indexer, report_data
    from episteme_core.stages.snapshots import read_catalog
    from episteme_core.store.commits import entry_count

    check_options(options.max_chars, options.overlap_chars)
    get_indexer(ctx.plugins, ctx.home, options.indexer)  # an unknown indexer is refused before any work
    update = ctx.progress.update

    def stage_progress(stage: str) -> Callable[[int, int, str], None]:
        def report(current: int, total: int, message: str) -> None:
            update(stage, current, total, "completed" if current == total else "started", message)

        return report

    with ctx.writing() as home, running(options.executor) as executor:
        update("pipeline", 0, len(STAGES), "started", "Capturing sources")
        captured = _capture(ctx, options)
        ctx.check_cancelled()
        update("pipeline", 1, len(STAGES), "started", "Extracting documents")
        catalog = read_catalog(home)  # the head; its buckets only if extract needs them
        # extract reuses every document whose snapshot and configuration are unchanged
        report = (
            extract_sources(home, ctx.plugins, None, {}, stage_progress("extract"), warn=ctx.warn,
                            executor=executor, catalog=catalog, report_rows=False)
            if catalog.index is not None and entry_count(catalog.index) else None
        )
        documents = report.documents if report is not None else []
        sources = report.sources if report is not None else 0
        for document in documents:
            for warning in document.warnings:
                ctx.warn("EXTRACTION_WARNING", f"{document.source}: {warning}", source=document.source,
                         snapshotId=document.snapshot_id)
        extracted = [document.source for document in documents if document.status != "failed"]
        failed = [document.source for document in documents if document.status == "failed"]
        # a summary per extracted document, the snapshots: not held while indexing
        del report, documents, catalog
        ctx.check_cancelled()
        update("pipeline", 2, len(STAGES), "started", "Creating evidence chunks")
        chunked = chunk_home(home, ctx.plugins.all("chunker"), max_chars=options.max_chars,
                             overlap_chars=options.overlap_chars, progress=stage_progress("chunk"),
                             prefer=options.chunker, warn=ctx.warn, executor=executor)
        ctx.check_cancelled()
        update("pipeline", 3, len(STAGES), "started", "Building search index")
        indexed = build_index(ctx, options.indexer, executor=executor)
        update("pipeline", 4, len(STAGES), "completed", "Done")
    return {
        "capture": captured.data(),
        "extract": {
            "extracted": extracted,
            "failed": failed,
            "reused": sources - len(extracted) - len(failed),
            "documents": sources,
        },
        "chunk": unstructure(chunked),
        "index": report_data(indexed),
    }


def render(data: dict[str, Any]) -> str:
    capture = data["capture"]
    counts = capture["counts"]
    extract = data["extract"]
    chunk = data["chunk"]
    index = data["index"]
    if {"shards", "chunks", "sources", "built", "kept"} <= set(index):
        sources = ", ".join(f"{s} {n}" for s, n in index["sources"].items()) or "none"
        indexed = (f"{index['shards']} shard(s), {index['chunks']} chunk(s) ({sources}); "
                   f"{len(index['built'])} built, {index['kept']} kept")
    else:  # a plugin indexer's report, as it is
        indexed = ", ".join(f"{key} {value}" for key, value in sorted(index.items()))
    return "\n".join([
        f"capture: {len(capture['sources'])} source(s): {counts['captured']} new, "
        f"{counts['unchanged']} unchanged, {counts['failed']} failed",
        f"extract: {len(extract['extracted'])} extracted, {len(extract.get('failed') or ())} failed, "
        f"{extract['reused']} unchanged"
        + "".join(f"\n  failed: {source}" for source in extract.get("failed") or ()),
        f"chunk:   {chunk['chunks']} chunk(s) from {chunk['documents']} document(s) "
        f"({chunk['chunked']} chunked, {chunk['reused']} unchanged)",
        f"index:   {indexed}",
        "Next: episteme query --term WORDS",
    ])
