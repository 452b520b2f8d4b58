"""The graph exporters (one per format) and writing their output: atomic, never over the input."""

from __future__ import annotations

import argparse
import base64
import os
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from episteme_core.api import Context

MEDIA_TYPES = {
    "md": "text/markdown; charset=utf-8",
    "html": "text/html; charset=utf-8",
    "cypher": "application/x-cypher-query; charset=utf-8",
    "canvas": "application/json",
    "ctxt": "text/plain; charset=utf-8",
    "jsonld": "application/ld+json",
    "chunks": "application/jsonl",
    "svg": "image/svg+xml",
    "png": "image/png",
    "graphml": "application/graphml+xml",
    "turtle": "text/turtle; charset=utf-8",
}


@attrs.frozen
class GraphExporter:
    """Renders a graph in one format. Also ``episteme export graph-<format> FILE --out F``."""

    graph_format: str
    suffix: str
    help: str
    renderer: str  # "module:function" under episteme_graph.export, loaded on first use

    @property
    def name(self) -> str:
        return f"graph-{self.graph_format}"

    @property
    def media_type(self) -> str:
        return MEDIA_TYPES.get(self.graph_format, "application/octet-stream")

    def render(self, graph: dict[str, Any], options: dict[str, Any]) -> bytes:
        """The graph's bytes in this format; the cycle collector is paused meanwhile (a render
        builds many containers and frees them in one go: collecting on the way is wasted work)."""
        import importlib

        from episteme_core.api import paused_cycle_gc

        module, function = self.renderer.split(":")
        render: Callable[[dict[str, Any], dict[str, Any]], bytes] = getattr(
            importlib.import_module(f"episteme_graph.export.{module}"), function
        )
        with paused_cycle_gc():
            return render(graph, options)

    def configure(self, parser: argparse.ArgumentParser) -> None:
        """The graph to render; ``episteme export`` owns ``--out`` (a file, or ``-`` with --json)."""
        parser.add_argument("file", metavar="FILE", help="the .knowledge.json graph")

    def export(self, args: argparse.Namespace, ctx: Context, out: IO[bytes]) -> dict[str, Any]:
        """Render ``args.file`` into ``out`` (``episteme export graph-<format> FILE --out F``)."""
        if args.out != "-":
            check_target(Path(args.out), [] if args.file == "-" else [Path(args.file)])
        data, summary = render_file(self, args.file, {}, warn=ctx.warn)
        out.write(data)
        return {"format": summary["format"], "graphSha256": summary["graphSha256"]}


EXPORTERS = (
    GraphExporter(
        "md",
        ".knowledge.md",
        "a graph as Markdown (front matter, concepts, Mermaid, sources)",
        "markdown:render",
    ),
    GraphExporter(
        "html", ".knowledge.html", "a graph as one self-contained HTML viewer (no network)", "html:render"
    ),
    GraphExporter(
        "cypher", ".knowledge.cypher", "a graph as an idempotent Neo4j 5 Cypher script", "cypher:render"
    ),
    GraphExporter("canvas", ".canvas", "a graph as a JSON Canvas 1.0 file", "canvas:render"),
    GraphExporter("ctxt", ".knowledge.ctxt", "a graph as KD-CTXT/1 records with body hashes", "ctxt:render"),
    GraphExporter("jsonld", ".jsonld", "a graph as JSON-LD (schema.org terms)", "jsonld:render"),
    GraphExporter(
        "chunks", ".chunks.jsonl", "a graph's clean-text chunks, one JSON line each", "chunks:render"
    ),
    GraphExporter(
        "svg", ".knowledge.svg", "a graph as a static SVG picture (the viewer's layout)", "svg:render"
    ),
    GraphExporter(
        "png",
        ".knowledge.png",
        "a graph as a PNG picture (the SVG through Chromium or cairosvg)",
        "png:render",
    ),
    GraphExporter(
        "graphml", ".graphml", "a graph as GraphML: concepts and relationships (networkx)", "graphml:render"
    ),
    GraphExporter(
        "turtle", ".ttl", "a graph as RDF Turtle, the JSON-LD export's terms (rdflib)", "turtle:render"
    ),
)


def graph_exporters(plugins: Any) -> dict[str, Any]:
    """Every registered exporter that renders a graph, by ``--format`` name (other plugins may add)."""
    return {
        e.graph_format: e
        for e in plugins.all("exporter")
        if isinstance(getattr(e, "graph_format", None), str) and callable(getattr(e, "render", None))
    }


def default_output(graph_file: str, suffix: str) -> Path:
    path = Path(graph_file)
    name = path.name
    for ending in (".knowledge.json", ".json"):
        if name.endswith(ending) and len(name) > len(ending):
            return path.with_name(name[: -len(ending)] + suffix)
    return path.with_name(name + suffix)


def check_target(target: Path, inputs: list[Path]) -> None:
    """Refuse a target that is an input (same file, also through links), a symlink or a folder."""
    from episteme_core.api import EpistemeError

    if target.is_symlink():
        raise EpistemeError(
            "INVALID_USAGE", f"{target}: is a symlink; give the real path", details={"path": str(target)}
        )
    if target.exists():
        if not target.is_file():
            raise EpistemeError(
                "INVALID_USAGE", f"{target}: not a regular file", details={"path": str(target)}
            )
        for source in inputs:
            if source.exists() and os.path.samefile(target, source):
                raise EpistemeError(
                    "INVALID_USAGE",
                    f"{target}: would overwrite the input {source}",
                    details={"path": str(target)},
                )


def render_file(
    exporter: Any,
    graph_file: str,
    options: dict[str, Any],
    *,
    max_bytes: int = 64 * 1024 * 1024,
    warn: Callable[..., None] | None = None,
) -> tuple[bytes, dict[str, Any]]:
    """Render ``graph_file`` with ``exporter``: its bytes and a summary (a warning when invalid)."""
    from episteme_core.api import sha256_hex
    from episteme_graph.load import load_object
    from episteme_graph.validate import validate_value

    graph = load_object(graph_file, max_bytes=max_bytes)
    validation = validate_value(graph.value, graph.name, keys=graph.keys)
    if validation.errors and warn is not None:
        warn(
            "GRAPH_INVALID",
            f"{graph.name} has {len(validation.errors)} validation error(s); exported "
            "best-effort (run episteme graph validate)",
        )
    data = exporter.render(graph.value, options)
    summary: dict[str, Any] = {
        "format": exporter.graph_format,
        "bytes": len(data),
        "sha256": sha256_hex(data),
        "graphSha256": graph.sha256,
        "path": None,
    }
    return data, summary


def export_file(
    exporter: Any,
    graph_file: str,
    out: str | None,
    options: dict[str, Any],
    *,
    max_bytes: int = 64 * 1024 * 1024,
    warn: Callable[..., None] | None = None,
) -> dict[str, Any]:
    """Render ``graph_file`` with ``exporter`` and write it (atomically) or return it (``out == '-'``)."""
    from episteme_core.api import atomic_write

    data, summary = render_file(exporter, graph_file, options, max_bytes=max_bytes, warn=warn)
    if out == "-":
        summary["artifact"] = {
            "encoding": "base64",
            "mediaType": getattr(exporter, "media_type", ""),
            "data": base64.b64encode(data).decode(),
        }
        return summary
    target = Path(out) if out else default_output(graph_file, exporter.suffix)
    inputs = [] if graph_file == "-" else [Path(graph_file)]
    check_target(target, inputs)
    atomic_write(target, data)
    summary["path"] = str(target)
    return summary
