"""The HTML viewer in real headless Chromium (Debian's /usr/bin/chromium, driven by Playwright):
search, the relationship-type and cluster filters, cluster focus, an edge's label on hover, zoom,
pan and drag; arrowheads (markers, and their pixels), labels that never overlap, the same drawing
as the SVG export, ids such as ``constructor`` drawn like any other; a <script> label stays text and
the page asks the network for nothing. Screenshots are kept under test-artifacts/."""

from __future__ import annotations

import copy
import math
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from helpers import fixture_graph

from episteme_graph.export import html, layout, svg
from episteme_graph.generate import synthetic_graph

CHROMIUM = Path(os.environ.get("EPISTEME_CHROMIUM", "/usr/bin/chromium"))
ARTIFACTS = Path(
    os.environ.get("EPISTEME_TEST_ARTIFACTS", Path(__file__).resolve().parents[1] / "test-artifacts")
)
SCRIPT_LABEL = "<script>window.__pwned = 1</script><img src=x onerror=window.__pwned=2>"
PROTOTYPE_IDS = ("constructor", "__proto__", "toString", "hasOwnProperty")
SVG_NS = "{http://www.w3.org/2000/svg}"

playwright_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (extra 'browser')"
)
PIL_Image = pytest.importorskip("PIL.Image", reason="Pillow reads the screenshots")
if not CHROMIUM.exists():
    pytest.skip(
        f"no Chromium at {CHROMIUM}: run plugins/episteme-graph/scripts/ensure-chromium",
        allow_module_level=True,
    )


# -- graphs -----------------------------------------------------------------------------------------


def _graph() -> dict[str, Any]:
    """The minimal reference graph with a <script> label, a superseded concept and an explanation."""
    graph = fixture_graph("minimal")
    graph["nodes"][2]["label"] = SCRIPT_LABEL
    graph["nodes"][2]["definition"] = "A label with markup, shown as text."
    graph["nodes"][1]["temporal"]["valid_until"] = "2026-06"  # superseded
    graph["edges"][0]["explanation"] = "Stated <b>in</b> the source."
    return graph


def _prototype_graph() -> dict[str, Any]:
    """Concepts, clusters and a relationship type named like Object.prototype's own properties."""
    graph = fixture_graph("minimal")
    template = graph["nodes"][0]
    graph["nodes"] = []
    for k, node_id in enumerate(PROTOTYPE_IDS):
        node = copy.deepcopy(template)
        node.update(id=node_id, label=f"Concept {node_id}", cluster=PROTOTYPE_IDS[k % 2])
        graph["nodes"].append(node)
    graph["clusters"] = [
        {
            "id": cid,
            "label": f"Cluster {cid}",
            "concepts": [n["id"] for n in graph["nodes"] if n["cluster"] == cid],
        }
        for cid in PROTOTYPE_IDS[:2]
    ]
    kinds = ("uses", "tension", "constructor", "extends")
    graph["edges"] = [
        {
            "source": a,
            "target": b,
            "type": kinds[k],
            "weight": 0.5,
            "confidence": "high",
            "label": f"{a} to {b}",
        }
        for k, (a, b) in enumerate(zip(PROTOTYPE_IDS, PROTOTYPE_IDS[1:] + PROTOTYPE_IDS[:1], strict=True))
    ]
    return graph


def _all_types_graph() -> dict[str, Any]:
    """Twelve concepts in three clusters, a relationship of each of the eight types (and parallel
    edges of one pair, both ways, and a self-loop)."""
    graph = synthetic_graph(12, clusters=3, edges_per_node=0)
    ids = [n["id"] for n in graph["nodes"]]
    pairs = [(ids[k], ids[(k * 5 + 1) % 12]) for k in range(len(layout.EDGE_TYPES))]
    graph["edges"] = [
        {"source": a, "target": b, "type": t, "weight": 0.4, "confidence": "medium", "label": f"{a} {t} {b}"}
        for (a, b), t in zip(pairs, layout.EDGE_TYPES, strict=True)
    ]
    graph["edges"] += [
        {"source": ids[0], "target": ids[1], "type": "extends", "weight": 0.2, "confidence": "low"},
        {"source": ids[1], "target": ids[0], "type": "uses", "weight": 0.9, "confidence": "low"},
        {"source": ids[4], "target": ids[4], "type": "extends", "weight": 0.5, "confidence": "low"},
    ]
    return graph


def _wordy_graph() -> dict[str, Any]:
    """Thirty concepts in six clusters with long, short, wide (CJK) and unbreakable labels."""
    graph = synthetic_graph(30, clusters=6)
    words = ("Retrieval-augmented generation", "Evidence", "Byte-exact citation of a captured source")
    for k, node in enumerate(graph["nodes"]):
        node["label"] = (
            "知識グラフの表示" if k % 7 == 3
            else "Supercalifragilisticexpialidocious-unbreakable-identifier" if k % 7 == 5
            else f"{words[k % 3]} {k}" * (1 + k % 4)
        )  # fmt: skip
    graph["clusters"][0]["label"] = "A cluster whose title is a whole sentence about its concepts"
    return graph


GRAPHS: dict[str, Callable[[], dict[str, Any]]] = {
    "minimal": lambda: fixture_graph("minimal"),
    "contextual": lambda: fixture_graph("contextual"),
    "all-types": _all_types_graph,
    "wordy": _wordy_graph,
    "prototype-ids": _prototype_graph,
}


# -- the browser --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        yield browser
        browser.close()


class Viewer:
    """One page of the viewer, with what it asked the network for and every script error."""

    def __init__(self, browser: Any, path: Path) -> None:
        self.context = browser.new_context(viewport={"width": 1200, "height": 800})
        self.page = self.context.new_page()
        self.page.set_default_timeout(5000)
        self.requests: list[str] = []
        self.problems: list[str] = []
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("console", lambda m: self.problems.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.problems.append(str(e)))
        self.page.goto(path.as_uri())
        self.page.wait_for_selector("#nodes .node")


@pytest.fixture
def open_viewer(browser: Any, tmp_path: Path) -> Iterator[Callable[[dict[str, Any]], Viewer]]:
    opened: list[Viewer] = []

    def open_(graph: dict[str, Any]) -> Viewer:
        path = tmp_path / f"graph{len(opened)}.knowledge.html"
        path.write_bytes(html.render(graph, {}))
        opened.append(Viewer(browser, path))
        return opened[-1]

    yield open_
    for viewer in opened:
        viewer.context.close()


@pytest.fixture
def page(open_viewer: Callable[[dict[str, Any]], Viewer]) -> tuple[Any, list[str], list[str]]:
    viewer = open_viewer(_graph())
    return viewer.page, viewer.requests, viewer.problems


def _transform(page: Any) -> str:
    value: str = page.get_attribute("#viewport", "transform")
    return value


def _scale_of(transform: str) -> float:
    found = re.search(r"scale\(([\d.]+)\)", transform)
    assert found, transform
    return float(found[1])


def _scale(page: Any) -> float:
    return _scale_of(_transform(page))


def _visible_labels(page: Any) -> list[str]:
    labels: list[str] = page.eval_on_selector_all(
        "#nodes .node:not(.hidden)", "els => els.map(e => e.getAttribute('aria-label'))"
    )
    return sorted(labels)


def _visible_edges(page: Any) -> list[str]:
    found: list[str] = page.eval_on_selector_all(
        "#edges path.edge:not(.hidden)", "els => els.map(e => e.getAttribute('data-type'))"
    )
    return sorted(found)


def _shot(page: Any, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / name
    page.screenshot(path=str(shot))
    return shot


# -- what was there before: policy, search, zoom, pan, backlinks, text, cluster focus -------------


def test_the_page_runs_under_its_policy_and_asks_the_network_for_nothing(page: Any) -> None:
    p, requests, problems = page
    assert len(requests) == 1 and requests[0].endswith(".html")
    assert problems == []  # no CSP violation, no script error
    assert p.text_content("#title") == "Minimal Valid Graph"
    assert p.locator("#nodes .node").count() == 3
    assert p.locator("#edges path.edge").count() == 2


def test_search_filters_concepts_and_their_edges(page: Any) -> None:
    p, _, _ = page
    assert _visible_edges(p) == ["tension", "uses"]
    p.fill("#search", "second")
    assert _visible_labels(p) == ["Beta"]
    assert _visible_edges(p) == []
    p.fill("#search", "")
    assert len(_visible_labels(p)) == 3 and _visible_edges(p) == ["tension", "uses"]


def test_zoom_and_pan_change_the_view(page: Any) -> None:
    p, _, _ = page
    start = _transform(p)
    box = p.locator("#canvas").bounding_box()
    p.mouse.move(box["x"] + 40, box["y"] + 40)
    p.mouse.wheel(0, -300)
    p.wait_for_function(f"document.getElementById('viewport').getAttribute('transform') !== {start!r}")
    zoomed = _transform(p)
    assert _scale(p) != pytest.approx(_scale_of(start))
    p.mouse.move(box["x"] + 30, box["y"] + box["height"] - 30)
    p.mouse.down()
    p.mouse.move(box["x"] + 130, box["y"] + box["height"] - 80, steps=5)
    p.mouse.up()
    assert _transform(p) != zoomed
    p.click("#zoom-reset")
    assert _transform(p) == start
    fitted = _scale(p)
    p.click("#zoom-in")
    assert _scale(p) == pytest.approx(fitted * 1.25, rel=1e-3)
    p.click("#zoom-out")
    p.click("#zoom-out")
    assert _scale(p) == pytest.approx(fitted * 0.8, rel=1e-3)


def test_dragging_a_node_moves_it_with_its_edges_and_hull(page: Any) -> None:
    p, _, _ = page
    node = p.locator('#nodes .node[data-id="alpha"]')
    before = node.get_attribute("transform")
    edge_before = p.get_attribute('#edges path.edge[data-type="uses"]', "d")
    hull_before = p.get_attribute('#hulls .cluster[data-cluster-index="0"] path', "d")
    box = node.locator("circle").bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    p.mouse.move(x, y)
    p.mouse.down()
    p.mouse.move(x - 60, y + 70, steps=6)
    p.mouse.up()
    after = node.get_attribute("transform")
    (x0, y0), (x1, y1) = (tuple(map(float, re.findall(r"-?[\d.]+", t))) for t in (before, after))
    k = _scale(p)
    assert x1 - x0 == pytest.approx(-60 / k, abs=0.2) and y1 - y0 == pytest.approx(70 / k, abs=0.2)
    edge_after = p.get_attribute('#edges path.edge[data-type="uses"]', "d")
    sx, sy = map(float, re.match(r"M(-?[\d.]+) (-?[\d.]+)", edge_after).groups())  # type: ignore[union-attr]
    assert edge_after != edge_before and math.hypot(sx - x1, sy - y1) < 25  # it starts at the new place
    assert p.get_attribute('#hulls .cluster[data-cluster-index="0"] path', "d") != hull_before
    assert p.locator("#details h2").count() == 0  # a drag is not a click: nothing was selected


def test_clicking_a_node_shows_its_backlinks(page: Any) -> None:
    p, _, _ = page
    p.locator('#nodes .node[data-id="beta"]').click()
    assert p.text_content("#details h2") == "Beta"
    assert p.eval_on_selector_all("#cited-by li button", "els => els.map(e => e.textContent)") == ["Alpha"]
    assert "superseded" in p.text_content("#details")
    p.locator("#cited-by li button").first.click()
    assert p.text_content("#details h2") == "Alpha"


def test_a_script_label_stays_text(page: Any) -> None:
    p, requests, _ = page
    gamma = p.locator('#nodes .node[data-id="gamma"]')
    assert gamma.get_attribute("aria-label") == SCRIPT_LABEL
    assert gamma.locator("title").text_content() == SCRIPT_LABEL
    drawn = gamma.locator("text tspan").all_text_contents()
    assert len(drawn) > 1 and "".join(drawn).startswith("<script>window.__pwned")  # wrapped, as text
    gamma.locator("circle").click()
    assert p.text_content("#details h2") == SCRIPT_LABEL
    assert p.evaluate("window.__pwned") is None
    assert p.locator("script").count() == 3 and p.locator("img").count() == 0
    assert len(requests) == 1  # the onerror image was never made, so never fetched


def test_cluster_focus_dims_the_rest_and_a_screenshot_is_kept(page: Any) -> None:
    p, _, _ = page
    p.locator('#legend button[data-cluster="c2"]').click()
    dimmed = p.eval_on_selector_all("#nodes .node.dim", "els => els.map(e => e.getAttribute('data-id'))")
    assert sorted(dimmed) == ["alpha", "beta"]
    assert p.locator("#hulls .cluster.dim").count() == 1
    p.locator('#legend button[data-cluster="c2"]').click()
    assert p.locator("#nodes .node.dim").count() == 0
    shot = ARTIFACTS / "graph-viewer.png"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    p.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 1000


# -- the legend: eight relationship types that filter, clusters that filter ----------------------


def test_the_legend_lists_the_eight_types_and_each_toggles_its_edges(
    open_viewer: Callable[[dict[str, Any]], Viewer],
) -> None:
    viewer = open_viewer(_all_types_graph())
    p = viewer.page
    names = p.eval_on_selector_all(
        "#type-legend button.edge-type", "els => els.map(e => e.getAttribute('data-edge-type'))"
    )
    assert names == list(layout.EDGE_TYPES)
    everything = _visible_edges(p)
    assert sorted(set(everything)) == sorted(layout.EDGE_TYPES) and len(everything) == 11
    for name in layout.EDGE_TYPES:
        button = p.locator(f'#type-legend button[data-edge-type="{name}"]')
        button.click()
        assert button.get_attribute("aria-pressed") == "false"
        assert _visible_edges(p) == sorted(t for t in everything if t != name)
        button.click()
        assert button.get_attribute("aria-pressed") == "true" and _visible_edges(p) == everything
    p.locator('#type-legend button[data-edge-type="uses"]').click()
    p.locator('#type-legend button[data-edge-type="extends"]').click()
    assert "uses" not in _visible_edges(p) and "extends" not in _visible_edges(p)
    p.fill("#search", "Concept")  # the search keeps the type filter
    assert "uses" not in _visible_edges(p) and len(_visible_edges(p)) == 11 - 3 - 2
    assert viewer.problems == []


def test_the_cluster_filter_hides_a_cluster_its_hull_and_its_edges(
    open_viewer: Callable[[dict[str, Any]], Viewer],
) -> None:
    p = open_viewer(_graph()).page
    box = p.locator('#cluster-legend input[data-cluster-index="0"]')
    box.uncheck()
    assert _visible_labels(p) == [SCRIPT_LABEL]  # only gamma, in c2
    assert _visible_edges(p) == []
    assert p.locator('#hulls .cluster[data-cluster-index="0"]').get_attribute("class") == "cluster hidden"
    p.fill("#search", "first")  # alpha matches, but its cluster stays hidden
    assert _visible_labels(p) == []
    p.fill("#search", "")
    box.check()
    assert len(_visible_labels(p)) == 3 and _visible_edges(p) == ["tension", "uses"]
    assert p.locator("#hulls .cluster.hidden").count() == 0


def test_hovering_an_edge_shows_its_type_label_and_explanation(page: Any) -> None:
    p, _, _ = page
    assert p.is_hidden("#edge-tip")
    point = p.evaluate(
        """() => {
        const path = document.querySelector('#edges path.edge[data-type="uses"]');
        const at = path.getPointAtLength(path.getTotalLength() / 2).matrixTransform(path.getScreenCTM());
        return [at.x, at.y];
    }"""
    )
    p.mouse.move(*point)
    p.wait_for_selector("#edge-tip", state="visible")
    assert p.text_content("#edge-tip .tip-type") == "uses"
    assert p.text_content("#edge-tip .tip-label") == "Alpha uses Beta"
    assert p.text_content("#edge-tip .tip-explanation") == "Stated <b>in</b> the source."  # text, not markup
    assert p.locator("#edge-tip b").count() == 0
    p.mouse.move(5, 5)
    p.wait_for_selector("#edge-tip", state="hidden")


# -- arrowheads, labels, stability, agreement with the SVG -----------------------------------------

_EDGE_ENDS = """() => [...document.querySelectorAll('#edges path.edge:not(.hidden)')].map(path => {
    const ctm = path.getScreenCTM(), total = path.getTotalLength();
    const end = path.getPointAtLength(total).matrixTransform(ctm);
    const before = path.getPointAtLength(Math.max(0, total - 2)).matrixTransform(ctm);
    const marker = document.querySelector(path.getAttribute('marker-end').slice(4, -1));
    return {type: path.getAttribute('data-type'), stroke: path.getAttribute('stroke'),
            end: [end.x, end.y], before: [before.x, before.y], scale: ctm.a,
            marker: marker && marker.tagName,
            fill: marker && marker.querySelector('path').getAttribute('fill'),
            start: path.getAttribute('marker-start')};
})"""


def _rgb(color: str) -> tuple[int, int, int]:
    return int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16)


@pytest.mark.parametrize("name", ["minimal", "contextual", "all-types", "prototype-ids"])
def test_every_edge_references_an_arrowhead_of_its_type(
    open_viewer: Callable[[dict[str, Any]], Viewer], name: str
) -> None:
    graph = GRAPHS[name]()
    viewer = open_viewer(graph)
    p = viewer.page
    types = layout.layout(graph).types
    assert p.locator("#markers marker").count() == len(types) >= len(layout.EDGE_TYPES)
    ends = p.evaluate(_EDGE_ENDS)
    assert len(ends) == len(graph["edges"])
    for edge in ends:
        assert edge["marker"] == "marker" and edge["fill"] == edge["stroke"]
        assert (edge["start"] is not None) == (edge["type"] == "tension")
    assert viewer.problems == []


@pytest.mark.parametrize("name", ["minimal", "contextual"])
def test_the_reference_graphs_screenshots_show_each_arrowhead(
    open_viewer: Callable[[dict[str, Any]], Viewer], name: str
) -> None:
    p = open_viewer(GRAPHS[name]()).page
    ends = p.evaluate(_EDGE_ENDS)
    shot = PIL_Image.open(_shot(p, f"graph-viewer-{name}.png")).convert("RGB")
    for edge in ends:
        # Inside the head, past where the line stops: only the arrowhead can colour these pixels.
        (ex, ey), (bx, by), k = edge["end"], edge["before"], edge["scale"]
        ux, uy = (ex - bx) / math.hypot(ex - bx, ey - by), (ey - by) / math.hypot(ex - bx, ey - by)
        want = _rgb(edge["stroke"])
        for side in (-1.5, 0.0, 1.5):
            x = ex + ux * 4 * k - uy * side * k
            y = ey + uy * 4 * k + ux * side * k
            got = shot.getpixel((round(x), round(y)))
            assert max(abs(a - b) for a, b in zip(got, want, strict=True)) < 40, (edge, (x, y), got)
        # Beside the line, away from its ends, the background shows: the colour above is the head's.
        mx, my = (ex + bx) / 2 - ux * 40 * k, (ey + by) / 2 - uy * 40 * k
        beside = shot.getpixel((round(mx - uy * 4 * k), round(my + ux * 4 * k)))
        assert max(abs(a - b) for a, b in zip(beside, want, strict=True)) >= 40, (edge, beside)
    legend = p.eval_on_selector_all("#type-legend button", "els => els.map(e => e.textContent)")
    assert legend == [f"{t} ({sum(e['type'] == t for e in ends)})" for t in layout.EDGE_TYPES]


_BOXES = """() => [...document.querySelectorAll('#nodes .node:not(.hidden)')].map(g => {
    const t = g.querySelector('text').getBoundingClientRect();
    const c = g.querySelector('circle').getBoundingClientRect();
    const local = g.querySelector('text').getBBox();
    return {id: g.getAttribute('data-id'), text: [t.left, t.top, t.right, t.bottom],
            circle: [c.left, c.top, c.right, c.bottom],
            local: [local.x, local.y, local.x + local.width, local.y + local.height]};
})"""


def _overlap(a: list[float], b: list[float]) -> bool:
    return min(a[2], b[2]) - max(a[0], b[0]) > 0.5 and min(a[3], b[3]) - max(a[1], b[1]) > 0.5


@pytest.mark.parametrize("name", list(GRAPHS))
def test_no_label_overlaps_another_label_or_node(
    open_viewer: Callable[[dict[str, Any]], Viewer], name: str
) -> None:
    graph = GRAPHS[name]()
    viewer = open_viewer(graph)
    boxes = viewer.page.evaluate(_BOXES)
    assert len(boxes) == len(graph["nodes"])
    planned = {n.id: n.box for n in layout.layout(graph).nodes}
    for i, a in enumerate(boxes):
        # The drawn label lies inside the box the layout reserved for it (the estimate is an upper one).
        left, _, right, bottom = planned[a["id"]]
        assert a["local"][0] >= left and a["local"][2] <= right and a["local"][3] <= bottom, a
        for b in boxes[i + 1 :]:
            assert not _overlap(a["text"], b["text"]), (a, b)
            assert not _overlap(a["text"], b["circle"]) and not _overlap(b["text"], a["circle"]), (a, b)
            assert not _overlap(a["circle"], b["circle"]), (a, b)
    if name == "wordy":
        _shot(viewer.page, "graph-viewer-wordy.png")


def _drawing(page: Any) -> dict[str, Any]:
    found: dict[str, Any] = page.evaluate(
        """() => {
        const all = (selector) => [...document.querySelectorAll(selector)];
        const edges = all('#edges path.edge').map(e => [e.getAttribute('data-edge'), e.getAttribute('d')]);
        const hulls = all('#hulls .cluster').map(g => {
            const path = g.querySelector('path'), text = g.querySelector('text');
            const title = [text.getAttribute('x'), text.getAttribute('y'), text.textContent];
            return [g.getAttribute('data-cluster-index'), [path.getAttribute('d'), ...title]];
        });
        const nodes = all('#nodes .node').map(g => [g.getAttribute('data-id'), g.getAttribute('transform'),
            [...g.querySelectorAll('tspan')].map(t => [t.getAttribute('y'), t.textContent])]);
        return {edges: Object.fromEntries(edges), hulls: Object.fromEntries(hulls), nodes: nodes};
    }"""
    )
    return found


def _svg_drawing(graph: dict[str, Any]) -> dict[str, Any]:
    root = ElementTree.fromstring(svg.render(graph, {}))
    edges = {e.get("data-edge"): e.get("d") for e in root.iter(f"{SVG_NS}path") if e.get("class") == "edge"}
    hulls = {}
    for g in root.iter(f"{SVG_NS}g"):
        if g.get("class") == "cluster":
            path, text = g.find(f"{SVG_NS}path"), g.find(f"{SVG_NS}text")
            assert path is not None and text is not None
            hulls[g.get("data-cluster-index")] = [path.get("d"), text.get("x"), text.get("y"), text.text]
    nodes = [
        [g.get("data-id"), g.get("transform"), [[t.get("y"), t.text] for t in g.iter(f"{SVG_NS}tspan")]]
        for g in root.iter(f"{SVG_NS}g")
        if (g.get("class") or "").split()[:1] == ["node"]
    ]
    return {"edges": edges, "hulls": hulls, "nodes": nodes}


@pytest.mark.parametrize("name", list(GRAPHS))
def test_the_viewer_draws_exactly_what_the_svg_export_draws(
    open_viewer: Callable[[dict[str, Any]], Viewer], name: str
) -> None:
    graph = GRAPHS[name]()
    viewer = open_viewer(graph)
    drawn = _drawing(viewer.page)
    assert drawn == _svg_drawing(graph)
    assert drawn["edges"] and all("NaN" not in d for d in drawn["edges"].values())
    assert viewer.problems == []


def test_the_same_graph_draws_the_same_way_whatever_the_order_of_its_lists(
    open_viewer: Callable[[dict[str, Any]], Viewer],
) -> None:
    graph = _all_types_graph()
    shuffled = copy.deepcopy(graph)
    for key in ("nodes", "edges", "clusters"):
        shuffled[key].reverse()
    first, again, reordered = (_drawing(open_viewer(g).page) for g in (graph, graph, shuffled))
    assert first == again
    # Edges are named by their index in the graph's list, which the reversal changes; places are not.
    assert first["nodes"] == reordered["nodes"] and first["hulls"] == reordered["hulls"]
    assert sorted(first["edges"].values()) == sorted(reordered["edges"].values())
    source = (Path(html.__file__).parents[1] / "viewer" / "viewer.js").read_text("utf-8")
    assert "Math.random" not in source and "Date" not in source


# -- ids are data ------------------------------------------------------------------------------------


def test_ids_named_like_object_properties_are_drawn_like_any_other(
    open_viewer: Callable[[dict[str, Any]], Viewer],
) -> None:
    viewer = open_viewer(_prototype_graph())
    p = viewer.page
    assert viewer.problems == []
    drawn = _drawing(p)
    assert sorted(n[0] for n in drawn["nodes"]) == sorted(PROTOTYPE_IDS)
    for _, transform, _ in drawn["nodes"]:
        x, y = map(float, re.fullmatch(r"translate\((-?[\d.]+),(-?[\d.]+)\)", transform).groups())  # type: ignore[union-attr]
        assert math.isfinite(x) and math.isfinite(y)
    assert len(drawn["edges"]) == 4 and all(re.fullmatch(r"[MLQC\d. -]+", d) for d in drawn["edges"].values())
    assert len(drawn["hulls"]) == 2
    assert p.evaluate("Object.prototype.x === undefined && Object.keys(Object.prototype).length === 0")
    assert (
        p.eval_on_selector_all(
            "#type-legend button", "els => els.map(e => e.getAttribute('data-edge-type'))"
        )[-1]
        == "constructor"
    )
    p.locator('#nodes .node[data-id="__proto__"]').click()
    assert p.text_content("#details h2") == "Concept __proto__"
    assert p.eval_on_selector_all("#cited-by li button", "els => els.map(e => e.textContent)") == [
        "Concept constructor"
    ]
    p.locator('#legend button[data-cluster="constructor"]').click()
    dimmed = p.eval_on_selector_all("#nodes .node.dim", "els => els.map(e => e.getAttribute('data-id'))")
    assert sorted(dimmed) == ["__proto__", "hasOwnProperty"]
    p.locator('#type-legend button[data-edge-type="constructor"]').click()
    assert len(_visible_edges(p)) == 3
    p.fill("#search", "tostring")
    assert _visible_labels(p) == ["Concept toString"]
    assert viewer.problems == []
