"""The builtin ``bm25`` indexer (shards of bm25s lucene scores) and the ``episteme index`` command."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from episteme_core.cli.command import Command, Outcome
from episteme_core.hookspecs import Register, hookimpl

if TYPE_CHECKING:
    from episteme_core.cli.context import Context
    from episteme_core.executor import ExecutorSpec
    from episteme_core.store.home import Home


class Bm25Indexer:
    """Frozen BM25 shards (bm25s's lucene scores, computed with numpy), one source per shard."""

    name = "bm25"
    help = "BM25 shards (bm25s lucene scores): one source per shard, frozen, memory-mapped"

    def build(self, home: Home, *, reshard: bool = False, progress: Any = None, executor: Any = None) -> Any:
        from episteme_core.index.indexing import index_home

        return index_home(home, reshard=reshard, progress=progress, executor=executor)

    def open(self, home: Home) -> Any:
        from episteme_core.index import open_shards

        return open_shards(home)


def run_index(ctx: Context, *, reshard: bool = False, indexer: str = "bm25",
              spec: ExecutorSpec | None = None) -> Any:
    """Index under the writer lock with progress, on the executor ``spec`` names (an indexer whose
    ``build`` takes an ``executor``); returns the ``IndexReport``."""
    from episteme_core.executor import accepts_executor, running

    component = ctx.plugins.get("indexer", indexer)

    def progress(current: int, total: int, name: str) -> None:
        ctx.progress.update("index", current, total, "completed" if current == total else "started", name)

    with ctx.writing():
        if not accepts_executor(component.build):
            return component.build(ctx.home, reshard=reshard, progress=progress)
        with running(spec) as executor:
            return component.build(ctx.home, reshard=reshard, progress=progress, executor=executor)


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


def _configure(parser: argparse.ArgumentParser) -> None:
    from episteme_core.cli.executor import add_executor_options

    parser.add_argument("--reshard", action="store_true",
                        help="rebuild every shard (after changing shard_size or bm25 in config.json)")
    parser.add_argument("--indexer", default="bm25", help="the indexer to use (default bm25)")
    parser.add_argument("--chunks", metavar="DIR", help="read chunks from DIR (default HOME/chunks)")
    parser.add_argument("--index", metavar="DIR", help="write shards to DIR (default HOME/shards)")
    add_executor_options(parser)


def _run(args: argparse.Namespace, ctx: Context) -> Outcome:
    from episteme_core.builtins.chunking import stage_override
    from episteme_core.cli.executor import executor_spec_of
    from episteme_core.convert import unstructure

    stage_override(ctx, "chunks", args.chunks)
    stage_override(ctx, "shards", args.index)
    report = run_index(ctx, reshard=args.reshard, indexer=args.indexer, spec=executor_spec_of(args))
    data = dict(report) if isinstance(report, dict) else unstructure(report)
    return Outcome(data=data, text=describe(report))


@hookimpl
def episteme_indexers(register: Register) -> None:
    register(Bm25Indexer())


@hookimpl
def episteme_commands(register: Register) -> None:
    register(Command(
        name="index",
        help="pack committed chunks into frozen BM25 shards (one source per shard)",
        description=(
            "Pack the chunks no shard holds into new shards of at most shard_size chunks "
            "(config.json, default 50000) per source; shards already written never change. "
            "--reshard rebuilds them all."
        ),
        configure=_configure,
        run=_run,
    ))
