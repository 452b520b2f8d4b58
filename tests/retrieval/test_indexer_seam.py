"""One way to the index: the commands and library calls that read or build shards reach them only
through the home's indexer (``episteme_core.search.indexers``), never by importing the bm25 indexer."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "episteme_core"
CALLERS = ("search/query.py", "ask/run.py", "ask/evalrun.py", "ask/candidates.py", "pipeline.py",
           "personal/pack.py", "personal/ingest.py", "serve/shardcache.py", "serve/builtin_tools.py",
           "serve/tools.py", "serve/calls.py", "serve/app.py", "builtins/retrieval.py", "builtins/ask.py",
           "builtins/ingest.py")
# The bm25 indexer, all of it: the text helpers every caller shares (the analyzer, units, snippets, the
# rerank) live in ``text/`` and ``search/``, below it.
FORBIDDEN = "episteme_core.bm25"


def _imports(path: Path) -> list[tuple[str, list[str]]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.module, [alias.name for alias in node.names]))
        elif isinstance(node, ast.Import):
            found.extend((alias.name, []) for alias in node.names)
    return found


@pytest.mark.parametrize("module", CALLERS)
def test_callers_reach_the_index_only_through_the_indexer(module: str) -> None:
    for name, _ in _imports(ROOT / module):
        assert not (name == FORBIDDEN or name.startswith(FORBIDDEN + ".")), (
            f"{module} imports {name}: go through episteme_core.search.indexers")


def test_the_seam_modules_import_no_indexer() -> None:
    for module in ("search/indexers.py", "search/shardset.py", "search/opening.py", "stages/shards.py",
                   "stages/bundle.py"):
        for name, _ in _imports(ROOT / module):
            assert not name.startswith((FORBIDDEN, "episteme_core.builtins", "episteme_core.cli")), (
                module, name)
