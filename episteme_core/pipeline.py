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

if TYPE_CHECKING:
    from episteme_core.cli.context import Context

STAGES = ("capture", "extract", "chunk", "index")


@attrs.frozen
class PipelineOptions:
    """What to capture and how; network settings apply to ``manifest`` runs."""

    manifest: str | None = None
    map: str | None = None
    root: Path | None = None
    max_input_bytes: int = 64 * 1024 * 1024
    max_sources: int = 1000
    max_bytes: int = 25 * 1024 * 1024
    timeout_ms: int = 60_000
    retries: int = 2
    allow_localhost: bool = False
    allow_private_networks: bool = False
    fail_fast: bool = False
    max_chars: int = 6000
    overlap_chars: int = 400


def _capture(ctx: Context, options: PipelineOptions) -> Any:

    update = ctx.progress.update
    if options.manifest is not None:
        from episteme_core.capture.http import FetchSettings
        from episteme_core.capture.manifest import read_manifest
        from episteme_core.capture.netguard import NetPolicy
        from episteme_core.capture.run import snapshot_sources

        entries = read_manifest(options.manifest, max_input_bytes=options.max_input_bytes,
                                max_sources=options.max_sources)
        settings = FetchSettings(
            timeout_s=options.timeout_ms / 1000.0, max_bytes=options.max_bytes, retries=options.retries,
            policy=NetPolicy(allow_localhost=options.allow_localhost,
                             allow_private_networks=options.allow_private_networks),
        )
        return snapshot_sources(ctx.home, entries, settings, fail_fast=options.fail_fast, progress=update,
                                warn=ctx.warn, command=ctx.command)
    from episteme_core.capture.manifest import read_map
    from episteme_core.capture.manual import manual_ingest

    assert options.map is not None
    mapped = read_map(options.map, max_input_bytes=options.max_input_bytes, max_sources=options.max_sources)
    root = options.root or (Path.cwd() if options.map == "-" else Path(options.map).absolute().parent)
    return manual_ingest(ctx.home, mapped, root.absolute(), max_bytes=options.max_bytes, progress=update,
                         warn=ctx.warn, command=ctx.command)


def run_pipeline(ctx: Context, options: PipelineOptions) -> dict[str, Any]:
    """Run every stage under one writer lock; returns each stage's report (JSON data)."""
    from episteme_core.builtins.chunking import chunkers
    from episteme_core.chunking import check_options, chunk_home
    from episteme_core.convert import unstructure
    from episteme_core.extract.run import extract_documents
    from episteme_core.index.indexing import index_home
    from episteme_core.snapshots import read_catalog

    check_options(options.max_chars, options.overlap_chars)
    update = ctx.progress.update

    def stage_progress(stage: str) -> Callable[[int, int, str], None]:
        def report(current: int, total: int, message: str) -> None:
            update(stage, current, total, "completed" if current == total else "started", message)

        return report

    with ctx.writing() as home:
        update("pipeline", 0, len(STAGES), "started", "Capturing sources")
        captured = _capture(ctx, options)
        update("pipeline", 1, len(STAGES), "started", "Extracting documents")
        catalog = read_catalog(home)
        # extract reuses every document whose snapshot and configuration are unchanged
        documents = (
            extract_documents(home, ctx.plugins, None, {}, stage_progress("extract"))
            if catalog.sources() else []
        )
        for document in documents:
            for warning in document.warnings:
                ctx.warn("EXTRACTION_WARNING", f"{document.source}: {warning}", source=document.source,
                         snapshotId=document.snapshot_id)
        update("pipeline", 2, len(STAGES), "started", "Creating evidence chunks")
        chunked = chunk_home(home, chunkers(ctx), max_chars=options.max_chars,
                             overlap_chars=options.overlap_chars, progress=stage_progress("chunk"))
        update("pipeline", 3, len(STAGES), "started", "Building search index")
        indexed = index_home(home, progress=stage_progress("index"))
        update("pipeline", 4, len(STAGES), "completed", "Done")
    return {
        "capture": captured.data(),
        "extract": {
            "extracted": [d.source for d in documents],
            "reused": len(catalog.sources()) - len(documents),
            "documents": len(catalog.sources()),
        },
        "chunk": unstructure(chunked),
        "index": unstructure(indexed),
    }


def render(data: dict[str, Any]) -> str:
    capture = data["capture"]
    counts = capture["counts"]
    extract = data["extract"]
    chunk = data["chunk"]
    index = data["index"]
    sources = ", ".join(f"{s} {n}" for s, n in index["sources"].items()) or "none"
    return "\n".join([
        f"capture: {len(capture['sources'])} source(s): {counts['captured']} new, "
        f"{counts['unchanged']} unchanged, {counts['failed']} failed",
        f"extract: {len(extract['extracted'])} extracted, {extract['reused']} unchanged",
        f"chunk:   {chunk['chunks']} chunk(s) from {chunk['documents']} document(s) "
        f"({chunk['chunked']} chunked, {chunk['reused']} unchanged)",
        f"index:   {index['shards']} shard(s), {index['chunks']} chunk(s) ({sources}); "
        f"{len(index['built'])} built, {index['kept']} kept",
        "Next: episteme query --term WORDS",
    ])
