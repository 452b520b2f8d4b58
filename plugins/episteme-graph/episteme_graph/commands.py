"""``episteme graph ...``: the shell. Each subcommand parses its options, calls one library function
and returns an ``Outcome``; the kernel renders text or the envelope."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from episteme_core.api import EpistemeError, Outcome, add_global_options, add_int_option

if TYPE_CHECKING:
    from episteme_core.api import Context

MIB = 1024 * 1024
GIB = 1024 * MIB
FORMATS = ("md", "html", "cypher", "canvas", "ctxt", "jsonld", "chunks", "svg", "png", "graphml", "turtle")
DESCRIPTION = (
    "Knowledge graphs (.knowledge.json): each claim points at evidence, a selector into a source. "
    "episteme never writes a claim: it validates graphs, checks their evidence against the bytes "
    "recorded in the home, merges them without losing anything, and renders them."
)


def _add_max_input(parser: argparse.ArgumentParser, what: str = "a graph") -> None:
    add_int_option(
        parser,
        "--max-input-bytes",
        default=64 * MIB,
        low=1,
        high=GIB,
        help=f"most bytes read from {what} (also from stdin)",
    )


def _configure_validate(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="the .knowledge.json graph; '-' reads stdin")
    parser.add_argument(
        "--engine",
        choices=("compiled", "jsonschema"),
        default="compiled",
        help="run the schema compiled (default) or through the jsonschema library; "
        "both give the same findings",
    )
    _add_max_input(parser)


def _run_validate(args: argparse.Namespace, ctx: Context) -> Outcome:
    from episteme_graph.load import load
    from episteme_graph.validate import render_text, summary_line, validate_value

    graph = load(args.file, max_bytes=args.max_input_bytes)
    report = validate_value(graph.value, graph.name, engine=args.engine, keys=graph.keys).report()
    if not report["ok"]:
        raise EpistemeError(
            "INVALID_INPUT",
            f"{graph.name}: {summary_line(report)}"
            + ("" if ctx.as_json else "\n" + render_text(report, limit=30)),
            details=report,
        )
    return Outcome(data=report, text=render_text(report))


def _configure_verify(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="the .knowledge.json graph; '-' reads stdin")
    parser.add_argument(
        "--bind",
        action="append",
        default=[],
        metavar="SOURCE=SNAPSHOT",
        help="check the graph source SOURCE against the snapshot SNAPSHOT (repeatable)",
    )
    parser.add_argument(
        "--require-all",
        action="store_true",
        help="fail also when a selector cannot be checked (source not recorded, Svg, Code)",
    )
    _add_max_input(parser)


def _run_verify(args: argparse.Namespace, ctx: Context) -> Outcome:
    from episteme_graph.load import load
    from episteme_graph.verify import parse_bindings, render_text, verify_loaded

    graph = load(args.file, max_bytes=args.max_input_bytes)
    report = verify_loaded(graph, ctx.home, bind=parse_bindings(args.bind))
    failing = report["counts"]["not-found"] + (report["counts"]["unverifiable"] if args.require_all else 0)
    if failing:
        raise EpistemeError(
            "INVALID_INPUT",
            f"{graph.name}: {failing} selector(s) failed verification"
            + ("" if ctx.as_json else "\n" + render_text(report, limit=30)),
            details=report,
        )
    return Outcome(data=report, text=render_text(report))


def _configure_evidence(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--from",
        dest="source",
        default="-",
        metavar="FILE",
        help="a 'query --json' or 'ask --json' envelope, or its data (default '-': stdin)",
    )
    parser.add_argument(
        "--support",
        default="mentions",
        choices=("supports", "contradicts", "contextualizes", "mentions"),
        help="the support every record states (default mentions: episteme does not judge)",
    )
    _add_max_input(parser, "the query or ask output")


def _run_evidence(args: argparse.Namespace, ctx: Context) -> Outcome:
    from episteme_graph.evidence import evidence_from, render_text
    from episteme_graph.load import load

    loaded = load(args.source, max_bytes=args.max_input_bytes)
    data = evidence_from(loaded.value, name=loaded.name, support=args.support)
    return Outcome(data=data, text=render_text(data))


def _configure_merge(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("base", metavar="BASE", help="the graph merged into")
    parser.add_argument("incoming", metavar="INCOMING", help="the graph merged from")
    parser.add_argument(
        "--out",
        metavar="FILE",
        default=None,
        help="where the merged graph goes (default: BASE itself, which needs --force)",
    )
    parser.add_argument("--diff-json", metavar="FILE", default=None, help="default OUT.diff.json")
    parser.add_argument("--diff-md", metavar="FILE", default=None, help="default OUT.diff.md")
    parser.add_argument(
        "--fact-conflicts",
        choices=("error", "record"),
        default="error",
        help="a fact id with two payloads: fail (default) or keep both and record a conflict",
    )
    parser.add_argument(
        "--prefer",
        action="append",
        default=[],
        metavar="SIDE|PATH=SIDE",
        help="settle contradictions instead of failing: base or incoming keeps that side's value at "
        "every scalar conflict (metadata included; facts excepted); PATH=SIDE only at that JSON path "
        "and below it, e.g. metadata.title=incoming, nodes[*].cluster=base (repeatable; the most "
        "specific wins). Every value not kept is listed in the diffs",
    )
    parser.add_argument(
        "--versions-dir",
        metavar="DIR",
        default=None,
        help="where prior bytes are archived (default: versions/ beside OUT)",
    )
    add_int_option(
        parser,
        "--max-versions",
        default=5,
        low=1,
        high=100,
        help="archives kept active; older ones move to versions/retired/",
    )
    parser.add_argument("--force", action="store_true", help="replace an existing output (BASE included)")
    _add_max_input(parser)


def _run_merge(args: argparse.Namespace, ctx: Context) -> Outcome:
    from episteme_graph.mergefiles import MergeRequest, merge_files, render_text

    request = MergeRequest(
        base=Path(args.base),
        incoming=Path(args.incoming),
        out=Path(args.out) if args.out else Path(args.base),
        diff_json=Path(args.diff_json) if args.diff_json else None,
        diff_md=Path(args.diff_md) if args.diff_md else None,
        fact_conflicts=args.fact_conflicts,
        prefer=tuple(args.prefer),
        force=args.force,
        versions_dir=Path(args.versions_dir) if args.versions_dir else None,
        max_versions=args.max_versions,
        max_bytes=args.max_input_bytes,
    )
    data = merge_files(request)
    return Outcome(data=data, text=render_text(data))


def _configure_diff(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("a", metavar="A", help="the graph compared from ('-' reads stdin)")
    parser.add_argument("b", metavar="B", help="the graph compared with")
    _add_max_input(parser)


def _run_diff(args: argparse.Namespace, ctx: Context) -> Outcome:
    from episteme_graph.graphdiff import diff_graphs, render_markdown
    from episteme_graph.load import load_object

    a = load_object(args.a, max_bytes=args.max_input_bytes)
    b = load_object(args.b, max_bytes=args.max_input_bytes)
    data = {"a": {"file": a.name, "sha256": a.sha256}, "b": {"file": b.name, "sha256": b.sha256}}
    data.update(diff_graphs(a.value, b.value))
    return Outcome(data=data, text=render_markdown(data, a.name, b.name).rstrip("\n"))


def _configure_export(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="the .knowledge.json graph")
    parser.add_argument(
        "--format",
        required=True,
        metavar="FORMAT",
        help=f"{', '.join(FORMATS)}, or a format another plugin registers",
    )
    parser.add_argument(
        "--out",
        metavar="FILE",
        default=None,
        help="default: FILE with the format's suffix; '-' (needs --json) returns the bytes in data.artifact",
    )
    parser.add_argument(
        "--include-inferred",
        action="store_true",
        help="chunks: keep chunks left out of default retrieval (inferences)",
    )
    _add_max_input(parser)


def _run_export(args: argparse.Namespace, ctx: Context) -> Outcome:
    from episteme_graph.exporters import export_file, graph_exporters

    exporters = graph_exporters(ctx.plugins)
    if args.format not in exporters:
        raise EpistemeError(
            "INVALID_USAGE",
            f"unknown format {args.format!r}",
            hint=f"Formats: {', '.join(sorted(exporters))}.",
        )
    if args.out == "-" and not ctx.as_json:
        raise EpistemeError("INVALID_USAGE", "--out - requires --json (the file comes back in data.artifact)")
    options = {"include_inferred": args.include_inferred}
    data = export_file(
        exporters[args.format], args.file, args.out, options, max_bytes=args.max_input_bytes, warn=ctx.warn
    )
    where = "data.artifact" if args.out == "-" else data["path"]
    return Outcome(data=data, text=f"Exported {args.format} ({data['bytes']} bytes) to {where}")


def _configure_normalize(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH", help="local .txt .md .html .csv .json files")
    parser.add_argument(
        "--root",
        metavar="DIR",
        default=None,
        help="paths must lie inside this folder (default: the current folder)",
    )
    add_int_option(parser, "--max-bytes", default=64 * MIB, low=1, high=64 * MIB, help="most bytes per file")
    add_int_option(
        parser, "--max-segments", default=10_000, low=1, high=10_000, help="most segments per file"
    )
    add_int_option(
        parser,
        "--max-segment-chars",
        default=16_000,
        low=256,
        high=16_000,
        help="longest segment; longer paragraphs are split",
    )


def _run_normalize(args: argparse.Namespace, ctx: Context) -> Outcome:
    from episteme_graph.normalize import Limits, normalize_paths, render_text

    root = Path(args.root) if args.root else Path.cwd()
    limits = Limits(
        max_bytes=args.max_bytes, max_segments=args.max_segments, max_segment_chars=args.max_segment_chars
    )
    data = normalize_paths([Path(p) for p in args.paths], root, limits)
    return Outcome(data=data, text=render_text(data))


def _configure_view(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="the .knowledge.json graph")
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1; any other needs --token-file)",
    )
    add_int_option(parser, "--port", default=8765, low=0, high=65535, help="port (0: any free port)")
    parser.add_argument(
        "--token-file",
        metavar="F",
        default=None,
        help="a private file (your own, mode 0600 or 0400, at most 1 KiB) holding the token every "
        "request must carry: at least 16 characters of A-Z a-z 0-9 - . _ ~ + / (RFC 6750), as for "
        "episteme serve",
    )
    _add_max_input(parser)


def _run_view(args: argparse.Namespace, ctx: Context) -> Outcome:
    from episteme_graph.server import ViewSettings, serve_forever

    settings = ViewSettings(
        graph=Path(args.file),
        host=args.host,
        port=args.port,
        token_file=Path(args.token_file) if args.token_file else None,
        max_bytes=args.max_input_bytes,
    )
    data = serve_forever(settings)
    return Outcome(data=data, text="stopped")


SUBCOMMANDS: dict[str, tuple[str, Any, Any]] = {
    "validate": (
        "check a graph: the schema and every rule, with its conformance score",
        _configure_validate,
        _run_validate,
    ),
    "verify": (
        "check each evidence selector against the bytes recorded in the home",
        _configure_verify,
        _run_verify,
    ),
    "evidence": (
        "read the output of 'episteme query --json' or 'ask --json' (not a graph) and print evidence "
        "records and the sources they cite, ready to paste into a graph",
        _configure_evidence,
        _run_evidence,
    ),
    "diff": (
        "compare two graphs without merging: added, removed, changed, and the conflicts a merge "
        "would meet (each with both values and its JSON path); Markdown, or --json",
        _configure_diff,
        _run_diff,
    ),
    "merge": (
        "merge INCOMING into BASE: nothing dropped, nothing overwritten silently, prior bytes archived",
        _configure_merge,
        _run_merge,
    ),
    "export": (
        "render a graph as md, html, cypher, canvas, ctxt, jsonld, chunks, svg, png, graphml or turtle "
        "(byte-deterministic)",
        _configure_export,
        _run_export,
    ),
    "normalize": (
        "turn local text files into segments with selectors a graph can cite",
        _configure_normalize,
        _run_normalize,
    ),
    "view": ("serve the HTML viewer of a graph on 127.0.0.1, read-only", _configure_view, _run_view),
}


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="graph_command", metavar="SUBCOMMAND", parser_class=type(parser))
    for name, (help_text, configure_one, _run) in SUBCOMMANDS.items():
        child = sub.add_parser(name, help=help_text, description=help_text)
        configure_one(child)
        add_global_options(child, suppress=True)


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    name = getattr(args, "graph_command", None)
    if not name:
        raise EpistemeError("INVALID_USAGE", "name a graph subcommand", hint="Run 'episteme graph --help'.")
    outcome: Outcome = SUBCOMMANDS[name][2](args, ctx)
    return outcome
