"""Builtin extraction: the html, pdf, text and xml extractors, the ``generic`` family, ``extract``.

Components are light wrappers: the extractor modules (and html5lib, pdfplumber, defusedxml) are
imported only when something is extracted, so loading plugins stays cheap.
"""

from __future__ import annotations

import argparse
import importlib
from typing import TYPE_CHECKING, Any

from episteme_core.extract.family import Family
from episteme_core.hookspecs import Register, hookimpl
from episteme_core.kernel.context import Outcome
from episteme_core.kernel.contracts import Command

if TYPE_CHECKING:
    from episteme_core.kernel.context import Context
    from episteme_core.records.evidence import Document
    from episteme_core.records.extraction import ExtractRequest


class LazyExtractor:
    """An extractor whose implementation module is imported on first use."""

    def __init__(self, name: str, target: str, version: str, content_types: tuple[str, ...],
                 limits: tuple[str, ...], option_names: tuple[str, ...]) -> None:
        self.name = name
        self.version = version
        self.content_types = content_types
        self.limits = limits
        self.option_names = option_names
        self._target = target
        self._impl: Any = None

    def extract(self, request: ExtractRequest) -> Document:
        if self._impl is None:
            module, cls = self._target.split(":")
            self._impl = getattr(importlib.import_module(module), cls)()
        document: Document = self._impl.extract(request)
        return document


EXTRACTORS = (
    LazyExtractor("html", "episteme_core.extract.html:HtmlExtractor", "1",
                  ("text/html", "application/xhtml+xml"),
                  ("scripts-not-run", "images-not-read", "styles-ignored"),
                  ("maxBytes", "maxDepth", "timeLimitS")),
    LazyExtractor("pdf", "episteme_core.extract.pdf:PdfExtractor", "1", ("application/pdf",),
                  ("no-ocr", "images-not-read", "annotations-not-read"),
                  ("maxPages", "timeLimitS", "maxBytes")),
    LazyExtractor("text", "episteme_core.extract.text:TextExtractor", "1",
                  ("text/plain", "text/markdown", "text/x-markdown"),
                  ("no-layout", "markup-not-interpreted"), ("maxBytes",)),
    LazyExtractor("xml", "episteme_core.extract.xml:XmlExtractor", "1",
                  ("application/xml", "text/xml"),
                  ("no-dtd", "no-external-entities", "schemas-not-applied"), ("maxBytes", "maxDepth")),
)


class GenericFamily(Family):
    """The fallback family: default rules, informative authority, matches nothing by URL."""

    name = "generic"
    version = "1"
    authority = "informative"
    document_type = None

    def matches(self, url: str) -> bool:
        return False


@hookimpl
def episteme_extractors(register: Register) -> None:
    for extractor in EXTRACTORS:
        register(extractor, kind="extractor")
    register(GenericFamily(), kind="family")


def _configure(parser: argparse.ArgumentParser) -> None:
    from episteme_core.cli.executor_options import add_executor_options
    from episteme_core.cli.parser import int_range
    from episteme_core.cli.stage_options import add_stage_options

    parser.add_argument("sources", nargs="*", metavar="SOURCE",
                        help="sources to extract (default: every source's latest snapshot)")
    parser.add_argument("--max-pages", type=int_range(1, 100_000), default=None, metavar="N",
                        help="read at most N pages of a PDF (1-100000; default 2000)")
    parser.add_argument("--time-limit", type=int_range(1, 86_400), default=None, metavar="S",
                        help="seconds one document may take (1-86400; default 300 pdf, 120 html)")
    parser.add_argument("--force", action="store_true",
                        help="extract again even where the committed document can be reused")
    parser.add_argument("--extractor", metavar="NAME", default=None,
                        help="use this extractor for every source whose manifest names none (default: "
                             "the extractor of highest priority for the content type)")
    add_stage_options(parser, "snapshots", "documents")
    add_executor_options(parser)


def _run(args: argparse.Namespace, ctx: Context) -> Outcome:
    from episteme_core.cli.executor_options import executor_spec_of
    from episteme_core.cli.stage_options import apply_stage_options
    from episteme_core.executor import running
    from episteme_core.extract.run import extract_sources

    apply_stage_options(args, ctx)
    spec = executor_spec_of(args)

    options: dict[str, Any] = {}
    if args.max_pages is not None:
        options["maxPages"] = args.max_pages
    if args.time_limit is not None:
        options["timeLimitS"] = args.time_limit

    def progress(current: int, total: int, source: str) -> None:
        ctx.progress.update("extract", current, total, "completed", source)

    with ctx.writing() as home, running(spec) as executor:
        report = extract_sources(home, ctx.plugins, args.sources or None, options, progress,
                                 force=args.force, extractor=args.extractor, warn=ctx.warn, executor=executor)
    rows = report.rows
    for row in rows:
        for warning in row["warnings"] or ():
            ctx.warn("EXTRACTION_WARNING", f"{row['source']}: {warning}", source=row["source"],
                     snapshotId=row["snapshotId"])
    counts = report.counts()
    lines = [f"{r['outcome']:9} {r['status']:8} {r['source']} ({r['extractor']}/{r['family']}, "
             f"{r['sections']} sections, {r['blocks']} blocks)" for r in rows]
    lines.append(f"{counts['extracted']} extracted, {counts['reused']} reused, {counts['failed']} failed")
    lines += [f"failed: {r['source']} ({', '.join(r['diagnostics'] or ()) or 'no diagnostic'})"
              for r in rows if r["outcome"] == "failed"]
    return Outcome(data={"documents": rows, "counts": counts}, text="\n".join(lines))


@hookimpl
def episteme_commands(register: Register) -> None:
    register(Command(
        name="extract",
        help="turn the latest snapshots into evidence documents (offline; html, pdf, text, xml)",
        configure=_configure,
        run=_run,
    ))
