"""Builtin personal records: sources books, claude, intent; the record extractor; ``sources`` and ``show``.

The sources are shells over ``episteme_core.personal.ingest``: options in, one library call, the
report out (``ingest_outcome``, public for plugin sources through ``episteme_core.api``).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from episteme_core.hookspecs import Register, hookimpl
from episteme_core.kernel.context import Outcome
from episteme_core.kernel.contracts import Command
from episteme_core.records.inputs import GIB

if TYPE_CHECKING:
    from episteme_core.kernel.context import Context



def add_pack_option(parser: argparse.ArgumentParser) -> None:
    """``--no-pack``: store the records but leave documents, chunks and shards for a later ``ingest``."""
    parser.add_argument(
        "--no-pack", dest="pack", action="store_false",
        help="only store the records; run 'episteme ingest' later to extract, chunk and index them",
    )


def ingest_outcome(data: dict[str, object]) -> Outcome:
    from episteme_core.personal.ingest import describe

    return Outcome(data=dict(data), text=describe(dict(data)))


class BooksSource:
    name = "books"
    help = "plain-text and Markdown books in folders: one record book:<corpus>/<book> per file"
    description = (
        "Ingest every .txt/.text/.md/.markdown file under each folder as a record\n"
        "book:<folder name>/<path without extension>. Paragraphs split at blank lines; Project\n"
        "Gutenberg headers and licences go to the record's metadata. Time = the text's own date: a\n"
        "sidecar BOOK.meta.json {\"date\": ...}, else front matter, else the Gutenberg header's original\n"
        "publication year or release date, else none (never the file's modification time). Binary\n"
        "files and symbolic links are skipped."
    )

    def configure(self, parser: argparse.ArgumentParser) -> None:
        from episteme_core.cli.parser import add_int_option
        from episteme_core.personal.limits import BOOK_MAX_BYTES as DEFAULT_MAX_BYTES
        from episteme_core.personal.limits import BOOK_MAX_PARAGRAPHS as DEFAULT_MAX_PARAGRAPHS

        parser.add_argument("corpus", nargs="+", metavar="DIR", help="a folder of books")
        add_int_option(parser, "--max-bytes", default=DEFAULT_MAX_BYTES, low=1, high=4 * GIB,
                       help="skip books larger than this many bytes")
        add_int_option(parser, "--max-paragraphs", default=DEFAULT_MAX_PARAGRAPHS, low=1, high=100_000_000,
                       help="skip books of more paragraphs than this (a book's record is held whole while "
                            "it is stored)")
        add_pack_option(parser)

    def ingest(self, args: argparse.Namespace, ctx: Context) -> Outcome:
        from episteme_core.personal.ingest import ingest_books

        return ingest_outcome(ingest_books(
            ctx, [Path(p) for p in args.corpus], max_bytes=args.max_bytes,
            max_paragraphs=args.max_paragraphs, pack=args.pack
        ))


class ClaudeSource:
    name = "claude"
    block_kind = "message"
    help = "Claude Code transcripts: one record chat:claude/<project>/<session> per session"
    description = (
        "Ingest ~/.claude/projects/<project>/<session>.jsonl (and the session's sub-agent files).\n"
        "A paragraph per user or assistant text block with its own time; thinking, tool calls,\n"
        "tool results and summary lines are kept as marked paragraphs that ask leaves out by\n"
        "default. Unknown and malformed lines are skipped and counted. A grown transcript appends\n"
        "only what is new."
    )

    def configure(self, parser: argparse.ArgumentParser) -> None:
        from episteme_core.cli.parser import add_int_option
        from episteme_core.personal.limits import CLAUDE_MAX_BYTES as DEFAULT_MAX_BYTES
        from episteme_core.personal.limits import CLAUDE_MAX_LINE_BYTES as DEFAULT_MAX_LINE_BYTES

        parser.add_argument(
            "--projects", metavar="DIR", default=None,
            help="the projects folder (default: claude_projects in config.json, else ~/.claude/projects)",
        )
        add_int_option(parser, "--max-line-bytes", default=DEFAULT_MAX_LINE_BYTES, low=1024, high=GIB,
                       help="skip (and count) transcript lines longer than this")
        add_int_option(parser, "--max-bytes", default=DEFAULT_MAX_BYTES, low=1, high=16 * GIB,
                       help="most bytes of one session's transcript files together: a larger session file is "
                            "skipped, and so is a sub-agent file that would pass the bound")
        add_pack_option(parser)

    def ingest(self, args: argparse.Namespace, ctx: Context) -> Outcome:
        from episteme_core.personal.ingest import default_projects, ingest_claude

        projects = Path(args.projects).expanduser() if args.projects else default_projects(ctx.home)
        return ingest_outcome(ingest_claude(
            ctx, projects, max_line_bytes=args.max_line_bytes, max_bytes=args.max_bytes, pack=args.pack
        ))

    def ingest_all(self, ctx: Context) -> Outcome | None:
        from episteme_core.personal.claude import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINE_BYTES
        from episteme_core.personal.ingest import default_projects, ingest_claude

        projects = default_projects(ctx.home)
        if not projects.is_dir():
            return None
        return ingest_outcome(ingest_claude(
            ctx, projects, max_line_bytes=DEFAULT_MAX_LINE_BYTES, max_bytes=DEFAULT_MAX_BYTES, pack=False
        ))


class IntentSource:
    name = "intent"
    help = "the home's intent.md as the record 'intent', one paragraph per heading"
    description = (
        "Ingest $EPISTEME_HOME/intent.md (the home's intent.md) as the record 'intent': each\n"
        "Markdown heading starts a paragraph holding the heading and its text, verbatim."
    )

    def configure(self, parser: argparse.ArgumentParser) -> None:
        add_pack_option(parser)

    def ingest(self, args: argparse.Namespace, ctx: Context) -> Outcome:
        from episteme_core.personal.ingest import ingest_intent

        return ingest_outcome(ingest_intent(ctx, pack=args.pack))

    def ingest_all(self, ctx: Context) -> Outcome | None:
        from episteme_core.personal.ingest import ingest_intent, intent_path

        if not intent_path(ctx.home).exists():
            return None
        return ingest_outcome(ingest_intent(ctx, pack=False))



@hookimpl
def episteme_sources(register: Register) -> None:
    register(BooksSource())
    register(ClaudeSource())
    register(IntentSource())


@hookimpl
def episteme_extractors(register: Register) -> None:
    from episteme_core.personal.extractor import RecordExtractor

    register(RecordExtractor(), kind="extractor")


def _configure_sources(parser: argparse.ArgumentParser) -> None:
    """``sources`` takes only the global options."""


def _run_sources(args: argparse.Namespace, ctx: Context) -> Outcome:
    from episteme_core.personal.library import list_sources, render_sources

    data = list_sources(ctx.home, warn=ctx.warn)
    return Outcome(data=data, text=render_sources(data))


def _configure_show(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("reference", metavar="ID[#N]",
                        help="a record id (book:corpus/name, chat:claude/project/session, intent, ...), "
                             "optionally #N for its Nth paragraph (from 1)")
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
