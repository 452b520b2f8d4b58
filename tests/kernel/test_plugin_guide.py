"""The plugin author's guide is true: its code is a real plugin, loaded through an entry point."""

from __future__ import annotations

import json
from pathlib import Path

from episteme_core.stages.documents import read_documents
from episteme_core.store.home import Home
from episteme_core.testing import invoke

ROOT = Path(__file__).resolve().parents[2]
GUIDE_PLUGIN = ROOT / "tests" / "fixtures" / "plugins" / "site-guide" / "episteme_guide.py"


def test_the_guide_shows_exactly_the_tested_plugin() -> None:
    guide = (ROOT / "docs" / "plugins.md").read_text("utf-8")
    for shown in (GUIDE_PLUGIN, GUIDE_PLUGIN.with_name("episteme_guide_retrieval.py"),
                  ROOT / "tests" / "kernel" / "test_plugin_guide_retrieval.py"):
        assert "```python\n" + shown.read_text("utf-8") + "```" in guide, shown


def test_the_guide_and_every_snippet_of_the_docs_import_only_the_public_api() -> None:
    """Code blocks in docs/ (and the guide's files) import the kernel only through ``api`` and
    ``testing``: what they show a plugin author, an author may copy."""
    import re

    allowed = ("episteme_core.api", "episteme_core.testing")
    for page in sorted((ROOT / "docs").glob("*.md")):
        for block in re.findall(r"```python\n(.*?)```", page.read_text("utf-8"), re.S):
            for module in re.findall(r"^\s*(?:from|import)\s+(episteme_core[\w.]*)", block, re.M):
                assert module.startswith(allowed), f"{page.name} shows an import of {module}"


def test_the_guide_family_is_chosen_by_url_and_marks_asides(plugin_site, home: Path, tmp_path: Path) -> None:
    plugin_site("guide")
    (tmp_path / "note.txt").write_text("A plain statement.\n\nAside: only a remark.\n", "utf-8")
    (tmp_path / "map.json").write_text(json.dumps([
        {"sourceUrl": "https://notes.example.org/n1", "localPath": "note.txt", "contentType": "text/plain"}
    ]))
    assert invoke("--home", str(home), "manual-ingest", "--map", str(tmp_path / "map.json")).exit_code == 0
    result = invoke("--home", str(home), "extract", "--json")
    assert result.exit_code == 0, result.stderr
    [document] = read_documents(Home(home))
    assert document.family == "notes"
    marks = {block.text: block.normativity for block in document.blocks()}
    assert marks["Aside: only a remark."] == "informative"
    assert marks["A plain statement."] != "informative"


def test_the_guide_source_ingests_and_shows_verbatim(plugin_site, home: Path, tmp_path: Path) -> None:
    plugin_site("guide")
    folder = tmp_path / "jots"
    folder.mkdir()
    (folder / "monday.txt").write_text("First jot.\r\n\r\nSecond jot.\r\n", "utf-8")
    ingested = invoke("--home", str(home), "--json", "ingest", "jots", str(folder))
    assert ingested.exit_code == 0, ingested.stderr
    assert ingested.envelope["data"]["found"] == 1
    shown = invoke("--home", str(home), "show", "jot:monday#2")
    assert shown.exit_code == 0, shown.stderr
    assert shown.stdout.startswith("Second jot.\n")
