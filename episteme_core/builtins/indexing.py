"""The builtin ``bm25`` indexer (shards of bm25s lucene scores) and the ``episteme index`` command."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from episteme_core.errors import EpistemeError
from episteme_core.hookspecs import Register, hookimpl
from episteme_core.kernel.context import Outcome
from episteme_core.kernel.contracts import Command

if TYPE_CHECKING:
    from episteme_core.executor.base import Executor
    from episteme_core.kernel.context import Context, RunContext
    from episteme_core.kernel.contracts import Indexer, SearchableShards
    from episteme_core.stages.bundle import IndexBundle
    from episteme_core.store.home import Home


class Bm25Indexer:
    """Frozen BM25 shards (bm25s's lucene scores, computed with numpy), one source per shard."""

    name = "bm25"
    help = "BM25 shards (bm25s lucene scores): one source per shard, frozen, memory-mapped"

    def build(self, ctx: RunContext, *, reshard: bool = False, executor: Executor | None = None,
              purge: bool = False) -> Any:
        from episteme_core.bm25.writer import index_home

        def progress(current: int, total: int, name: str) -> None:
            ctx.progress.update("index", current, total, "completed" if current == total else "started", name)

        return index_home(ctx.home, reshard=reshard, progress=progress, executor=executor, purge=purge)

    def open(self, home: Home) -> SearchableShards:
        from episteme_core.bm25.shards import open_shards

        return open_shards(home)

    def open_artifact(self, bundle: IndexBundle) -> SearchableShards:
        from episteme_core.bm25.shards import open_bundle_shards

        return open_bundle_shards(bundle)


def describe(report: Any) -> str:
    """One line for people; a plugin indexer's report (a mapping) is listed as it is."""
    if isinstance(report, dict):
        return ", ".join(f"{key} {value}" for key, value in sorted(report.items()))
    sources = ", ".join(f"{source} {count}" for source, count in report.sources.items()) or "none"
    head = "Rebuilt" if report.resharded else ("Updated" if report.changed else "Up to date:")
    return (
        f"{head} {report.shards} shard(s) holding {report.chunks} chunk(s) ({sources}); "
        f"{len(report.built)} built, {report.kept} kept, {len(report.dropped)} dropped."
    )


def add_indexer_option(parser: argparse.ArgumentParser) -> None:
    """``--indexer NAME`` (default: config.json's indexer, else bm25)."""
    parser.add_argument("--indexer", metavar="NAME",
                        help="the indexer (default: \"indexer\" in config.json, else bm25)")


def _configure(parser: argparse.ArgumentParser) -> None:
    from episteme_core.cli.executor_options import add_executor_options

    parser.add_argument("--reshard", action="store_true",
                        help="rebuild every shard (after changing shard_size or bm25 in config.json)")
    add_indexer_option(parser)
    parser.add_argument("--chunks", metavar="DIR", help="read chunks from DIR (default HOME/chunks)")
    parser.add_argument("--index", metavar="DIR", help="write shards to DIR (default HOME/shards)")
    add_executor_options(parser)
    parser.add_argument("--out", metavar="FILE",
                        help="also write the index as one file (a tar of the commit and its shards), "
                             "atomically; '-' (needs --json) returns it in data.artifact (base64)")


def _run(args: argparse.Namespace, ctx: Context) -> Outcome:
    from episteme_core.builtins.chunking import stage_override
    from episteme_core.cli.executor_options import executor_spec_of
    from episteme_core.search.indexers import build_index, export_index, report_data

    if args.out == "-" and not ctx.as_json:
        raise EpistemeError("INVALID_USAGE",
                            "--out - requires --json (the index comes back in data.artifact)")
    stage_override(ctx, "chunks", args.chunks)
    stage_override(ctx, "shards", args.index)
    if args.out is None:
        report = build_index(ctx, args.indexer, reshard=args.reshard, spec=executor_spec_of(args))
        return Outcome(data=report_data(report), text=describe(report))
    report, written = export_index(ctx, args.out, args.indexer, reshard=args.reshard,
                                   spec=executor_spec_of(args))
    where = (f"\nIndex file: {written['outputPath']} ({written['bytes']} bytes)"
             if written["outputPath"] else "")
    data = {**report_data(report), "outputPath": written["outputPath"], "bytes": written["bytes"],
            "sha256": written["sha256"], "bundleFingerprint": written["fingerprint"]}
    if "artifact" in written:
        data["artifact"] = written["artifact"]
    return Outcome(data=data, text=describe(report) + where)


@hookimpl
def episteme_indexers(register: Register) -> None:
    bm25: Indexer = Bm25Indexer()  # typed: it keeps the Protocol (open, build), checked by mypy
    register(bm25)


@hookimpl
def episteme_commands(register: Register) -> None:
    register(Command(
        name="index",
        help="pack committed chunks into frozen BM25 shards (one source per shard)",
        description=(
            "Pack the chunks no shard holds into new shards of at most shard_size chunks "
            "(config.json, default 50000) per source; shards already written never change. "
            "--reshard rebuilds them all. --out FILE also writes the committed index as one file, "
            "which query --index FILE answers from."
        ),
        configure=_configure,
        run=_run,
    ))
