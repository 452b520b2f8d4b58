"""Builtin personal records: sources books, claude, intent; the record extractor; sources and show."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from episteme_core.cli.command import Command, Outcome
from episteme_core.hookspecs import Register, hookimpl

if TYPE_CHECKING:
    from episteme_core.cli.context import Context


@hookimpl
def episteme_sources(register: Register) -> None:
    from episteme_core.personal.sources import BooksSource, ClaudeSource, IntentSource

    register(BooksSource())
    register(ClaudeSource())
    register(IntentSource())


@hookimpl
def episteme_extractors(register: Register) -> None:
    from episteme_core.personal.extract import RecordExtractor

    register(RecordExtractor(), kind="extractor")


def _configure_sources(parser: argparse.ArgumentParser) -> None:
    """``sources`` takes only the global options."""


def _run_sources(args: argparse.Namespace, ctx: Context) -> Outcome:
    from episteme_core.personal.library import list_sources, render_sources

    data = list_sources(ctx.home, warn=ctx.warn)
    return Outcome(data=data, text=render_sources(data))


def _configure_show(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("reference", metavar="ID[#N]",
                        help="a record id (book:corpus/name, chat:claude/project/session, git:repo@sha, "
                             "intent, ...), optionally #N for its Nth paragraph (from 1)")
    parser.add_argument("--snapshot", metavar="SNAPSHOT_ID", default=None,
                        help="show this older snapshot of the record (from its history), not the latest")
    parser.add_argument("--stale-ok", action="store_true",
                        help="show the latest snapshot even when the shards are behind the log")


def _run_show(args: argparse.Namespace, ctx: Context) -> Outcome:
    from episteme_core.personal.library import render_show, show

    data = show(ctx.home, args.reference, snapshot=args.snapshot, stale_ok=args.stale_ok)
    return Outcome(data=data, text=render_show(data))


@hookimpl
def episteme_commands(register: Register) -> None:
    register(Command(
        name="sources",
        help="list each source: records, paragraphs, bytes, time span, shards, and whether they are behind",
        configure=_configure_sources,
        run=_run_sources,
    ))
    register(Command(
        name="show",
        help="print a record or its Nth paragraph (ID#N) verbatim, with its citation",
        configure=_configure_show,
        run=_run_show,
    ))
