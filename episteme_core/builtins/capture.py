"""Capture commands and components: ``snapshot``, ``manual-ingest``, ``export``; sources ``http``,
``file`` and ``warc`` (``episteme ingest warc``); the ``warc`` exporter (``episteme export warc``).

The shell only: options in, one library call from ``episteme_core.capture``, the report out.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from episteme_core.cli.command import Command, Outcome
from episteme_core.cli.parser import add_int_option
from episteme_core.errors import EpistemeError
from episteme_core.hookspecs import Register, hookimpl

if TYPE_CHECKING:
    from episteme_core.cli.context import Context

MIB = 1024 * 1024
GIB = 1024 * MIB


def _add_snapshots_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--snapshots", metavar="DIR", default=None,
                        help="keep the snapshots stage here instead of HOME/snapshots")


def _apply_snapshots_option(args: argparse.Namespace, ctx: Context) -> None:
    if getattr(args, "snapshots", None):
        ctx.home.stage_overrides["snapshots"] = Path(args.snapshots).expanduser().absolute()


def _add_input_bounds(parser: argparse.ArgumentParser) -> None:
    add_int_option(parser, "--max-sources", default=1000, low=1, high=100_000,
                   help="most entries a manifest or map may hold")
    add_int_option(parser, "--max-input-bytes", default=64 * MIB, low=1, high=GIB,
                   help="most bytes read from the manifest or map (also from stdin)")


def _add_max_bytes(parser: argparse.ArgumentParser, what: str) -> None:
    add_int_option(parser, "--max-bytes", default=25 * MIB, low=1, high=GIB, help=what)


def _progress(ctx: Context) -> Any:
    return ctx.progress.update


# snapshot -------------------------------------------------------------------------------------


def _configure_snapshot(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--manifest", required=True, metavar="FILE",
                        help="JSON array of {url, family?, authority?, extractor?}; '-' reads stdin")
    add_int_option(parser, "--timeout", default=60_000, low=1, high=600_000,
                   help="total milliseconds per source: every attempt, backoff and body byte "
                        "(past it: LIMIT_EXCEEDED)")
    add_int_option(parser, "--read-timeout", default=30_000, low=1, high=600_000,
                   help="milliseconds one connect or read may wait for a byte (past it: a retryable "
                        "SOURCE_UNAVAILABLE)")
    _add_max_bytes(parser, "most bytes per response, on the wire and decoded (a compression bomb "
                           "stops here)")
    add_int_option(parser, "--retries", default=2, low=0, high=8,
                   help="extra attempts after 408, 425, 429, 500, 502, 503, 504 or a transport error")
    add_int_option(parser, "--retry-backoff-ms", default=250, low=0, high=5000,
                   help="backoff before retry n is min(this·2^n, 5000) ms")
    add_int_option(parser, "--retry-after-cap-ms", default=30_000, low=0, high=30_000,
                   help="longest Retry-After honoured, in milliseconds")
    _add_input_bounds(parser)
    parser.add_argument("--allow-localhost", action="store_true",
                        help="allow loopback addresses (127.0.0.0/8, ::1)")
    parser.add_argument("--allow-private-networks", action="store_true",
                        help="allow private and link-local addresses (10/8, 172.16/12, 192.168/16, "
                             "100.64/10, fc00::/7, 169.254/16, fe80::/10)")
    parser.add_argument("--fail-fast", action="store_true",
                        help="stop at the first failed source and commit nothing (exit with its code)")
    _add_snapshots_option(parser)


def _run_snapshot(args: argparse.Namespace, ctx: Context) -> Outcome:
    from episteme_core.capture.http import FetchSettings
    from episteme_core.capture.manifest import read_manifest
    from episteme_core.capture.netguard import NetPolicy
    from episteme_core.capture.run import snapshot_sources

    _apply_snapshots_option(args, ctx)
    entries = read_manifest(args.manifest, max_input_bytes=args.max_input_bytes,
                            max_sources=args.max_sources)
    settings = FetchSettings(
        timeout_s=args.timeout / 1000.0, read_timeout_s=args.read_timeout / 1000.0,
        max_bytes=args.max_bytes, retries=args.retries,
        policy=NetPolicy(allow_localhost=args.allow_localhost,
                         allow_private_networks=args.allow_private_networks),
        backoff_base_ms=float(args.retry_backoff_ms), retry_after_cap_s=args.retry_after_cap_ms / 1000.0,
    )
    with ctx.writing():
        report = snapshot_sources(ctx.home, entries, settings, fail_fast=args.fail_fast,
                                  progress=_progress(ctx), warn=ctx.warn, command=ctx.command)
    return Outcome(data=report.data(), text=report.text("Snapshot of"))


# manual-ingest --------------------------------------------------------------------------------


def _configure_manual(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--map", required=True, metavar="FILE",
                        help="JSON array of {sourceUrl, localPath, contentType?}; '-' reads stdin")
    parser.add_argument("--root", metavar="DIR", default=None,
                        help="folder that relative localPath values are read from (default: the "
                             "map's folder; the current folder for stdin); when given, absolute "
                             "localPath values must lie inside it too")
    _add_max_bytes(parser, "most bytes per local file")
    _add_input_bounds(parser)
    _add_snapshots_option(parser)


def _run_manual(args: argparse.Namespace, ctx: Context) -> Outcome:
    from episteme_core.capture.manifest import read_map
    from episteme_core.capture.manual import manual_ingest

    _apply_snapshots_option(args, ctx)
    entries = read_map(args.map, max_input_bytes=args.max_input_bytes, max_sources=args.max_sources)
    if args.root:
        root = Path(args.root)
    else:
        root = Path.cwd() if args.map == "-" else Path(args.map).absolute().parent
    if not root.is_dir():
        raise EpistemeError("INVALID_USAGE", f"--root {root} is not a folder", details={"path": str(root)})
    with ctx.writing():
        report = manual_ingest(ctx.home, entries, root.absolute(), max_bytes=args.max_bytes,
                               progress=_progress(ctx), warn=ctx.warn, command=ctx.command,
                               confine_absolute=args.root is not None)
    return Outcome(data=report.data(), text=report.text("Ingested"))


# sources --------------------------------------------------------------------------------------


class HttpSource:
    """Web pages over HTTP(S), captured by ``episteme snapshot --manifest M``."""

    name = "http"
    help = "web pages over HTTP(S): episteme snapshot --manifest M"


class FileSource:
    """Local files standing for URLs, captured by ``episteme manual-ingest --map F``."""

    name = "file"
    help = "local files recorded as URLs: episteme manual-ingest --map F"


class WarcSource:
    """``episteme ingest warc FILE``: HTTP response records of a WARC file as snapshots."""

    name = "warc"
    help = "import the HTTP response records of a WARC file (.warc or .warc.gz) as snapshots"
    description = (
        "Import each 2xx HTTP response record of a WARC file as a snapshot of its target URI, observed "
        "at its WARC-Date. Other record types and statuses are skipped with a count. Files that "
        "'episteme export warc' wrote restore the very same snapshot ids."
    )

    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("file", metavar="FILE", help="the WARC file (.warc or .warc.gz)")
        _add_max_bytes(parser, "most payload bytes per record")
        _add_snapshots_option(parser)

    def ingest(self, args: argparse.Namespace, ctx: Context) -> Outcome:
        from episteme_core.capture.warc import import_warc

        _apply_snapshots_option(args, ctx)
        path = Path(args.file)
        if not path.is_file():
            raise EpistemeError("INVALID_INPUT", f"{path}: no such file", details={"path": str(path)})
        with ctx.writing():
            report = import_warc(ctx.home, path, max_bytes=args.max_bytes, progress=_progress(ctx),
                                 warn=ctx.warn, command=ctx.command)
        return Outcome(data=report.data(), text=report.text())


# export ---------------------------------------------------------------------------------------


class WarcExporter:
    """``episteme export warc --out F``: every committed snapshot as a WARC 1.1 file."""

    name = "warc"
    help = "write every snapshot as a WARC 1.1 file (response records with WARC-Payload-Digest)"

    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--out", required=True, metavar="FILE",
                            help="the .warc.gz to write; '-' (needs --json) returns it base64 in "
                                 "data.artifact")
        _add_snapshots_option(parser)

    def export(self, args: argparse.Namespace, ctx: Context) -> Outcome:
        from episteme_core.capture.warc import artifact, export_to

        _apply_snapshots_option(args, ctx)
        if args.out == "-" and not ctx.as_json:
            raise EpistemeError("INVALID_USAGE", "--out - requires --json (the WARC comes back in "
                                "data.artifact)")
        summary, data = export_to(ctx.home, args.out)
        if data is not None:
            summary["artifact"] = artifact(data)
        text = (f"Exported {summary['records'] - 1} snapshot(s) of {summary['sources']} source(s)"
                + (f" to {args.out}" if data is None else ""))
        return Outcome(data=summary, text=text)


def _exporters() -> dict[str, Any]:
    from episteme_core.plugins import get_plugins

    return {e.name: e for e in get_plugins().all("exporter")
            if callable(getattr(e, "export", None)) and callable(getattr(e, "configure", None))}


def _configure_export(parser: argparse.ArgumentParser) -> None:
    from episteme_core.cli.main import add_global_options
    from episteme_core.cli.parser import ArgumentParser

    sub = parser.add_subparsers(dest="exporter", metavar="EXPORTER", parser_class=ArgumentParser)
    for name, exporter in sorted(_exporters().items()):
        child = sub.add_parser(name, help=getattr(exporter, "help", ""),
                               description=getattr(exporter, "help", ""))
        exporter.configure(child)
        add_global_options(child, suppress=True)


def _run_export(args: argparse.Namespace, ctx: Context) -> Outcome:
    name = getattr(args, "exporter", None)
    if not name:
        raise EpistemeError("INVALID_USAGE", "name an exporter", hint="Run 'episteme export --help'.")
    outcome: Outcome = _exporters()[name].export(args, ctx)
    return outcome


@hookimpl
def episteme_sources(register: Register) -> None:
    register(HttpSource())
    register(FileSource())
    register(WarcSource())


@hookimpl
def episteme_exporters(register: Register) -> None:
    register(WarcExporter())


@hookimpl
def episteme_commands(register: Register) -> None:
    register(Command(
        name="snapshot",
        help="fetch the URLs of a manifest over HTTP(S) and record what changed",
        description=(
            "Fetch every manifest entry within bounds (time, bytes, redirects, retries) and record new "
            "representations as snapshots. Conditional requests make unchanged sources cheap. Some "
            "failures: the rest is committed, each failure reported, exit 0. All failed, or the first "
            "failure under --fail-fast: nothing committed, exit with that failure's code."
        ),
        configure=_configure_snapshot,
        run=_run_snapshot,
    ))
    register(Command(
        name="manual-ingest",
        help="record local files as the representation of URLs (a strict map; regular files only)",
        configure=_configure_manual,
        run=_run_manual,
    ))
    register(Command(
        name="export",
        help="write derived files from the store (warc, ...)",
        configure=_configure_export,
        run=_run_export,
    ))
