"""Capture commands and components: ``snapshot``, ``manual-ingest``; sources ``http``,
``file`` and ``warc`` (``episteme ingest warc``); the ``warc`` exporter (``episteme export warc``).

The shell only: options in, one library call from ``episteme_core.capture``, the report out.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from episteme_core.cli.parser import add_int_option
from episteme_core.errors import EpistemeError
from episteme_core.hookspecs import Register, hookimpl
from episteme_core.kernel.context import Outcome
from episteme_core.kernel.contracts import Command
from episteme_core.records.inputs import GIB, MIB

if TYPE_CHECKING:
    from episteme_core.kernel.context import Context


def add_allow_forgotten(parser: argparse.ArgumentParser) -> None:
    from episteme_core.builtins.ingest import add_allow_forgotten as add

    add(parser)


def _add_snapshots_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--snapshots", metavar="DIR", default=None,
                        help="keep the snapshots stage here instead of HOME/snapshots")


def _apply_snapshots_option(args: argparse.Namespace, ctx: Context) -> None:
    if getattr(args, "snapshots", None):
        ctx.home.stage_overrides["snapshots"] = Path(args.snapshots).expanduser().absolute()


def add_input_bounds(parser: argparse.ArgumentParser) -> None:
    add_int_option(parser, "--max-sources", default=1000, low=1, high=100_000,
                   help="most entries a manifest or map may hold")
    add_int_option(parser, "--max-input-bytes", default=64 * MIB, low=1, high=GIB,
                   help="most bytes read from the manifest or map (also from stdin)")


def add_max_bytes(parser: argparse.ArgumentParser, what: str) -> None:
    """``--max-bytes``: the byte bound of one response or local file."""
    add_int_option(parser, "--max-bytes", default=25 * MIB, low=1, high=GIB, help=what)


def _progress(ctx: Context) -> Any:
    return ctx.progress.update


# snapshot -------------------------------------------------------------------------------------


def add_fetch_options(parser: argparse.ArgumentParser) -> None:
    """The network bounds of a snapshot run (shared by ``snapshot`` and ``pipeline``)."""
    add_int_option(parser, "--timeout", default=60_000, low=1, high=600_000,
                   help="total milliseconds per source: every attempt, backoff and body byte "
                        "(past it: LIMIT_EXCEEDED)")
    add_int_option(parser, "--read-timeout", default=30_000, low=1, high=600_000,
                   help="milliseconds one connect or read may wait for a byte (past it: a retryable "
                        "SOURCE_UNAVAILABLE)")
    add_int_option(parser, "--retries", default=2, low=0, high=8,
                   help="extra attempts after 408, 425, 429, 500, 502, 503, 504 or a transport error")
    add_int_option(parser, "--retry-backoff-ms", default=250, low=0, high=5000,
                   help="backoff before retry n is min(this·2^n, 5000) ms")
    add_int_option(parser, "--retry-after-cap-ms", default=30_000, low=0, high=30_000,
                   help="longest Retry-After honoured, in milliseconds")
    parser.add_argument("--allow-localhost", action="store_true",
                        help="allow loopback addresses (127.0.0.0/8, ::1)")
    parser.add_argument("--allow-private-networks", action="store_true",
                        help="allow private and link-local addresses (10/8, 172.16/12, 192.168/16, "
                             "100.64/10, fc00::/7, 169.254/16, fe80::/10)")
    parser.add_argument("--fail-fast", action="store_true",
                        help="stop at the first failed source and commit nothing (exit with its code)")


def fetch_settings(args: argparse.Namespace) -> Any:
    """The ``FetchSettings`` the options of ``add_fetch_options`` (and ``--max-bytes``) ask for."""
    from episteme_core.capture.http import FetchSettings
    from episteme_core.capture.netguard import NetPolicy

    return FetchSettings(
        timeout_s=args.timeout / 1000.0, read_timeout_s=args.read_timeout / 1000.0,
        max_bytes=args.max_bytes, retries=args.retries,
        policy=NetPolicy(allow_localhost=args.allow_localhost,
                         allow_private_networks=args.allow_private_networks),
        backoff_base_ms=float(args.retry_backoff_ms), retry_after_cap_s=args.retry_after_cap_ms / 1000.0,
    )


def manual_root(map_path: str, root: str | None) -> Path:
    """The folder a map's ``localPath`` values are relative to: ``--root``, else the map's folder
    (the current folder for stdin); not a folder is ``INVALID_USAGE``."""
    if root:
        folder = Path(root).expanduser()
    else:
        folder = Path.cwd() if map_path == "-" else Path(map_path).absolute().parent
    if not folder.is_dir():
        raise EpistemeError("INVALID_USAGE", f"--root {folder} is not a folder",
                            details={"path": str(folder)})
    return folder.absolute()


def _configure_snapshot(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--manifest", required=True, metavar="FILE",
                        help="JSON array of {url, family?, authority?, extractor?}; '-' reads stdin")
    add_max_bytes(parser, "most bytes per response, on the wire and decoded (a compression bomb "
                           "stops here)")
    add_fetch_options(parser)
    add_input_bounds(parser)
    _add_snapshots_option(parser)
    add_allow_forgotten(parser)


def known_components(ctx: Context) -> dict[str, list[str]]:
    """The family and extractor names a manifest may give: those registered (builtins and plugins)."""
    return {kind: sorted(component.name for component in ctx.plugins.all(kind))
            for kind in ("family", "extractor")}


def _run_snapshot(args: argparse.Namespace, ctx: Context) -> Outcome:
    from episteme_core.builtins.ingest import allowing
    from episteme_core.capture.manifest import read_manifest
    from episteme_core.capture.run import snapshot_sources

    _apply_snapshots_option(args, ctx)
    entries = read_manifest(args.manifest, max_input_bytes=args.max_input_bytes,
                            max_sources=args.max_sources, known=known_components(ctx))
    with ctx.writing(), allowing(args):
        report = snapshot_sources(ctx.home, entries, fetch_settings(args), fail_fast=args.fail_fast,
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
    add_max_bytes(parser, "most bytes per local file")
    add_input_bounds(parser)
    add_rehash_option(parser)
    add_list_unchanged_option(parser)
    _add_snapshots_option(parser)
    add_allow_forgotten(parser)


def add_rehash_option(parser: argparse.ArgumentParser) -> None:
    """``--rehash`` (shared with ``pipeline``): hash every local file, trusting no recorded stat."""
    parser.add_argument("--rehash", action="store_true",
                        help="hash every local file again, even where its size, times and inode match "
                             "those recorded when it was last hashed")


def add_list_unchanged_option(parser: argparse.ArgumentParser) -> None:
    """``--list-unchanged`` (shared with ``pipeline``): a row per unchanged file in the report too."""
    parser.add_argument("--list-unchanged", action="store_true",
                        help="list every unchanged file in the report (by default they are only counted: "
                             "data.sources holds the captured and failed files)")


def _run_manual(args: argparse.Namespace, ctx: Context) -> Outcome:
    from episteme_core.capture.manual import manual_ingest, read_map_of

    _apply_snapshots_option(args, ctx)
    entries, stats = read_map_of(ctx.home, args.map, max_input_bytes=args.max_input_bytes,
                                 max_sources=args.max_sources, rehash=args.rehash)
    root = manual_root(args.map, args.root)
    from episteme_core.builtins.ingest import allowing

    with ctx.writing(), allowing(args):
        report = manual_ingest(ctx.home, entries, root, max_bytes=args.max_bytes,
                               progress=_progress(ctx), warn=ctx.warn, command=ctx.command,
                               confine_absolute=args.root is not None, rehash=args.rehash, stats=stats,
                               list_unchanged=args.list_unchanged)
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
        add_max_bytes(parser, "most payload bytes per record")
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
    media_type = "application/warc"

    def configure(self, parser: argparse.ArgumentParser) -> None:
        _add_snapshots_option(parser)

    def export(self, args: argparse.Namespace, ctx: Context, out: IO[bytes]) -> dict[str, Any]:
        from episteme_core.capture.warc import export_warc

        _apply_snapshots_option(args, ctx)
        return export_warc(ctx.home, out)


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
