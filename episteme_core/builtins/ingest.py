"""``episteme ingest [SOURCE ...] | --all | --reshard``: capture from a source, then pack the shards.

A source joins by having ``help``, ``configure(parser)`` and ``ingest(args, ctx) -> Outcome``
(see ``episteme_core.kernel.contracts.IngestSource``); sources without ``ingest`` (http, file) are used by
other commands (``snapshot``, ``manual-ingest``) and do not appear here. A source that also has
``ingest_all(ctx) -> Outcome | None`` runs under ``--all`` (None: not configured, skipped).

With no source, ``ingest`` packs what the shards lack (extract, chunk, index); ``--reshard``
rebuilds every shard. The writer lock is held for the whole run.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from episteme_core.errors import EpistemeError
from episteme_core.hookspecs import Register, hookimpl
from episteme_core.kernel.context import Outcome
from episteme_core.kernel.contracts import Command

if TYPE_CHECKING:
    from episteme_core.kernel.context import Context


def _ingest_sources() -> dict[str, object]:
    from episteme_core.kernel.loader import get_plugins

    found = {}
    for source in get_plugins().all("source"):
        if callable(getattr(source, "ingest", None)) and callable(getattr(source, "configure", None)):
            found[source.name] = source
    return found


def _configure(parser: argparse.ArgumentParser) -> None:
    from episteme_core.cli.main import add_global_options
    from episteme_core.cli.parser import ArgumentParser

    parser.add_argument(
        "--all", dest="all_sources", action="store_true",
        help="run every source that can run unattended and is configured (claude, intent, and "
             "plugin sources such as repositories listed in config.json), then pack",
    )
    parser.add_argument("--reshard", action="store_true", help="rebuild every shard from the chunks")
    add_allow_forgotten(parser)
    sub = parser.add_subparsers(dest="source", metavar="SOURCE", parser_class=ArgumentParser)
    for name, source in sorted(_ingest_sources().items()):
        child = sub.add_parser(
            name,
            help=getattr(source, "help", ""),
            description=getattr(source, "description", None) or getattr(source, "help", ""),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        source.configure(child)  # type: ignore[attr-defined]
        add_allow_forgotten(child, suppress=True)
        add_global_options(child, suppress=True)


def add_allow_forgotten(parser: argparse.ArgumentParser, *, suppress: bool = False) -> None:
    """``--allow-forgotten`` (every capturing command): capture again what ``forget`` removed."""
    parser.add_argument("--allow-forgotten", action="store_true",
                        default=argparse.SUPPRESS if suppress else False,
                        help="capture again sources (and paragraphs) that episteme forget removed; without "
                             "it they are refused (a paragraph is stored redacted)")


def allowing(args: argparse.Namespace) -> Any:
    """The block in which this command may capture what was forgotten (``--allow-forgotten``)."""
    from episteme_core.stages.snapshots import allowing_forgotten

    return allowing_forgotten(bool(getattr(args, "allow_forgotten", False)))


def _run(args: argparse.Namespace, ctx: Context) -> Outcome:
    with allowing(args):
        return _run_ingest(args, ctx)


def _run_ingest(args: argparse.Namespace, ctx: Context) -> Outcome:
    name = getattr(args, "source", None)
    all_sources = bool(getattr(args, "all_sources", False))
    reshard = bool(getattr(args, "reshard", False))
    if name and all_sources:
        raise EpistemeError("INVALID_USAGE", "--all runs every source; name no source with it",
                            hint="Run 'episteme ingest --help'.")
    if name:
        source = _ingest_sources()[name]
        if not reshard:
            outcome: Outcome = source.ingest(args, ctx)  # type: ignore[attr-defined]
            return outcome
        from episteme_core.personal.pack import pack_stages

        with ctx.writing():  # re-entrant: the source may take it again
            first: Outcome = source.ingest(args, ctx)  # type: ignore[attr-defined]
            packed = pack_stages(ctx, reshard=True)
        return Outcome(data={**first.data, "pack": packed}, text=f"{first.text}\n{packed['summary']}")
    if all_sources:
        return _run_all(ctx, reshard=reshard)
    return _pack_only(ctx, reshard=reshard)


def _pack_only(ctx: Context, *, reshard: bool) -> Outcome:
    from episteme_core.personal.pack import pack_stages

    with ctx.writing():
        packed = pack_stages(ctx, reshard=reshard)
    return Outcome(data={"sources": [], "pack": packed}, text=packed["summary"])


def _run_all(ctx: Context, *, reshard: bool) -> Outcome:
    """Every source with ``ingest_all``; one failing source is a warning, all failing is the error."""
    from episteme_core.personal.pack import pack_stages

    rows: list[dict[str, Any]] = []
    texts: list[str] = []
    failures: list[EpistemeError] = []
    with ctx.writing():
        for name, source in sorted(_ingest_sources().items()):
            runner = getattr(source, "ingest_all", None)
            if not callable(runner):
                continue
            try:
                result = runner(ctx)
            except EpistemeError as exc:
                if exc.code in ("RESOURCE_BUSY", "CANCELLED"):
                    raise
                failures.append(exc)
                rows.append({"source": name, "status": "failed", "error": {"code": exc.code,
                                                                          "message": exc.message}})
                ctx.warn("SOURCE_FAILED", f"{name}: {exc.message}", source=name, errorCode=exc.code)
                texts.append(f"{name}: failed ({exc.code}): {exc.message}")
                continue
            if result is None:
                rows.append({"source": name, "status": "not configured"})
                texts.append(f"{name}: not configured, skipped")
                continue
            rows.append({"status": "ok", **result.data})
            texts.append(result.text)
        ran = [row for row in rows if row["status"] != "not configured"]
        if ran and len(failures) == len(ran):
            raise failures[0]
        packed = pack_stages(ctx, reshard=reshard)
    texts.append(packed["summary"])
    if failures:  # the others ran and are packed; the exit status is the worst of the failed ones
        worst = max(failures, key=lambda exc: exc.exit_status)
        failed = [row["source"] for row in rows if row["status"] == "failed"]
        listing = "; ".join(f"{row['source']} ({row['error']['code']}: {row['error']['message']})"
                            for row in rows if row["status"] == "failed")
        raise EpistemeError(
            worst.code, f"ingest --all: {len(failed)} of {len(ran)} source(s) failed: {listing}",
            details={"failed": failed, "sources": rows, "pack": packed},
            hint="the other sources were ingested and packed; fix the failed ones and run it again",
        )
    return Outcome(data={"sources": rows, "pack": packed}, text="\n".join(texts))


@hookimpl
def episteme_commands(register: Register) -> None:
    register(Command(
        name="ingest",
        help="ingest records from a source (books, claude, intent, warc, or one a plugin adds) and "
             "pack the shards; with no source, pack what the shards lack",
        configure=_configure,
        run=_run,
    ))
