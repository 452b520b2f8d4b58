"""graph export --format svg and png: the viewer's layout as a picture, with arrowheads, a legend and
cluster hulls; graph text stays XML text; same graph, same bytes; no renderer, a clean error."""

from __future__ import annotations

import base64
import copy
import json
import math
import re
import struct
from io import BytesIO
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from helpers import FIXTURES, fixture_graph, png_renderer_available, write_graph

from episteme_core.testing import invoke
from episteme_graph.export import html, layout, png, svg
from episteme_graph.generate import synthetic_graph

NS = "{http://www.w3.org/2000/svg}"
HOSTILE = "<script>alert(1)</script> & ]]> \x01 \ufffe \"quoted\" 'single'"


def _root(data: bytes) -> ElementTree.Element:
    return ElementTree.fromstring(data)


def _by_class(root: ElementTree.Element, tag: str, cls: str) -> list[ElementTree.Element]:
    return [e for e in root.iter(f"{NS}{tag}") if cls in (e.get("class") or "").split()]


def test_the_svg_has_an_arrowhead_on_every_edge_a_legend_and_a_hull_per_cluster() -> None:
    for name in ("minimal", "contextual"):
        graph = fixture_graph(name)
        root = _root(svg.render(graph, {}))
        markers = {m.get("id"): m for m in root.iter(f"{NS}marker")}
        assert sorted(markers) == [f"arrow-{k}" for k in range(len(layout.EDGE_TYPES))]
        edges = _by_class(root, "path", "edge")
        assert len(edges) == len(graph["edges"])
        for edge in edges:
            head = re.fullmatch(r"url\(#(arrow-\d+)\)", edge.get("marker-end") or "")
            assert head, edge.attrib
            marker_path = markers[head[1]].find(f"{NS}path")
            assert marker_path is not None and marker_path.get("fill") == edge.get("stroke")
            tension = graph["edges"][int(edge.get("data-edge") or "")]["type"] == "tension"
            assert (edge.get("marker-start") == edge.get("marker-end")) == tension
        legend = [g.get("data-type") for g in _by_class(root, "g", "legend-type")]
        assert legend == list(layout.EDGE_TYPES)
        hulls = _by_class(root, "path", "hull")
        assert len(hulls) == len(graph["clusters"])
        titles = [t.text for t in _by_class(root, "text", "cluster-title")]
        assert titles == [c["label"] for c in sorted(graph["clusters"], key=lambda c: c["id"])]


def test_graph_text_stays_xml_text_in_the_svg() -> None:
    graph = fixture_graph("minimal")
    graph["metadata"]["title"] = HOSTILE
    graph["nodes"][0]["label"] = HOSTILE
    graph["clusters"][0]["label"] = HOSTILE
    graph["edges"][0]["label"] = HOSTILE
    graph["nodes"][1]["id"] = 'be"ta&<x>'  # not a valid id, drawn best-effort all the same
    graph["edges"][0]["target"] = 'be"ta&<x>'
    data = svg.render(graph, {})
    root = _root(data)  # well formed: controls and U+FFFE were replaced, markup escaped
    assert b"<script" not in data and b"\x01" not in data
    assert not [e for e in root.iter() if e.tag in (f"{NS}script", f"{NS}foreignObject", f"{NS}a")]
    shown = HOSTILE.replace("\x01", "\ufffd").replace("\ufffe", "\ufffd")
    assert root.findtext(f"{NS}title") == shown
    titles = [t.text for g in _by_class(root, "g", "node") for t in g.iter(f"{NS}title")]
    assert shown in titles
    assert [g.get("data-id") for g in _by_class(root, "g", "node")] == sorted(["alpha", 'be"ta&<x>', "gamma"])
    edge_titles = [e.findtext(f"{NS}title") for e in _by_class(root, "path", "edge")]
    assert f"uses: {shown}" in edge_titles


def test_the_svg_does_not_depend_on_the_order_of_the_graphs_lists() -> None:
    graph = synthetic_graph(40, clusters=4)
    shuffled = copy.deepcopy(graph)
    for key in ("nodes", "clusters"):
        shuffled[key].reverse()
    shuffled["nodes"] = shuffled["nodes"][7:] + shuffled["nodes"][:7]
    assert svg.render(graph, {}) == svg.render(shuffled, {})


def test_the_html_embeds_the_layout_the_svg_draws() -> None:
    graph = fixture_graph("contextual")
    page = html.render(graph, {}).decode("utf-8")
    embedded = page.split('<script id="graph-layout" type="application/json">')[1].split("</script>")[0]
    assert json.loads(embedded) == json.loads(json.dumps(layout.layout(graph).to_json()))


def test_a_large_graph_is_laid_out_on_grids_without_overlap() -> None:
    graph = synthetic_graph(600, clusters=12)
    placed = layout.layout(graph)
    boxes = sorted((n.x + n.box[0], n.y + n.box[1], n.x + n.box[2], n.y + n.box[3]) for n in placed.nodes)
    for i, a in enumerate(boxes):  # sorted by left edge: only the next few can reach it
        for b in boxes[i + 1 :]:
            if b[0] >= a[2]:
                break
            assert b[1] >= a[3] or a[1] >= b[3], (a, b)
    assert len(svg.render(graph, {})) > 100_000


def test_episteme_export_graph_svg_writes_the_same_bytes(tmp_path: Path) -> None:
    out = tmp_path / "m.svg"
    result = invoke("export", "graph-svg", str(FIXTURES / "minimal.knowledge.json"), "--out", str(out))
    assert result.exit_code == 0 and out.read_bytes() == svg.render(fixture_graph("minimal"), {})
    listed = json.dumps(invoke("plugins", "--json").envelope["data"])
    assert "graph-svg" in listed and "graph-png" in listed
    source = write_graph(tmp_path / "g.knowledge.json", fixture_graph("minimal"))
    assert invoke("graph", "export", str(source), "--format", "svg").exit_code == 0
    assert (tmp_path / "g.knowledge.svg").read_bytes() == out.read_bytes()


# -- png ---------------------------------------------------------------------------------------------

needs_renderer = pytest.mark.skipif(not png_renderer_available(), reason="no Chromium or cairosvg here")


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def _heads(graph: dict[str, Any]) -> list[tuple[float, float, float, float, str]]:
    """Each edge's end point, unit direction there and colour, from the geometry the SVG draws."""
    placed = layout.layout(graph)
    by_id = {n.id: n for n in placed.nodes}
    heads = []
    for e in placed.edges:
        a, b = by_id[e.source], by_id[e.target]
        numbers = [
            float(v)
            for v in re.findall(r"-?[\d.]+", layout.edge_path(a.x, a.y, a.r, b.x, b.y, b.r, e.lane, e.both))
        ]
        (px, py), (ex, ey) = numbers[-4:-2], numbers[-2:]
        length = ((ex - px) ** 2 + (ey - py) ** 2) ** 0.5
        heads.append((ex, ey, (ex - px) / length, (ey - py) / length, placed.types[e.type].color))
    return heads


@needs_renderer
@pytest.mark.parametrize("name", ["minimal", "contextual"])
def test_the_png_shows_the_arrowheads_where_the_svg_puts_them(name: str, tmp_path: Path) -> None:
    from PIL import Image

    graph = fixture_graph(name)
    data = png.render(graph, {})
    width, height = svg.picture_size(layout.layout(graph))
    assert _png_size(data) == (math.ceil(width), math.ceil(height))
    picture = Image.open(BytesIO(data)).convert("RGB")
    for ex, ey, ux, uy, color in _heads(graph):
        want = tuple(int(color[k : k + 2], 16) for k in (1, 3, 5))
        for side in (-1.5, 0.0, 1.5):
            got = picture.getpixel((round(ex + ux * 4 - uy * side), round(ey + uy * 4 + ux * side)))
            assert max(abs(g - w) for g, w in zip(got, want, strict=True)) < 40, (name, got, want)
    assert png.render(graph, {}) == data  # the same renderer gives the same bytes
    (tmp_path / f"{name}.png").write_bytes(data)


@needs_renderer
def test_graph_export_png_writes_a_file_and_an_artifact(tmp_path: Path) -> None:
    source = write_graph(tmp_path / "g.knowledge.json", fixture_graph("minimal"))
    result = invoke("graph", "export", str(source), "--format", "png", "--json")
    assert result.exit_code == 0, result.envelope
    written = (tmp_path / "g.knowledge.png").read_bytes()
    assert _png_size(written)[0] > 100
    artifact = invoke("graph", "export", str(source), "--format", "png", "--out", "-", "--json")
    assert artifact.envelope["data"]["artifact"]["mediaType"] == "image/png"
    assert base64.b64decode(artifact.envelope["data"]["artifact"]["data"]) == written


def test_without_a_renderer_png_fails_cleanly_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if png.cairosvg_module() is not None:
        pytest.skip("cairosvg is installed: there is always a renderer")
    monkeypatch.setenv("EPISTEME_CHROMIUM", str(tmp_path / "no-such-chromium"))
    source = write_graph(tmp_path / "g.knowledge.json", fixture_graph("minimal"))
    result = invoke("graph", "export", str(source), "--format", "png", "--json")
    assert result.exit_code == 6
    error = result.envelope["error"]
    assert error["code"] == "PROCESSING_FAILED" and "no PNG renderer" in error["message"]
    assert "cairosvg" in error["hint"] and "--format svg" in error["hint"]
    assert "Traceback" not in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.knowledge.json"]
    plain = invoke("export", "graph-png", str(source), "--out", str(tmp_path / "x.png"))
    assert plain.exit_code == 6 and "Traceback" not in plain.stderr


def test_labels_wrap_at_words_and_end_in_an_ellipsis_when_cut() -> None:
    assert layout.wrap_label("Alpha") == ("Alpha",)
    assert layout.wrap_label("  \t ") == ("\u00a0",)  # a blank label still has its line
    lines = layout.wrap_label("Byte-exact citation of a captured source, kept whole " * 3)
    assert len(lines) == 3 and lines[-1].endswith("\u2026")
    assert all(line.split()[0] in "Byte-exact citation of a captured source, kept whole" for line in lines)
    word = layout.wrap_label("W" * 500)
    assert len(word) == 3 and word[-1].endswith("\u2026") and set("".join(word)) == {"W", "\u2026"}
    assert all(layout.text_width(line) <= layout.MAX_LABEL_WIDTH for line in (*lines, *word))
    assert layout.wrap_label("a\x00b\ufffe") == ("a\ufffdb\ufffd",)
