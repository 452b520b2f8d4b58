"""Helpers the tests import (this folder is put on sys.path by conftest.py)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures"


def fixture_graph(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"{name}.knowledge.json").read_text("utf-8"))


def write_graph(path: Path, graph: dict[str, Any]) -> Path:
    path.write_text(json.dumps(graph, ensure_ascii=False, indent=2) + "\n", "utf-8")
    return path


def rescore(graph: dict[str, Any]) -> dict[str, Any]:
    """The graph with counts, membership and stored scores recomputed (what a producer does)."""
    from episteme_graph.merge import recompute

    graph = copy.deepcopy(graph)
    recompute(graph)
    return graph


def png_renderer_available() -> bool:
    """Whether ``graph export --format png`` has a renderer here (Chromium or cairosvg)."""
    from episteme_graph.export import png

    return png.find_chromium() is not None or png.cairosvg_module() is not None
