"""The graph as a static SVG picture: the viewer's layout (``layout.py``) with cluster hulls and
titles, relationships with arrowheads coloured by type, labels, and a legend; all graph text is
escaped XML text or attribute values. Same graph, same bytes."""

from __future__ import annotations

from typing import Any
from xml.sax.saxutils import escape, quoteattr

from episteme_graph import model
from episteme_graph.export import layout as lay
from episteme_graph.export.layout import fmt

LEGEND_GAP = 32
LEGEND_WIDTH = 210
LEGEND_ROW = 20
BACKGROUND = "#f7f8fa"
INK = "#1d232b"
MUTED = "#5c6773"


def _attr(value: str) -> str:
    return quoteattr(lay.xml_text(value))


def _text(value: str) -> str:
    return escape(lay.xml_text(value))


def markers(types: tuple[lay.EdgeType, ...]) -> list[str]:
    """One arrowhead per relationship type, in its colour; ``arrow-N`` (N the type's index) so no
    graph text is ever an element id."""
    return [
        f'<marker id="arrow-{k}" viewBox="0 0 10 10" refX="0" refY="5" markerWidth="{lay.ARROW}" '
        f'markerHeight="{lay.ARROW}" markerUnits="userSpaceOnUse" orient="auto-start-reverse">'
        f'<path d="M0 0L10 5L0 10Z" fill="{t.color}"/></marker>'
        for k, t in enumerate(types)
    ]


def edge_title(edge: dict[str, Any], kind: str) -> str:
    """What hovering an edge tells: its type, then its label, explanation and description when it
    has them (the schema's edges carry ``label`` and ``explanation``; ``description`` is read too)."""
    parts = [kind]
    for key in ("label", "explanation", "description"):
        value = " ".join(model.text(edge.get(key)).split())
        if value and value not in parts:
            parts.append(value)
    return ": ".join(parts[:2]) + ("".join(f" \u2014 {p}" for p in parts[2:]))


def _legend(layout: lay.Layout, x0: float) -> tuple[list[str], float]:
    out = [f'<g class="legend" transform="translate({fmt(x0)},{lay.MARGIN})">']
    out.append(
        f'<text class="legend-title" x="0" y="12" font-weight="bold" fill="{INK}">Relationships</text>'
    )
    y = 12 + LEGEND_ROW
    for k, t in enumerate(layout.types):
        symmetric = t.name == lay.SYMMETRIC
        start = f' marker-start="url(#arrow-{k})" stroke-dasharray="6 4"' if symmetric else ""
        out.append(
            f'<g class="legend-type" data-type={_attr(t.name)}>'
            f'<path d="M{2 + lay.ARROW if symmetric else 2} {y - 4}L28 {y - 4}" stroke="{t.color}" '
            f'stroke-width="2"{start} marker-end="url(#arrow-{k})"/>'
            f'<text x="46" y="{y}" fill="{INK if t.count else MUTED}">'
            f"{_text(lay.fit_text(f'{t.name} ({t.count})', LEGEND_WIDTH - 50))}</text></g>"
        )
        y += LEGEND_ROW
    y += 10
    out.append(f'<text class="legend-title" x="0" y="{y}" font-weight="bold" fill="{INK}">Clusters</text>')
    y += LEGEND_ROW
    for c in layout.clusters:
        out.append(
            f'<g class="legend-cluster"><rect x="2" y="{y - 11}" width="26" height="12" rx="3" '
            f'fill="{c.color}" fill-opacity="0.25" stroke="{c.color}"/>'
            f'<text x="46" y="{y}" fill="{INK}">{_text(lay.fit_text(c.label, LEGEND_WIDTH - 50))}</text></g>'
        )
        y += LEGEND_ROW
    out.append("</g>")
    return out, y + lay.MARGIN


def picture_size(layout: lay.Layout) -> tuple[float, float]:
    """The picture's width and height: the layout and, to its right, the legend."""
    return layout.width + LEGEND_GAP - lay.MARGIN + LEGEND_WIDTH, max(layout.height, _legend(layout, 0)[1])


def render_layout(graph: Any, layout: lay.Layout, *, size: tuple[int, int] | None = None) -> str:
    """The SVG document of ``layout`` (the graph is read for titles and tooltips only); ``size``
    (pixels) scales it to that width and height instead of its own."""
    title = model.text(model.metadata(graph).get("title")) or "Untitled graph"
    raw_edges = graph.get("edges") if isinstance(graph, dict) else []
    by_id = {n.id: n for n in layout.nodes}
    records = model.by_id(model.items(graph, "nodes"))
    legend, legend_height = _legend(layout, layout.width + LEGEND_GAP - lay.MARGIN)
    width = layout.width + LEGEND_GAP - lay.MARGIN + LEGEND_WIDTH
    height = max(layout.height, legend_height)
    shown = (fmt(width), fmt(height)) if size is None else (str(size[0]), str(size[1]))
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{shown[0]}" height="{shown[1]}" '
        f'viewBox="0 0 {fmt(width)} {fmt(height)}" font-family="{lay.FONT_FAMILY}" '
        f'font-size="{lay.FONT_SIZE}">',
        f"<title>{_text(title)}</title>",
        "<defs>",
        *markers(layout.types),
        "</defs>",
        f'<rect class="background" width="{fmt(width)}" height="{fmt(height)}" fill="{BACKGROUND}"/>',
        '<g class="clusters">',
    ]
    for k, c in enumerate(layout.clusters):
        members = [n for n in layout.nodes if n.cluster == k]
        if not members:
            continue
        tx, ty = lay.title_position(members)
        dash = ' stroke-dasharray="6 4"' if c.id is None else ""
        out.append(
            f'<g class="cluster" data-cluster-index="{k}">'
            f'<path class="hull" d="{lay.hull_path(members)}" fill="{c.color}" fill-opacity="0.1" '
            f'stroke="{c.color}" stroke-opacity="0.6" stroke-width="1.5" stroke-linejoin="round"{dash}/>'
            f'<text class="cluster-title" x="{fmt(tx)}" y="{fmt(ty)}" font-weight="bold" '
            f'fill="{MUTED}">{_text(c.title)}</text></g>'
        )
    out.append("</g>")
    out.append('<g class="edges" fill="none">')
    for e in layout.edges:
        kind = layout.types[e.type]
        a, b = by_id[e.source], by_id[e.target]
        d = lay.edge_path(a.x, a.y, a.r, b.x, b.y, b.r, e.lane, e.both)
        record = raw_edges[e.index] if isinstance(raw_edges, list) else {}
        start = f' marker-start="url(#arrow-{e.type})" stroke-dasharray="6 4"' if e.both else ""
        out.append(
            f'<path class="edge" data-edge="{e.index}" d="{d}" stroke="{kind.color}" '
            f'stroke-width="{fmt(e.width)}"{start} marker-end="url(#arrow-{e.type})">'
            f"<title>{_text(edge_title(record, kind.name))}</title></path>"
        )
    out.append("</g>")
    out.append('<g class="nodes">')
    for n in layout.nodes:
        color = layout.clusters[n.cluster].color
        ring = (
            ' stroke="#7c8691" stroke-dasharray="5 3" fill-opacity="0.6"'
            if n.superseded
            else ' stroke="#fff"'
        )
        first = n.r + lay.LABEL_GAP + lay.FONT_SIZE
        lines = "".join(
            f'<tspan x="0" y="{fmt(first + i * lay.LINE_HEIGHT)}">{_text(line)}</tspan>'
            for i, line in enumerate(n.lines)
        )
        name = model.text(records[n.id].get("label")) or n.id
        out.append(
            f'<g class="node{" superseded" if n.superseded else ""}" data-id={_attr(n.id)} '
            f'transform="translate({fmt(n.x)},{fmt(n.y)})"><title>{_text(name)}</title>'
            f'<circle r="{fmt(n.r)}" fill="{color}"{ring} stroke-width="2"/>'
            f'<text text-anchor="middle" fill="{INK}" stroke="{BACKGROUND}" stroke-width="3" '
            f'stroke-linejoin="round" paint-order="stroke">{lines}</text></g>'
        )
    out.append("</g>")
    out += legend
    out.append("</svg>")
    return "\n".join(out) + "\n"


def render(graph: dict[str, Any], options: dict[str, Any]) -> bytes:
    return render_layout(graph, lay.layout(graph)).encode("utf-8")
