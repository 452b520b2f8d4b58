"""The tests docs/plugins.md shows for its second walkthrough: they use only the public API."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from episteme_core.api import AskOptions, ReaderSpec, ask, load_plugins
from episteme_core.testing import (
    check_component,
    invoke,
    make_sample_home,
    read_documents,
    store_snapshot,
)


@pytest.fixture(autouse=True)
def guide(plugin_site, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only this distribution's plugins load (what a plugin's own conftest.py sets)."""
    plugin_site("guide")
    monkeypatch.setenv("EPISTEME_LOAD_PLUGINS", "episteme-guide")


LINES = b'{"text": "Tides follow the moon."}\nnot json\n{"text": "The moon pulls the sea."}\n'


def test_the_extractor_cites_each_line(tmp_path: Path) -> None:
    plugins = load_plugins()
    extractor = plugins.get("extractor", "guide-jsonl")
    assert check_component(extractor) == "extractor"
    home = tmp_path / "home"
    store_snapshot(home, "https://lines.example/tides", LINES, content_type="application/jsonl")
    assert invoke("--home", str(home), "extract").exit_code == 0
    [document] = read_documents(home)
    blocks = list(document.blocks())
    assert [b.text for b in blocks] == [LINES.decode().split("\n")[i] for i in (0, 2)]
    assert [b.attributes["line"] for b in blocks] == [1, 3]
    assert [d.code for d in document.diagnostics] == ["NOT_JSON"]


def test_the_exporter_ranks_as_episteme_query_does(tmp_path: Path) -> None:
    sample = make_sample_home(tmp_path / "home")
    home = str(sample.root)
    assert invoke("--home", home, "index").exit_code == 0
    out = tmp_path / "results.csv"
    exported = invoke("--home", home, "export", "guide-csv", "--term", "paragraph", "--out", str(out))
    assert exported.exit_code == 0, exported.stderr
    rows = list(csv.DictReader(io.StringIO(out.read_text("utf-8"))))
    queried = invoke("--home", home, "--json", "query", "--term", "paragraph").envelope["data"]["results"]
    assert [(r["rank"], r["chunk"]) for r in rows] == [(str(q["rank"]), q["chunkId"]) for q in queried]
    assert check_component(load_plugins().get("exporter", "guide-csv"), argv=["--term", "x"]) == "exporter"


def test_the_reader_names_what_shares_the_question_words(tmp_path: Path) -> None:
    plugins = load_plugins()
    kind = plugins.get("reader", "guide-overlap")
    assert check_component(kind, options={"min_shared": 2}) == "reader"
    sample = make_sample_home(tmp_path / "home")
    assert invoke("--home", str(sample.root), "index").exit_code == 0
    reader = kind.open(ReaderSpec(name="overlap", kind="guide-overlap", options={"min_shared": 2}))
    answer = ask(sample.home, AskOptions(question="What does its second paragraph say?"),
                 plugins=plugins, warn=lambda *a, **k: None, readers=[reader])
    assert any("second paragraph MUST be found" in p.text for p in answer.paragraphs)
