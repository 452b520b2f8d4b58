"""LayoutNeverOverlaps: for any graph, no two nodes' boxes (circle and label) overlap, no two clusters' hulls overlap, every number is finite and inside the picture, and the layout does not depend on the order of the graph's lists."""  # noqa: E501

from __future__ import annotations

import copy
import math
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from episteme_graph.export import layout

LABEL = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=80)
IDS = st.sampled_from(["constructor", "__proto__", "toString", "a", "b", "c-d", "e", "f", "g", "h", "i", "j"])


@st.composite
def graphs(draw: st.DrawFn) -> dict[str, Any]:
    """Up to 30 concepts (ids from a small pool, so duplicates occur), up to 5 clusters (some nodes in
    none or in an unknown one), labels of any text, and edges of any type, parallel, reversed, looped."""
    count = draw(st.integers(0, 30))
    clusters = [f"c{k}" for k in range(draw(st.integers(0, 5)))]
    nodes = []
    for k in range(count):
        node_id = draw(IDS) if draw(st.booleans()) else f"n{k}"
        nodes.append(
            {
                "id": node_id,
                "label": draw(LABEL),
                "cluster": draw(st.sampled_from([*clusters, "unknown", None])) if clusters else None,
                "definition": "d" * draw(st.integers(0, 400)),
                "statements": ["s"] * draw(st.integers(0, 6)),
            }
        )
    ids = [n["id"] for n in nodes] or ["missing"]
    edges = [
        {
            "source": draw(st.sampled_from(ids)),
            "target": draw(st.sampled_from(ids)),
            "type": draw(st.sampled_from([*layout.EDGE_TYPES, "constructor"])),
            "weight": draw(st.one_of(st.floats(allow_nan=True), st.integers(-3, 3), st.none())),
        }
        for _ in range(draw(st.integers(0, 40)))
    ]
    return {
        "metadata": {"title": draw(LABEL)},
        "clusters": [{"id": c, "label": draw(LABEL)} for c in clusters],
        "nodes": nodes,
        "edges": edges,
    }


def _box(n: layout.NodePlace) -> tuple[float, float, float, float]:
    return n.x + n.box[0], n.y + n.box[1], n.x + n.box[2], n.y + n.box[3]


def _apart(a: tuple[float, ...], b: tuple[float, ...], gap: float) -> bool:
    return min(a[2], b[2]) - max(a[0], b[0]) <= -gap or min(a[3], b[3]) - max(a[1], b[1]) <= -gap


def _extent(points: list[tuple[float, float]]) -> tuple[float, float, float, float]:
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return min(xs), min(ys), max(xs), max(ys)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs())
def test_layout_never_overlaps(graph: dict[str, Any]) -> None:
    placed = layout.layout(graph)
    for n in placed.nodes:
        left, top, right, bottom = _box(n)
        assert all(math.isfinite(v) for v in (n.x, n.y, n.r, left, top, right, bottom))
        assert 0 <= left and right <= placed.width and 0 <= top and bottom <= placed.height
        assert 1 <= len(n.lines) <= layout.MAX_LINES
        assert all(layout.text_width(line) <= layout.MAX_LABEL_WIDTH for line in n.lines)
    boxes = [_box(n) for n in placed.nodes]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert _apart(a, b, layout.NODE_GAP - 0.3)  # 0.3: positions are rounded to 0.1
    members = [[n for n in placed.nodes if n.cluster == k] for k in range(len(placed.clusters))]
    drawn = [_extent(layout.hull_points(m)) for m in members if m]
    for i, a in enumerate(drawn):
        for b in drawn[i + 1 :]:
            assert _apart(a, b, 0)
    reordered = copy.deepcopy(graph)
    for key in ("nodes", "edges", "clusters"):
        reordered[key].reverse()
    again = layout.layout(reordered)
    if len({n["id"] for n in graph["nodes"]}) == len(graph["nodes"]):  # else the first of an id differs
        assert again.nodes == placed.nodes and again.clusters == placed.clusters
