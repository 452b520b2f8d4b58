"""Builtin commands that remove: ``forget`` (a source, a record or a paragraph, leaving a tombstone)
and ``gc`` (what nothing names)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from episteme_core.hookspecs import Register, hookimpl
from episteme_core.kernel.context import Outcome
from episteme_core.kernel.contracts import Command

if TYPE_CHECKING:
    from episteme_core.kernel.context import Context

MAX_REASON_CHARS = 1000


def _configure_forget(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("records", nargs="*", metavar="RECORD[#N]",
                        help="a record to forget whole (book:corpus/name), or paragraph N of it")
    parser.add_argument("--source", action="append", default=[], metavar="URL|ID",
                        help="a source (a URL or a record id) to forget with every version of it; repeatable")
    parser.add_argument("--prefix", action="append", default=[], metavar="TEXT",
                        help="forget every source whose URL or record id starts with TEXT (a repository "
                             "git:NAME@, a corpus book:NAME/); repeatable")
    parser.add_argument("--reason", default=None, metavar="TEXT",
                        help=f"why, kept in the tombstone (at most {MAX_REASON_CHARS} characters)")
    parser.add_argument("--dry-run", action="store_true",
                        help="list exactly what would go (snapshots, blobs, documents, chunks, log lines) "
                             "and change nothing")


def _run_forget(args: argparse.Namespace, ctx: Context) -> Outcome:
    from episteme_core.errors import EpistemeError
    from episteme_core.personal.forget import ForgetRequest, describe, forget
    from episteme_core.personal.library import parse_reference

    if args.reason is not None and len(args.reason) > MAX_REASON_CHARS:
        raise EpistemeError("INVALID_USAGE", f"--reason is longer than {MAX_REASON_CHARS} characters",
                            details={"chars": len(args.reason), "limit": MAX_REASON_CHARS})
    sources: list[str] = list(args.source)
    paragraphs: list[tuple[str, int]] = []
    for reference in args.records:
        record_id, n = parse_reference(reference)
        if n is None:
            sources.append(record_id)
        else:
            paragraphs.append((record_id, n))
    request = ForgetRequest(sources=tuple(sources), prefixes=tuple(args.prefix), paragraphs=tuple(paragraphs),
                            reason=args.reason, dry_run=args.dry_run)
    data = forget(ctx, request)
    return Outcome(data=data, text=describe(data))


def _configure_gc(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dry-run", action="store_true",
                        help="list the blobs, objects, buckets and temp files nothing names; remove none")


def _run_gc(args: argparse.Namespace, ctx: Context) -> Outcome:
    from episteme_core.personal.forget import finish_pending
    from episteme_core.store.gc import collect_garbage, describe

    with ctx.writing() as home:
        finished = None if args.dry_run else finish_pending(ctx)
        data = collect_garbage(home, dry_run=args.dry_run)
    data["finishedForget"] = finished["tombstone"] if finished else None
    text = describe(data)
    if finished:
        text = f"finished the interrupted forget {finished['tombstone'][:12]}\n{text}"
    return Outcome(data=data, text=text)


@hookimpl
def episteme_commands(register: Register) -> None:
    register(Command(
        name="forget",
        help="remove a source, a record or a paragraph from every stage, blob and log line, leaving a "
             "tombstone (what, by hash; when; why)",
        description=(
            "Remove what you name from the home for good: its snapshots and blobs, its document, chunks "
            "and shard rows (the shards that held them are rebuilt), and its log lines, which are "
            "redacted; a tombstone appended to the log says what went (by hash), when and why. A source "
            "forgotten is refused by every later capture unless it is given --allow-forgotten. A forget "
            "that was interrupted is finished by the next forget or gc."
        ),
        configure=_configure_forget,
        run=_run_forget,
    ))
    register(Command(
        name="gc",
        help="remove the blobs, stage objects and buckets nothing names (under the writer lock)",
        configure=_configure_gc,
        run=_run_gc,
    ))
