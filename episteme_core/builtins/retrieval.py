"""The retrieval commands: ``query`` (cited evidence), ``diff`` (two corpora), ``pipeline`` (all stages)."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from episteme_core.errors import EpistemeError
from episteme_core.hookspecs import Register, hookimpl
from episteme_core.kernel.context import Outcome
from episteme_core.kernel.contracts import Command

if TYPE_CHECKING:
    from episteme_core.executor.base import ExecutorSpec
    from episteme_core.kernel.context import Context

# query ----------------------------------------------------------------------------------------


def _configure_query(parser: argparse.ArgumentParser) -> None:
    from episteme_core.builtins.indexing import add_indexer_option
    from episteme_core.cli.executor_options import add_executor_options
    from episteme_core.cli.parser import add_int_option
    from episteme_core.kernel.defaults import DEFAULT_MAX_INDEX_BYTES, MAX_INDEX_BYTES

    parser.add_argument("--term", metavar="TEXT",
                        help='the words to look for (required); a "quoted phrase" must appear as written')
    parser.add_argument("--exact", action="store_true",
                        help="every word must appear as written (no stemming); ranking is unchanged")
    parser.add_argument("--family", help="only documents of this family (w3c, whatwg, rfc, generic, ...)")
    parser.add_argument("--authority", choices=("normative", "informative"), help="only this authority")
    parser.add_argument("--document-type", metavar="TYPE",
                        help="only this document type (spec, rfc, pdf, ...)")
    parser.add_argument("--normativity", choices=("normative", "informative", "example", "unknown"),
                        help="only chunks of this normativity")
    parser.add_argument("--source", action="append", metavar="SOURCE",
                        help="only shards of this source (http, file, books, claude, ...); repeatable")
    parser.add_argument("--since", metavar="DATE",
                        help="only chunks whose time is at or after DATE (ISO 8601; chunks without a time "
                             "are left out)")
    add_int_option(parser, "--limit", default=10, low=1, high=100, help="results per page")
    add_int_option(parser, "--offset", default=0, low=0, high=10_000,
                   help="results to skip (a page past it is not offered: narrow the query)")
    add_int_option(parser, "--max-chars", default=1200, low=80, high=20_000, help="longest snippet")
    parser.add_argument("--index", metavar="DIR|FILE|-",
                        help="read shards from DIR (default HOME/shards); or answer from an index file "
                             "(episteme index --out FILE, or its data.artifact JSON), '-' for stdin")
    add_int_option(parser, "--max-input-bytes", default=DEFAULT_MAX_INDEX_BYTES, low=1, high=MAX_INDEX_BYTES,
                   help="largest index file or stdin accepted by --index FILE|-")
    parser.add_argument("--chunks", metavar="DIR", help="the chunks stage the shards must match "
                                                         "(default HOME/chunks)")
    parser.add_argument("--rerank", metavar="NAME",
                        help="reorder the first results (at least 20) by a reader's second stage: a reader "
                             "named in config.json or a reader kind whose kind can rerank (e.g. onnx); "
                             "off by default")
    add_indexer_option(parser)
    add_executor_options(parser, jobs=False)


def _since(value: str | None) -> str | None:
    from episteme_core.search.query import check_since

    return check_since(value)


def _run_query(args: argparse.Namespace, ctx: Context) -> Outcome:
    from episteme_core.builtins.chunking import stage_override
    from episteme_core.cli.executor_options import executor_spec_of
    from episteme_core.records.convert import plain
    from episteme_core.records.hits import Filters
    from episteme_core.search.query import check_term, query, render

    check_term(args.term)
    shard_set = None
    if args.index is not None and (args.index == "-" or not Path(args.index).expanduser().is_dir()):
        from episteme_core.search.indexers import open_index_file

        shard_set = open_index_file(ctx.plugins, args.index, args.max_input_bytes, args.indexer)
    else:
        stage_override(ctx, "shards", args.index)
    stage_override(ctx, "chunks", args.chunks)
    filters = Filters(
        family=args.family, authority=args.authority, document_type=args.document_type,
        normativity=args.normativity, source=tuple(args.source) if args.source else None,
        since=_since(args.since),
    )
    second = None
    if args.rerank is not None:
        from episteme_core.ask.rerank import reranker

        second = reranker(ctx.home, ctx.plugins, args.rerank, args.term)
    with fanned_out(ctx, executor_spec_of(args), shard_set, args.indexer) as shard_set:
        result = query(ctx.home, args.term, filters=filters, limit=args.limit, offset=args.offset,
                       max_chars=args.max_chars, exact=args.exact, shard_set=shard_set, plugins=ctx.plugins,
                       indexer=args.indexer, warn=ctx.warn, rerank=second)
    return Outcome(data=plain(result), text=render(result))


@contextlib.contextmanager
def fanned_out(ctx: Context, spec: ExecutorSpec, shard_set: Any, indexer: str | None) -> Iterator[Any]:
    """The shards a query or ask reads: ``shard_set`` (None: opened by the library) on a local
    executor; on Dask the home's shards (or ``shard_set``), each search fanned out to the workers."""
    if spec.kind == "local":
        yield shard_set
        return
    from episteme_core.executor import running
    from episteme_core.search.fanout import fanned
    from episteme_core.search.indexers import open_index

    with running(spec) as executor:
        yield fanned(shard_set if shard_set is not None else open_index(ctx.home, ctx.plugins, indexer),
                     executor)


DEFAULT_DIFF_OUT = "diffs/diff.json"


# diff -----------------------------------------------------------------------------------------


def _configure_diff(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--from", dest="from_home", required=True, metavar="HOME",
                        help="the earlier corpus (a home)")
    parser.add_argument("--to", dest="to_home", required=True, metavar="HOME",
                        help="the later corpus (a home)")
    parser.add_argument("--out", metavar="FILE", default=DEFAULT_DIFF_OUT,
                        help=f"write the diff artifact to FILE (default {DEFAULT_DIFF_OUT}, under the "
                             "current folder); '-' puts it in data.artifact (needs --json)")
    from episteme_core.cli.parser import add_int_option
    from episteme_core.stages.diff import DEFAULT_MAX_CHARS

    add_int_option(parser, "--max-chars", default=DEFAULT_MAX_CHARS, low=1, high=100_000,
                   help="most characters of each block's text before and after in the diff")


def _run_diff(args: argparse.Namespace, ctx: Context) -> Outcome:
    from episteme_core.records.canonical import canonical_bytes
    from episteme_core.stages.diff import diff_homes, render
    from episteme_core.store.atomic import atomic_write

    if args.out == "-" and not ctx.as_json:
        raise EpistemeError("INVALID_USAGE", "--out - needs --json (the artifact comes back in the envelope)")
    artifact = diff_homes(Path(args.from_home).expanduser().absolute(),
                          Path(args.to_home).expanduser().absolute(), max_chars=args.max_chars)
    body = canonical_bytes(artifact)
    data: dict[str, Any] = {"fingerprint": artifact["fingerprint"], "summary": artifact["summary"],
                            "bytes": len(body), "outputPath": None}
    if args.out == "-":
        data["artifact"] = artifact
    else:
        target = Path(args.out).expanduser().absolute()
        atomic_write(target, body)
        data["outputPath"] = str(target)
    return Outcome(data=data, text=render(artifact, data["outputPath"]))


# pipeline -------------------------------------------------------------------------------------


def _configure_pipeline(parser: argparse.ArgumentParser) -> None:
    from episteme_core.builtins.capture import (
        add_allow_forgotten,
        add_fetch_options,
        add_input_bounds,
        add_list_unchanged_option,
        add_max_bytes,
        add_rehash_option,
    )
    from episteme_core.builtins.chunking import add_chunk_options
    from episteme_core.builtins.indexing import add_indexer_option
    from episteme_core.cli.executor_options import add_executor_options

    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--manifest", metavar="FILE",
                      help="snapshot these URLs: JSON array of {url, family?, authority?, extractor?}")
    what.add_argument("--map", metavar="FILE",
                      help="manual-ingest these local files: JSON array of "
                           "{sourceUrl, localPath, contentType?}")
    parser.add_argument("--root", metavar="DIR",
                        help="folder that relative localPath values are read from (default: the "
                             "map's folder; the current folder for stdin); when given, absolute "
                             "localPath values must lie inside it too")
    add_max_bytes(parser, "most bytes per response (on the wire and decoded) or local file")
    add_fetch_options(parser)
    add_input_bounds(parser)
    add_chunk_options(parser)
    add_rehash_option(parser)
    add_list_unchanged_option(parser)
    add_executor_options(parser)
    add_indexer_option(parser)
    add_allow_forgotten(parser)


def _run_pipeline(args: argparse.Namespace, ctx: Context) -> Outcome:
    from episteme_core.builtins.capture import fetch_settings, manual_root
    from episteme_core.builtins.ingest import allowing
    from episteme_core.cli.executor_options import executor_spec_of
    from episteme_core.pipeline import PipelineOptions, render, run_pipeline

    common = {"max_input_bytes": args.max_input_bytes, "max_sources": args.max_sources,
              "max_chars": args.max_chars, "overlap_chars": args.overlap_chars, "chunker": args.chunker,
              "executor": executor_spec_of(args), "rehash": args.rehash, "indexer": args.indexer,
              "list_unchanged": args.list_unchanged}
    if args.manifest is not None:
        options = PipelineOptions(manifest=args.manifest, fetch=fetch_settings(args),
                                  fail_fast=args.fail_fast, **common)
    else:
        options = PipelineOptions(map=args.map, root=manual_root(args.map, args.root),
                                  confine_absolute=args.root is not None, max_bytes=args.max_bytes,
                                  **common)
    with allowing(args):
        data = run_pipeline(ctx, options)
    return Outcome(data=data, text=render(data))


@hookimpl
def episteme_commands(register: Register) -> None:
    register(Command(
        name="query",
        help="ranked, cited evidence for words: verbatim snippets with W3C selectors",
        description=(
            "Rank chunks by BM25 over the fresh shards and print each hit's heading, score, a "
            "verbatim snippet and its citation. A stale or missing index is refused (STALE_INDEX); "
            "while a writer is at work, the last commit answers (warning INDEX_UPDATING). --index "
            "FILE|- answers from an index file written by episteme index --out."
        ),
        configure=_configure_query,
        run=_run_query,
    ))
    register(Command(
        name="diff",
        help="documents, sections and blocks added, removed and changed between two homes",
        configure=_configure_diff,
        run=_run_diff,
    ))
    register(Command(
        name="pipeline",
        help="capture (snapshot or manual-ingest), extract, chunk and index in one run",
        description=(
            "Run every stage under one writer lock, with progress per stage. Unchanged inputs are "
            "skipped at every stage, so a re-run does almost nothing."
        ),
        configure=_configure_pipeline,
        run=_run_pipeline,
    ))
