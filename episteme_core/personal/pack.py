"""Bring the derived stages up to the log: extract what has no document, chunk, pack shards.

Each step calls the library function of the stage that owns it (``extract.run.extract_documents``,
``chunking.chunk_home``, and the home's indexer through ``indexers.build_index``). Call under the
writer lock.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from episteme_core.errors import EpistemeError

if TYPE_CHECKING:
    from episteme_core.kernel.context import RunContext
    from episteme_core.store.home import Home

def chunk_options(home: Home) -> tuple[int, int]:
    """The options the chunks were last cut with (so a pack never re-cuts everything), else defaults."""
    from episteme_core.kernel.defaults import DEFAULT_MAX_CHARS, DEFAULT_OVERLAP_CHARS
    from episteme_core.stages.chunks import chunks_stage

    index = chunks_stage(home).read_index()
    options = (index.meta.get("options") if index else None) or {}
    max_chars = options.get("maxChars", DEFAULT_MAX_CHARS)
    overlap = options.get("overlapChars", DEFAULT_OVERLAP_CHARS)
    if not isinstance(max_chars, int) or not isinstance(overlap, int):
        return DEFAULT_MAX_CHARS, DEFAULT_OVERLAP_CHARS
    return max_chars, overlap


def pack_stages(ctx: RunContext, *, reshard: bool = False) -> dict[str, Any]:
    """Extract → chunk → index for what the shards lack (every shard anew with ``reshard``).

    A failing step is reported (``status`` failed, a ``PACK_FAILED`` warning) rather than raised:
    the captures before it are committed and stay; ``sources`` then shows the shards behind.
    """
    from episteme_core.stages.snapshots import read_catalog

    home = ctx.home
    if len(read_catalog(home)) == 0:
        return {"status": "empty", "extracted": 0, "summary": "nothing to pack: the store is empty"}
    report: dict[str, Any] = {"status": "ok"}
    step = "extract"
    try:
        from episteme_core.extract.run import extract_documents

        def extracted(current: int, total: int, source: str) -> None:
            ctx.progress.update("extract", current, total, "completed" if current == total else "started",
                                source)

        # extraction reuses every document whose snapshot and configuration did not change
        documents = extract_documents(home, ctx.plugins, None, None, extracted, warn=ctx.warn)
        failed = [document.source for document in documents if document.status == "failed"]
        report["extracted"] = len(documents) - len(failed)
        report["failed"] = failed
        for document in documents:
            for warning in document.warnings:
                ctx.warn("EXTRACTION_WARNING", f"{document.source}: {warning}", source=document.source)
        step = "chunk"
        from episteme_core.chunking.run import chunk_home

        max_chars, overlap = chunk_options(home)
        chunks = chunk_home(home, ctx.plugins.all("chunker"), max_chars=max_chars, overlap_chars=overlap,
                            warn=ctx.warn)
        report["chunks"] = chunks.chunks
        report["chunkedDocuments"] = chunks.chunked
        step = "index"
        from episteme_core.search.indexers import build_index, report_data

        shards = report_data(build_index(ctx, reshard=reshard))
        report["shards"] = shards.get("shards")
        report["shardsBuilt"] = len(shards.get("built") or ())
        report["resharded"] = bool(shards.get("resharded", reshard))
    except EpistemeError as exc:
        report.update({
            "status": "failed", "failedStep": step, "error": {"code": exc.code, "message": exc.message},
        })
        ctx.warn("PACK_FAILED", f"{step} failed: {exc.message}; the records are stored, the shards are "
                 "behind (run episteme ingest again after fixing it)", step=step, errorCode=exc.code)
    if report["status"] == "ok":
        report["summary"] = (
            f"packed: {report['extracted']} extracted, {len(report['failed'])} failed, "
            f"{report['chunks']} chunks, "
            f"{report['shardsBuilt']} shard(s) built, {report['shards']} in all"
        ) + "".join(f"\n  failed: {source}" for source in report["failed"])
    else:
        report["summary"] = f"pack failed at {step}: {report['error']['message']}"
    return report
