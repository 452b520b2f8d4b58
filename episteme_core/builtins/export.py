"""``episteme export NAME --out FILE|-``: one subcommand per registered exporter.

The command owns the output: ``--out`` (a file, written atomically; ``-`` needs ``--json`` and the
bytes come back in ``data.artifact``), the byte count and sha256. An exporter only adds its own
options and writes bytes to the stream it is given (``episteme_core.kernel.contracts.Exporter``).
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


def _exporters() -> dict[str, Any]:
    from episteme_core.kernel.loader import get_plugins

    return {exporter.name: exporter for exporter in get_plugins().all("exporter")}


def _configure(parser: argparse.ArgumentParser) -> None:
    from episteme_core.cli.main import add_global_options
    from episteme_core.cli.parser import ArgumentParser

    sub = parser.add_subparsers(dest="exporter", metavar="EXPORTER", parser_class=ArgumentParser)
    for name, exporter in sorted(_exporters().items()):
        help_text = exporter.help
        child = sub.add_parser(name, help=help_text, description=getattr(exporter, "description", None)
                               or help_text)
        child.add_argument("--out", required=True, metavar="FILE",
                           help=f"the file to write ({exporter.media_type}); '-' (needs --json) returns "
                                "the bytes in data.artifact")
        exporter.configure(child)
        add_global_options(child, suppress=True)


def _run(args: argparse.Namespace, ctx: Context) -> Outcome:
    from episteme_core.store.output import artifact, export_bytes

    name = getattr(args, "exporter", None)
    if not name:
        raise EpistemeError("INVALID_USAGE", "name an exporter", hint="Run 'episteme export --help'.")
    exporter = _exporters()[name]
    if args.out == "-" and not ctx.as_json:
        raise EpistemeError("INVALID_USAGE", "--out - requires --json (the bytes come back in data.artifact)")
    exported = export_bytes(lambda stream: exporter.export(args, ctx, stream), args.out)
    data: dict[str, Any] = {
        **exported.summary,
        "exporter": name,
        "mediaType": exporter.media_type,
        "bytes": exported.size,
        "sha256": exported.sha256,
        "outputPath": str(exported.path) if exported.path else None,
    }
    if exported.data is not None:
        data["artifact"] = artifact(name, exporter.media_type, exported.data)
    where = f" to {exported.path}" if exported.path else ""
    return Outcome(data=data, text=f"Exported {name}: {exported.size} bytes{where}")


@hookimpl
def episteme_commands(register: Register) -> None:
    register(Command(
        name="export",
        help="write a derived file from the store with a registered exporter (warc, ...)",
        description=(
            "Run an exporter over the committed stages and write what it produces to --out, "
            "atomically; '--out -' with --json returns the bytes in data.artifact."
        ),
        configure=_configure,
        run=_run,
    ))
