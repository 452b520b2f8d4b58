"""``episteme ingest <source> ...``: one subcommand per registered source that can ingest.

A source joins by having ``help``, ``configure(parser)`` and ``ingest(args, ctx) -> Outcome``
(see ``episteme_core.sources.IngestSource``); sources without ``ingest`` (http, file) are used by
other commands (``snapshot``, ``manual-ingest``) and do not appear here.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from episteme_core.cli.command import Command, Outcome
from episteme_core.errors import EpistemeError
from episteme_core.hookspecs import Register, hookimpl

if TYPE_CHECKING:
    from episteme_core.cli.context import Context


def _ingest_sources() -> dict[str, object]:
    from episteme_core.plugins import get_plugins

    found = {}
    for source in get_plugins().all("source"):
        if callable(getattr(source, "ingest", None)) and callable(getattr(source, "configure", None)):
            found[source.name] = source
    return found


def _configure(parser: argparse.ArgumentParser) -> None:
    from episteme_core.cli.main import add_global_options
    from episteme_core.cli.parser import ArgumentParser

    sub = parser.add_subparsers(dest="source", metavar="SOURCE", parser_class=ArgumentParser)
    for name, source in sorted(_ingest_sources().items()):
        child = sub.add_parser(
            name,
            help=getattr(source, "help", ""),
            description=getattr(source, "description", None) or getattr(source, "help", ""),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        source.configure(child)  # type: ignore[attr-defined]
        add_global_options(child, suppress=True)


def _run(args: argparse.Namespace, ctx: Context) -> Outcome:
    name = getattr(args, "source", None)
    if not name:
        raise EpistemeError(
            "INVALID_USAGE", "name a source to ingest", hint="Run 'episteme ingest --help'."
        )
    source = _ingest_sources()[name]
    outcome: Outcome = source.ingest(args, ctx)  # type: ignore[attr-defined]
    return outcome


@hookimpl
def episteme_commands(register: Register) -> None:
    register(Command(
        name="ingest",
        help="ingest records from a source (warc, books, claude, git, ...) into the store",
        configure=_configure,
        run=_run,
    ))
