"""The one deterministic layout of a graph, shared by the HTML viewer and the SVG picture.

Positions are a pure function of the graph: no randomness, no hash order, no dependence on the order
of its lists (nodes, clusters and edges are taken sorted), and only the arithmetic IEEE 754 defines
exactly (``+ - * /`` and square roots), so every machine computes the same numbers. Each cluster is
laid out on its own (a grid in breadth-first order, refined by a few force steps when the graph is
small), its nodes' boxes (circle plus label) pushed apart until none overlap, and the clusters are
then packed in rows, so labels never collide and hulls never cross.

The geometry drawn from the positions (edge paths, hulls, cluster titles) lives here for the SVG and
again in ``viewer/viewer.js`` (which redraws it while a node is dragged); a browser test holds the two
equal, number for number.
"""

from __future__ import annotations

import collections
import functools
import math
import unicodedata
from collections.abc import Iterable
from typing import Any

import attrs

from episteme_graph import model

EDGE_TYPES = ("uses", "enables", "based-on", "part-of", "tension", "replaces", "extends", "example-of")
EDGE_COLORS = ("#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#d62728", "#ff7f0e", "#17becf", "#e377c2")
OTHER_EDGE_COLOR = "#6b7280"
CLUSTER_COLORS = (
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
    "#b07aa1", "#edc948", "#9c755f", "#ff9da7", "#bab0ac",
)  # fmt: skip
UNCLUSTERED_COLOR = "#9aa3ad"
SYMMETRIC = "tension"  # drawn with a head at both ends

FONT_FAMILY = "'DejaVu Sans', Verdana, 'Bitstream Vera Sans', sans-serif"
FONT_SIZE = 12
LINE_HEIGHT = 15
LABEL_GAP = 4  # circle to the label's first line
BOX_PAD = 4  # around each node's box (circle plus label)
MAX_LABEL_WIDTH = 150.0
MAX_LINES = 3
MAX_TITLE_WIDTH = 300.0
MAX_CHARS = 160  # of a label or title considered (more never fits: 3 lines of the narrowest letter)
ARROW = 10  # arrowhead length: a path stops this far before the circle, the head fills the gap
HULL_PAD = 12
TITLE_BAND = 22
NODE_GAP = 10  # least space between two nodes' boxes
CLUSTER_GAP = 44
ROW_WIDTH = 720.0  # the least width of a row of clusters (small graphs: one row)
MARGIN = 24
LANE = 0.3  # parallel edges of one pair: control points this share of their length apart (at least
LANE_MIN = 26.0  # this many pixels), so their arrowheads at a common end stay apart
LOOP = 26.0  # a self-loop's size (the next loop on that node is LOOP / 2 larger)
FORCE_STEPS = 120
FORCE_BUDGET = 400_000  # pair updates for the whole graph; past it the grid stays as it is
SEPARATION_PASSES = 400
SEPARATION_WORK = 2_000_000

# DejaVu Sans advance widths in thousandths of an em for U+0020..U+007E (among the widest common
# sans-serif faces, and the one the viewer asks for first), so estimated labels are never narrower
# than drawn ones.
_ASCII_WIDTHS = (
    318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318, 337, 636, 636, 636, 636,
    636, 636, 636, 636, 636, 636, 337, 337, 838, 838, 838, 531, 1000, 684, 686, 698, 770, 632, 575, 775,
    752, 295, 295, 656, 557, 863, 748, 787, 603, 787, 695, 635, 611, 732, 684, 989, 685, 611, 685, 390,
    337, 390, 838, 500, 500, 613, 635, 550, 635, 615, 352, 635, 634, 278, 278, 579, 278, 974, 634, 612,
    635, 635, 411, 521, 392, 634, 592, 818, 592, 592, 525, 636, 337, 636, 838,
)  # fmt: skip
_OTHER_WIDTH = 1000
_WIDTH_MARGIN = 1.06


def fmt(value: float) -> str:
    """A number to one decimal, the same string viewer.js's ``fmt`` writes (no tie rounding rule of
    either language's float formatting is involved: the rounding is ``floor(10 v + 0.5)``)."""
    n = math.floor(value * 10 + 0.5)
    sign = "-" if n < 0 else ""
    whole, tenth = divmod(abs(n), 10)
    return f"{sign}{whole}.{tenth}" if tenth else f"{sign}{whole}"


def snap(value: float) -> float:
    """``value`` on the 0.1 grid ``fmt`` writes: the double its decimal parses to (a correctly
    rounded division by ten is that double)."""
    return math.floor(value * 10 + 0.5) / 10


def xml_text(value: str) -> str:
    """Text as XML 1.0 may hold it: characters XML forbids (C0 controls but tab, LF and CR, U+FFFE,
    U+FFFF) become U+FFFD, so the SVG is well formed and the viewer shows the same text."""
    return "".join(
        "\ufffd" if (ord(c) < 0x20 and c not in "\t\n\r") or c in "\ufffe\uffff" else c for c in value
    )


@functools.cache
def _char_width(char: str) -> int:
    code = ord(char)
    if 0x20 <= code < 0x7F:
        return _ASCII_WIDTHS[code - 0x20]
    if unicodedata.combining(char):
        return 0
    base = unicodedata.normalize("NFD", char)[0]
    if base != char and 0x20 <= ord(base) < 0x7F:
        return _ASCII_WIDTHS[ord(base) - 0x20]
    return _OTHER_WIDTH


_SCALE = FONT_SIZE / 1000 * _WIDTH_MARGIN  # pixels per thousandth of an em, with the margin


def text_width(text: str) -> float:
    """An upper estimate of ``text``'s drawn width in pixels at FONT_SIZE."""
    return sum(_char_width(c) for c in text) * _SCALE


def _fitting(text: str, limit: float) -> int:
    """How many leading characters of ``text`` fit in ``limit`` pixels (one pass)."""
    units = 0
    for k, char in enumerate(text):
        units += _char_width(char)
        if units * _SCALE > limit:
            return k
    return len(text)


def fit_text(text: str, limit: float) -> str:
    """``text`` cut (with an ellipsis) to at most ``limit`` pixels."""
    text = text[:MAX_CHARS]
    if text_width(text) <= limit:
        return text
    return text[: _fitting(text, limit - text_width("\u2026"))].rstrip() + "\u2026"


def wrap_label(label: str) -> tuple[str, ...]:
    """A label in at most MAX_LINES lines of at most MAX_LABEL_WIDTH pixels, words kept whole where
    they fit, the last line ending in an ellipsis when the label is longer."""
    lines: list[str] = []
    current = ""
    for word in xml_text(label[:MAX_CHARS]).split():
        if len(lines) > MAX_LINES:
            break  # the rest is past the ellipsis
        while text_width(word) > MAX_LABEL_WIDTH:  # a word wider than a line: cut it
            if current:
                lines.append(current)
                current = ""
            cut = max(1, _fitting(word, MAX_LABEL_WIDTH))
            lines.append(word[:cut])
            word = word[cut:]
        candidate = f"{current} {word}" if current else word
        if text_width(candidate) <= MAX_LABEL_WIDTH:
            current = candidate
        else:
            lines.append(current)
            current = word
    if current:
        lines.append(current)
    if not lines:
        return ("\u00a0",)  # a blank label still has a line (and a box)
    if len(lines) > MAX_LINES:
        last = lines[MAX_LINES - 1]
        last = last[: _fitting(last, MAX_LABEL_WIDTH - text_width("\u2026"))]
        lines = lines[: MAX_LINES - 1] + [last.rstrip() + "\u2026"]
    return tuple(lines)


@attrs.frozen
class NodePlace:
    """A drawn concept: centre, radius, box (left, top, right, bottom, relative to the centre),
    label lines, and its cluster's index in ``Layout.clusters``."""

    id: str
    x: float
    y: float
    r: float
    box: tuple[float, float, float, float]
    lines: tuple[str, ...]
    cluster: int
    superseded: bool


@attrs.frozen
class ClusterPlace:
    """A cluster as drawn: its id (None for the unclustered), full label, title as drawn, colour."""

    id: str | None
    label: str
    title: str
    color: str


@attrs.frozen
class EdgeType:
    """One entry of the relationship legend: the eight types first, then any others present."""

    name: str
    color: str
    count: int


@attrs.frozen
class EdgePlace:
    """A drawn relationship: its index in the graph's ``edges``, ends, type (index into
    ``Layout.types``), lane (0 straight; parallel edges of one pair take lanes ±0.5, ±1, ... to the
    sides; a self-loop's lane is its number on that node), stroke width, and whether it is symmetric
    (a head at both ends)."""

    index: int
    source: str
    target: str
    type: int
    lane: float
    width: float
    both: bool


@attrs.frozen
class Layout:
    width: float
    height: float
    nodes: tuple[NodePlace, ...]
    clusters: tuple[ClusterPlace, ...]
    edges: tuple[EdgePlace, ...]
    types: tuple[EdgeType, ...]

    def to_json(self) -> dict[str, Any]:
        """The layout as the viewer reads it (lists only: no graph id is ever an object key)."""
        return {
            "width": self.width,
            "height": self.height,
            # The constants viewer.js's geometry needs, so they are written down once (here).
            "constants": {
                "arrow": ARROW,
                "fontSize": FONT_SIZE,
                "hullPad": HULL_PAD,
                "labelGap": LABEL_GAP,
                "lane": LANE,
                "laneMin": LANE_MIN,
                "lineHeight": LINE_HEIGHT,
                "loop": LOOP,
            },
            "nodes": [
                {
                    "id": n.id,
                    "x": n.x,
                    "y": n.y,
                    "r": n.r,
                    "box": list(n.box),
                    "lines": list(n.lines),
                    "cluster": n.cluster,
                    "superseded": n.superseded,
                }
                for n in self.nodes
            ],
            "clusters": [
                {"id": c.id, "label": c.label, "title": c.title, "color": c.color} for c in self.clusters
            ],
            "edges": [
                {
                    "index": e.index,
                    "source": e.source,
                    "target": e.target,
                    "type": e.type,
                    "lane": e.lane,
                    "width": e.width,
                    "both": e.both,
                }
                for e in self.edges
            ],
            "types": [{"name": t.name, "color": t.color, "count": t.count} for t in self.types],
        }


# -- geometry (viewer.js has the same functions, held equal by a browser test) --------------------


def edge_path(
    sx: float, sy: float, sr: float, tx: float, ty: float, tr: float, lane: float, both: bool
) -> str:
    """The SVG path of an edge from circle (sx, sy, sr) to circle (tx, ty, tr): straight in lane 0,
    else a quadratic curve whose control point lies ``lane`` lane widths beside the middle; it stops
    ARROW short of each end that gets a head (the marker fills that gap up to the circle)."""
    dx = tx - sx
    dy = ty - sy
    d = math.sqrt(dx * dx + dy * dy)
    head = ARROW + 1
    lead = head if both else 1
    if d < 0.5:  # a self-loop, drawn above the node
        s = LOOP + lane * LOOP / 2
        return (
            f"M{fmt(sx - 0.6 * sr)} {fmt(sy - 0.8 * sr)}"
            f"C{fmt(sx - sr - s)} {fmt(sy - sr - 1.6 * s)} {fmt(sx + sr + s)} {fmt(sy - sr - 1.6 * s)} "
            f"{fmt(sx + 0.6 * (sr + head))} {fmt(sy - 0.8 * (sr + head))}"
        )
    if lane == 0:
        ux = dx / d
        uy = dy / d
        return (
            f"M{fmt(sx + ux * (sr + lead))} {fmt(sy + uy * (sr + lead))}"
            f"L{fmt(tx - ux * (tr + head))} {fmt(ty - uy * (tr + head))}"
        )
    bend = lane * max(LANE_MIN, LANE * d)
    cx = (sx + tx) / 2 - dy / d * bend
    cy = (sy + ty) / 2 + dx / d * bend
    ax = cx - sx
    ay = cy - sy
    la = math.sqrt(ax * ax + ay * ay)
    bx = tx - cx
    by = ty - cy
    lb = math.sqrt(bx * bx + by * by)
    return (
        f"M{fmt(sx + ax / la * (sr + lead))} {fmt(sy + ay / la * (sr + lead))}"
        f"Q{fmt(cx)} {fmt(cy)} {fmt(tx - bx / lb * (tr + head))} {fmt(ty - by / lb * (tr + head))}"
    )


def _cross(o: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def hull_points(members: Iterable[NodePlace]) -> list[tuple[float, float]]:
    """The convex hull (monotone chain) of the members' boxes grown by HULL_PAD."""
    points: list[tuple[float, float]] = []
    for n in members:
        left, top, right, bottom = n.box
        x0 = n.x + left - HULL_PAD
        x1 = n.x + right + HULL_PAD
        y0 = n.y + top - HULL_PAD
        y1 = n.y + bottom + HULL_PAD
        points += [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
    points.sort()
    if len(points) < 3:
        return points
    lower: list[tuple[float, float]] = []
    for p in points:
        while len(lower) >= 2 and _cross(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    upper: list[tuple[float, float]] = []
    for p in reversed(points):
        while len(upper) >= 2 and _cross(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    return lower[:-1] + upper[:-1]


def hull_path(members: Iterable[NodePlace]) -> str:
    points = hull_points(members)
    return "M" + "L".join(f"{fmt(x)} {fmt(y)}" for x, y in points) + "Z" if points else ""


def title_position(members: Iterable[NodePlace]) -> tuple[float, float]:
    """Where a cluster's title starts (its baseline): above the hull's top left."""
    members = list(members)
    x = min(n.x + n.box[0] for n in members) - HULL_PAD
    y = min(n.y + n.box[1] for n in members) - HULL_PAD - 6
    return x, y


# -- the layout -----------------------------------------------------------------------------------


@attrs.frozen
class _Item:
    """A node while it is being placed: its box relative to its centre."""

    id: str
    r: float
    box: tuple[float, float, float, float]
    lines: tuple[str, ...]

    @property
    def w(self) -> float:
        return self.box[2] - self.box[0]

    @property
    def h(self) -> float:
        return self.box[3] - self.box[1]


def _radius(node: dict[str, Any]) -> float:
    weight = 18 * len(model.strings(node.get("statements"))) + len(model.text(node.get("definition")))
    return snap(max(14.0, min(40.0, 12 + 1.2 * math.sqrt(weight))))


def _weight(value: Any) -> float:
    """An edge's weight clamped to 0..1 (0.5 when missing, not a number or not finite)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0.5
    if isinstance(value, int):
        return 0.0 if value <= 0 else 1.0
    return max(0.0, min(1.0, value)) if math.isfinite(value) else 0.5


def _up(value: float) -> float:
    return math.ceil(value * 10) / 10


def _item(node: dict[str, Any], loops: int) -> _Item:
    label = model.text(node.get("label")) or node["id"]
    lines = wrap_label(label)
    r = _radius(node)
    half = _up(max(r, max(text_width(line) for line in lines) / 2) + BOX_PAD)
    loop = (LOOP + (loops - 1) * LOOP / 2) * 1.25 if loops else 0.0
    top = -_up(r + BOX_PAD + loop)
    bottom = _up(r + LABEL_GAP + len(lines) * LINE_HEIGHT + BOX_PAD)
    return _Item(node["id"], r, (-half, top, half, bottom), lines)


def _order(items: list[_Item], links: list[tuple[str, str]]) -> list[_Item]:
    """Breadth-first from the best-connected node (ties by id), so neighbours sit near each other."""
    neighbours: dict[str, list[str]] = {item.id: [] for item in items}
    for a, b in links:
        neighbours[a].append(b)
        neighbours[b].append(a)
    for ids in neighbours.values():
        ids.sort()
    by_rank = sorted(items, key=lambda item: (-len(neighbours[item.id]), item.id))
    found = {item.id: item for item in items}
    seen: dict[str, None] = {}
    for start in by_rank:
        if start.id in seen:
            continue
        queue = collections.deque([start.id])
        seen[start.id] = None
        while queue:
            current = queue.popleft()
            for other in neighbours[current]:
                if other not in seen:
                    seen[other] = None
                    queue.append(other)
    return [found[i] for i in seen]


def _grid(items: list[_Item]) -> list[list[float]]:
    """Centres on a grid whose cells fit the largest box: no two boxes can overlap."""
    cols = max(1, math.ceil(math.sqrt(len(items) * 1.5)))
    cw = max(item.w for item in items) + NODE_GAP
    ch = max(item.h for item in items) + NODE_GAP
    places = []
    for k, item in enumerate(items):
        row, col = divmod(k, cols)
        if row % 2:
            col = cols - 1 - col  # snake, so the next in order is beside the last
        places.append(
            [col * cw + cw / 2, row * ch + NODE_GAP / 2 - item.box[1] + (ch - NODE_GAP - item.h) / 2]
        )
    return places


def _force(items: list[_Item], places: list[list[float]], links: list[tuple[int, int]], steps: int) -> None:
    """Fruchterman-Reingold steps (repulsion within two ideal lengths only) with a pull to the
    centre, cooling to a stop."""
    count = len(items)
    ideal = sum(max(item.w, item.h) for item in items) / count + 3 * ARROW + NODE_GAP
    heat = ideal / 2
    reach = 4 * ideal * ideal
    for step in range(steps):
        cx = sum(p[0] for p in places) / count
        cy = sum(p[1] for p in places) / count
        moves = [[(cx - p[0]) * 0.1, (cy - p[1]) * 0.1] for p in places]
        for i in range(count):
            pi, mi = places[i], moves[i]
            for j in range(i + 1, count):
                dx = pi[0] - places[j][0]
                dy = pi[1] - places[j][1]
                d2 = dx * dx + dy * dy
                if d2 >= reach:  # repulsion is local: far nodes leave each other be
                    continue
                if d2 < 0.01:
                    dx, dy, d2 = 0.1 * (j - i), 0.1, 0.01 * (j - i) * (j - i) + 0.01
                f = ideal * ideal / d2
                mi[0] += dx * f
                mi[1] += dy * f
                moves[j][0] -= dx * f
                moves[j][1] -= dy * f
        for a, b in links:
            dx = places[a][0] - places[b][0]
            dy = places[a][1] - places[b][1]
            d = math.sqrt(dx * dx + dy * dy)
            f = d / ideal
            moves[a][0] -= dx * f
            moves[a][1] -= dy * f
            moves[b][0] += dx * f
            moves[b][1] += dy * f
        limit = heat * (1 - step / steps)
        for p, m in zip(places, moves, strict=True):
            length = math.sqrt(m[0] * m[0] + m[1] * m[1])
            if length > limit:
                m[0] *= limit / length
                m[1] *= limit / length
            p[0] += m[0]
            p[1] += m[1]


def _separate(items: list[_Item], places: list[list[float]]) -> bool:
    """Push overlapping boxes apart (along the axis of least overlap) until none overlap; False when
    that has not happened within SEPARATION_PASSES passes (fewer for a large cluster, so a cluster
    costs at most about SEPARATION_WORK pair checks)."""
    count = len(items)
    passes = max(10, min(SEPARATION_PASSES, SEPARATION_WORK // (count * count)))
    for _ in range(passes):
        moved = False
        for i in range(count):
            bi, pi = items[i].box, places[i]
            for j in range(i + 1, count):
                bj, pj = items[j].box, places[j]
                ox = min(pi[0] + bi[2], pj[0] + bj[2]) - max(pi[0] + bi[0], pj[0] + bj[0]) + NODE_GAP
                if ox <= 0:
                    continue
                oy = min(pi[1] + bi[3], pj[1] + bj[3]) - max(pi[1] + bi[1], pj[1] + bj[1]) + NODE_GAP
                if oy <= 0:
                    continue
                moved = True
                if ox <= oy:
                    sign = -1.0 if pi[0] + (bi[0] + bi[2]) / 2 <= pj[0] + (bj[0] + bj[2]) / 2 else 1.0
                    pi[0] += sign * (ox / 2 + 0.05)
                    pj[0] -= sign * (ox / 2 + 0.05)
                else:
                    sign = -1.0 if pi[1] + (bi[1] + bi[3]) / 2 <= pj[1] + (bj[1] + bj[3]) / 2 else 1.0
                    pi[1] += sign * (oy / 2 + 0.05)
                    pj[1] -= sign * (oy / 2 + 0.05)
        if not moved:
            return True
    return False


def _place_cluster(items: list[_Item], links: list[tuple[str, str]], steps: int) -> list[list[float]]:
    """Centres for one cluster's nodes (items in placing order), boxes apart by NODE_GAP."""
    places = _grid(items)
    if steps and len(items) > 1:
        index = {item.id: k for k, item in enumerate(items)}
        pairs = [(index[a], index[b]) for a, b in links if a != b]
        grid = [list(p) for p in places]
        _force(items, places, pairs, steps)
        if not _separate(items, places):
            places = grid
    return places


_Edge = tuple[str, str, str, int, dict[str, Any]]  # source, type, target, index in the graph, record
_Local = tuple[list[_Item], list[list[float]], float, float]  # items, centres, width, height


def _drawn_edges(graph: Any, known: dict[str, Any]) -> list[_Edge]:
    """The edges drawn (both ends drawn, a string type), sorted by source, type, target, index."""
    raw = graph.get("edges") if isinstance(graph, dict) else None
    edges: list[_Edge] = []
    for k, e in enumerate(raw if isinstance(raw, list) else []):
        if (
            isinstance(e, dict)
            and isinstance(e.get("source"), str)
            and isinstance(e.get("target"), str)
            and e["source"] in known
            and e["target"] in known
            and isinstance(e.get("type"), str)
        ):
            edges.append((e["source"], e["type"], e["target"], k, e))
    edges.sort(key=lambda t: t[:4])
    return edges


def _local(items: list[_Item], inner: list[tuple[str, str]], steps: int, title: str) -> _Local:
    """One cluster laid out alone, its box's top left at (0, 0): HULL_PAD around the nodes' boxes,
    TITLE_BAND above them for the title."""
    ordered = _order(items, inner)
    places = _place_cluster(ordered, inner, steps)
    pairs = list(zip(ordered, places, strict=True))
    left = min(p[0] + it.box[0] for it, p in pairs)
    top = min(p[1] + it.box[1] for it, p in pairs)
    for p in places:
        p[0] += HULL_PAD - left
        p[1] += HULL_PAD + TITLE_BAND - top
    right = max(p[0] + it.box[2] for it, p in pairs) + HULL_PAD
    bottom = max(p[1] + it.box[3] for it, p in pairs) + HULL_PAD
    return ordered, places, max(right, text_width(title) + 4), bottom


def _pack(local: list[_Local]) -> tuple[list[tuple[float, float]], float, float]:
    """Each cluster box's top left, packed in rows (shelves) of a picture about twice as wide as
    high (at least ROW_WIDTH); no two boxes overlap. Also the picture's width and height."""
    area = sum(w * h for _, _, w, h in local)
    row_width = max([math.sqrt(area * 2.0), ROW_WIDTH] + [w for _, _, w, _ in local])
    rows: list[list[int]] = [[]]
    used = 0.0
    for k, (_, _, w, _) in enumerate(local):
        if rows[-1] and used + w > row_width:
            rows.append([])
            used = 0.0
        rows[-1].append(k)
        used += w + CLUSTER_GAP
    corners = [(0.0, 0.0)] * len(local)
    y = float(MARGIN)
    width = 0.0
    for row in rows:
        x = float(MARGIN)
        height = max((local[k][3] for k in row), default=0.0)
        for k in row:
            corners[k] = (x, y + (height - local[k][3]) / 2)
            x += local[k][2] + CLUSTER_GAP
        width = max(width, x - CLUSTER_GAP + MARGIN)
        y += height + CLUSTER_GAP
    return corners, max(width, 2.0 * MARGIN), max(y - CLUSTER_GAP + MARGIN, 2.0 * MARGIN)


def _edge_types(edges: list[_Edge]) -> tuple[EdgeType, ...]:
    """The legend's types: the eight first, then any other type present (sorted)."""
    counts: dict[str, int] = {}
    for _, kind, _, _, _ in edges:
        counts[kind] = counts.get(kind, 0) + 1
    names = list(EDGE_TYPES) + sorted(k for k in counts if k not in EDGE_TYPES)
    return tuple(
        EdgeType(
            name,
            EDGE_COLORS[EDGE_TYPES.index(name)] if name in EDGE_TYPES else OTHER_EDGE_COLOR,
            counts.get(name, 0),
        )
        for name in names
    )


def _lanes(edges: list[_Edge]) -> list[float]:
    """Each edge's lane: parallel edges of one pair (either direction) side by side, centred on the
    straight line; loops on one node numbered."""
    pairs: dict[tuple[str, str], list[int]] = {}
    for k, (source, _, target, _, _) in enumerate(edges):
        pairs.setdefault((min(source, target), max(source, target)), []).append(k)
    lanes = [0.0] * len(edges)
    for (low, high), ks in pairs.items():
        for rank, k in enumerate(ks):
            if low == high:
                lanes[k] = float(rank)
                continue
            offset = rank - (len(ks) - 1) / 2
            lanes[k] = offset if edges[k][0] == low else -offset  # the lane seen from its own source
    return lanes


def layout(graph: Any) -> Layout:
    """Where every drawn node, cluster and edge of ``graph`` goes (a graph the validator rejects is
    laid out best-effort: malformed items skipped, dangling edges dropped, nodes of no known cluster
    grouped as "Unclustered")."""
    known = {n["id"]: n for n in model.nodes(graph)}
    superseded = model.superseded(graph)
    records = sorted(model.unique_by_id(model.items(graph, "clusters")), key=lambda c: c["id"])
    cluster_index = {c["id"]: k for k, c in enumerate(records)}
    edges = _drawn_edges(graph, known)
    loops: dict[str, int] = {}
    for source, _, target, _, _ in edges:
        if source == target:
            loops[source] = loops.get(source, 0) + 1

    groups: list[list[_Item]] = [[] for _ in records]
    unclustered: list[_Item] = []
    for node_id in sorted(known):
        item = _item(known[node_id], loops.get(node_id, 0))
        cluster = known[node_id].get("cluster")
        if isinstance(cluster, str) and cluster in cluster_index:
            groups[cluster_index[cluster]].append(item)
        else:
            unclustered.append(item)
    ids: list[str | None] = [c["id"] for c in records]
    labels = [model.text(c.get("label")) or c["id"] for c in records]
    if unclustered:
        groups.append(unclustered)
        ids.append(None)
        labels.append("Unclustered")
    group_of = {item.id: g for g, items in enumerate(groups) for item in items}
    inner: list[list[tuple[str, str]]] = [[] for _ in groups]
    for source, _, target, _, _ in edges:
        if group_of[source] == group_of[target] and source != target:
            inner[group_of[source]].append((source, target))
    work = sum(len(items) ** 2 for items in groups)
    steps = min(FORCE_STEPS, FORCE_BUDGET // max(work, 1))
    steps = steps if steps >= 20 else 0

    clusters: list[ClusterPlace] = []
    local: list[_Local] = []
    for g, items in enumerate(groups):
        title = fit_text(xml_text(" ".join(labels[g].split())) or "\u00a0", MAX_TITLE_WIDTH)
        color = CLUSTER_COLORS[g % len(CLUSTER_COLORS)] if ids[g] is not None else UNCLUSTERED_COLOR
        clusters.append(ClusterPlace(ids[g], labels[g], title, color))
        if items:
            local.append(_local(items, inner[g], steps, title))
    corners, width, height = _pack(local)
    placed = [
        NodePlace(
            item.id,
            snap(x + p[0]),
            snap(y + p[1]),
            item.r,
            item.box,
            item.lines,
            group_of[item.id],
            item.id in superseded,
        )
        for (ordered, places, _, _), (x, y) in zip(local, corners, strict=True)
        for item, p in zip(ordered, places, strict=True)
    ]
    placed.sort(key=lambda n: n.id)

    types = _edge_types(edges)
    type_index = {t.name: k for k, t in enumerate(types)}
    lanes = _lanes(edges)
    placed_edges = tuple(
        EdgePlace(
            index,
            source,
            target,
            type_index[kind],
            lanes[k],
            snap(1 + 2.5 * _weight(record.get("weight"))),
            kind == SYMMETRIC,
        )
        for k, (source, kind, target, index, record) in enumerate(edges)
    )
    types = tuple(attrs.evolve(t, name=xml_text(t.name)) for t in types)
    return Layout(snap(width), snap(height), tuple(placed), tuple(clusters), placed_edges, types)
