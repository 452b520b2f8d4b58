"""The HTML viewer in real headless Chromium (Debian's /usr/bin/chromium, driven by Playwright):
search filters, zoom and pan move the view, a click shows backlinks, a <script> label stays text, and
the page asks the network for nothing. A screenshot is kept under test-artifacts/."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import fixture_graph

from episteme_graph.export import html

CHROMIUM = Path(os.environ.get("EPISTEME_CHROMIUM", "/usr/bin/chromium"))
ARTIFACTS = Path(
    os.environ.get("EPISTEME_TEST_ARTIFACTS", Path(__file__).resolve().parents[1] / "test-artifacts")
)
SCRIPT_LABEL = "<script>window.__pwned = 1</script><img src=x onerror=window.__pwned=2>"

playwright_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (extra 'browser')"
)
if not CHROMIUM.exists():
    pytest.skip(
        f"no Chromium at {CHROMIUM}: run plugins/episteme-graph/scripts/ensure-chromium",
        allow_module_level=True,
    )


def _graph() -> dict[str, Any]:
    graph = fixture_graph("minimal")
    graph["nodes"][2]["label"] = SCRIPT_LABEL
    graph["nodes"][2]["definition"] = "A label with markup, shown as text."
    graph["nodes"][1]["temporal"]["valid_until"] = "2026-06"  # superseded
    return graph


@pytest.fixture(scope="module")
def page_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("viewer") / "graph.knowledge.html"
    path.write_bytes(html.render(_graph(), {}))
    return path


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        yield browser
        browser.close()


@pytest.fixture
def page(browser: Any, page_file: Path) -> Iterator[tuple[Any, list[str], list[str]]]:
    context = browser.new_context(viewport={"width": 1200, "height": 800})
    page = context.new_page()
    requests: list[str] = []
    problems: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.goto(page_file.as_uri())
    page.wait_for_selector("#nodes .node")
    yield page, requests, problems
    context.close()


def _transform(page: Any) -> str:
    value: str = page.get_attribute("#viewport", "transform")
    return value


def _visible_labels(page: Any) -> list[str]:
    labels: list[str] = page.eval_on_selector_all(
        "#nodes .node:not(.hidden) text", "els => els.map(e => e.textContent)"
    )
    return sorted(labels)


def test_the_page_runs_under_its_policy_and_asks_the_network_for_nothing(page: Any, page_file: Path) -> None:
    p, requests, problems = page
    assert requests == [page_file.as_uri()]
    assert problems == []  # no CSP violation, no script error
    assert p.text_content("#title") == "Minimal Valid Graph"
    assert p.locator("#nodes .node").count() == 3


def test_search_filters_concepts(page: Any) -> None:
    p, _, _ = page
    p.fill("#search", "second")
    assert _visible_labels(p) == ["Beta"]
    assert p.locator("#edges line:not(.hidden)").count() == 0
    p.fill("#search", "")
    assert len(_visible_labels(p)) == 3


def test_zoom_and_pan_change_the_view(page: Any) -> None:
    p, _, _ = page
    start = _transform(p)
    box = p.locator("#canvas").bounding_box()
    p.mouse.move(box["x"] + 40, box["y"] + 40)
    p.mouse.wheel(0, -300)
    p.wait_for_function(f"document.getElementById('viewport').getAttribute('transform') !== {start!r}")
    zoomed = _transform(p)
    assert "scale(1.0000)" not in zoomed
    p.mouse.move(box["x"] + 30, box["y"] + box["height"] - 30)
    p.mouse.down()
    p.mouse.move(box["x"] + 130, box["y"] + box["height"] - 80, steps=5)
    p.mouse.up()
    assert _transform(p) != zoomed


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
    labels = p.eval_on_selector_all("#nodes .node text", "els => els.map(e => e.textContent)")
    assert SCRIPT_LABEL in labels
    p.locator('#nodes .node[data-id="gamma"]').click()
    assert p.text_content("#details h2") == SCRIPT_LABEL
    assert p.evaluate("window.__pwned") is None
    assert p.locator("script").count() == 2 and p.locator("img").count() == 0
    assert len(requests) == 1  # the onerror image was never made, so never fetched


def test_cluster_focus_dims_the_rest_and_a_screenshot_is_kept(page: Any) -> None:
    p, _, _ = page
    p.locator('#legend button[data-cluster="c2"]').click()
    dimmed = p.eval_on_selector_all("#nodes .node.dim", "els => els.map(e => e.getAttribute('data-id'))")
    assert sorted(dimmed) == ["alpha", "beta"]
    p.locator('#legend button[data-cluster="c2"]').click()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "graph-viewer.png"
    p.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 1000
