"""Builtin ``ask`` and ``eval`` commands, and the builtin readers ``bm25`` and ``http``.

The readers are registered through ``episteme_readers`` exactly as a plugin's would be; the
commands parse options, call ``episteme_core.ask.run.ask`` / ``evalrun.run_eval`` and render.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from episteme_core.hookspecs import Register, hookimpl
from episteme_core.kernel.context import Outcome
from episteme_core.kernel.contracts import Command

if TYPE_CHECKING:
    from episteme_core.kernel.context import Context

class _LazyKind:
    """A reader kind whose module is imported only when a reader of it is opened."""

    def __init__(self, name: str, description: str, target: str) -> None:
        self.name = name
        self.description = description
        self._target = target

    def open(self, spec: Any) -> Any:
        import importlib

        module, _, attr = self._target.partition(":")
        return getattr(importlib.import_module(module), attr)().open(spec)


@hookimpl
def episteme_readers(register: Register) -> None:
    register(_LazyKind("bm25", "deterministic: a shard's top candidates by BM25 score above a threshold",
                       "episteme_core.ask.bm25_reader:Bm25Kind"))
    register(_LazyKind("http", "a server speaking the HTTP reader protocol (llama-server, vLLM, reference)",
                       "episteme_core.ask.http_reader:HttpKind"))


def _common(parser: argparse.ArgumentParser) -> None:
    from episteme_core.builtins.indexing import add_indexer_option
    from episteme_core.cli.parser import add_int_option
    from episteme_core.kernel.defaults import (
        DEFAULT_BUDGET,
        DEFAULT_CANDIDATES,
        MAX_BUDGET,
        MAX_CANDIDATES,
        MIN_BUDGET,
        MIN_CANDIDATES,
    )

    parser.add_argument("--reader", metavar="NAME",
                        help="a reader named in config.json, or a reader kind such as bm25 "
                             "(default: every configured reader, else bm25)")
    add_int_option(parser, "--budget", default=DEFAULT_BUDGET, low=MIN_BUDGET, high=MAX_BUDGET,
                   help="total characters of an answer (paragraphs whole; a long one as its best window)")
    add_int_option(parser, "--candidates", default=DEFAULT_CANDIDATES, low=MIN_CANDIDATES,
                   high=MAX_CANDIDATES,
                   help="BM25 passages (runs of paragraphs) per shard handed to the reader")
    add_indexer_option(parser)


def _configure_ask(parser: argparse.ArgumentParser) -> None:
    from episteme_core.cli.executor_options import add_executor_options

    parser.add_argument("question", help="the question (quote it)")
    parser.add_argument("--filter", metavar="SOURCES",
                        help="comma-separated sources to search, e.g. books,claude (default all)")
    parser.add_argument("--since", metavar="DATE",
                        help="only paragraphs at or after DATE (YYYY-MM-DD, UTC, or an ISO 8601 time)")
    parser.add_argument("--include-marked", action="store_true",
                        help="also consider every marked paragraph (thinking, tool calls, summaries, a "
                             "book's contents and captions); tool output is considered by default")
    parser.add_argument("--exclude-marked", action="store_true",
                        help="consider prose only: leave tool output out too")
    _common(parser)
    add_executor_options(parser, jobs=False)


def _run_ask(args: argparse.Namespace, ctx: Context) -> Outcome:
    from episteme_core.ask.render import render_answer
    from episteme_core.ask.run import AskOptions, ask, check_question, parse_filter, parse_since
    from episteme_core.builtins.retrieval import fanned_out
    from episteme_core.cli.executor_options import executor_spec_of
    from episteme_core.records.convert import unstructure

    options = AskOptions(
        question=check_question(args.question),
        filter=parse_filter(args.filter) if args.filter is not None else None,
        since=parse_since(args.since) if args.since is not None else None,
        reader=args.reader,
        budget=args.budget,
        candidates=args.candidates,
        include_marked=args.include_marked,
        exclude_marked=args.exclude_marked,
        indexer=args.indexer,
    )
    with fanned_out(ctx, executor_spec_of(args), None, args.indexer) as shards:
        result = ask(ctx.home, options, plugins=ctx.plugins, warn=ctx.warn, shards=shards)
    data = unstructure(result)
    return Outcome(data=data, text=render_answer(data))


def _configure_eval(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("questions", metavar="QUESTIONS.jsonl",
                        help='JSON Lines: {"question", "filter"?, "since"?, '
                             '"expected": ["<record>#<n>", ...]}')
    parser.add_argument("--label", required=True, metavar="NAME", help="save the report as evals/NAME.json")
    parser.add_argument("--compare", metavar="OTHER", help="compare with the saved report evals/OTHER.json")
    _common(parser)


def _run_eval(args: argparse.Namespace, ctx: Context) -> Outcome:
    from episteme_core.ask.evalrun import render_compare, run_eval
    from episteme_core.ask.render import render_eval

    data = run_eval(ctx.home, args.questions, args.label, plugins=ctx.plugins, warn=ctx.warn,
                    reader=args.reader, budget=args.budget, candidates=args.candidates, compare=args.compare,
                    indexer=args.indexer)
    text = render_eval(data["report"], data["path"])
    if "compare" in data:
        text += "\n\n" + render_compare(data["compare"])
    return Outcome(data=data, text=text)


@hookimpl
def episteme_commands(register: Register) -> None:
    register(Command(
        name="ask",
        help="answer a question with the sources' own paragraphs, verbatim, cited, in time order",
        description=(
            "Answer a question with stored paragraphs: BM25 candidates per shard, readers name the ones\n"
            "that bear on the question, and the answer is those paragraphs verbatim, each with its\n"
            "citation, in time order, within --budget characters. Readers never write the answer."
        ),
        configure=_configure_ask,
        run=_run_ask,
    ))
    register(Command(
        name="eval",
        help="score ask on a questions file (recall, precision, MRR, nDCG@10); save evals/NAME.json",
        configure=_configure_eval,
        run=_run_eval,
    ))
