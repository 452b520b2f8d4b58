"""The read commands stay lean: ``query``, ``show`` and ``sources`` import nothing that captures,
extracts or chunks, no entry-point plugin (the graph plugin among them) and not pluggy; ``query`` not
cattrs either (``show`` and ``sources`` build the converter to read records), nor the stored records
it never builds (only a stage commit's, ``records.stage_index``); ``ask`` (which lists
every source, so loads the plugins') none of the producing stages. A cold query pays for what
answering needs.

What a cold query costs is measured in ``bench/peers.py`` and ``docs/benchmarks.md``, never asserted;
this test guards the cause: a deny list of modules, checked in a new process after each command.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from episteme_core.testing import run_cli

PLUGIN_SITES = Path(__file__).parent.parent / "fixtures" / "plugins"

# modules a read command must not import (prefixes), and which commands each applies to
PRODUCING = ("episteme_core.capture", "episteme_core.extract", "episteme_core.chunking",
             "episteme_core.pipeline", "episteme_core.builtins.capture", "episteme_core.builtins.extraction",
             "episteme_core.personal.ingest", "httpx", "html5lib", "pdfplumber", "warcio")
PLUGINS = ("episteme_graph", "episteme_sample", "pluggy")
CONVERTER = ("cattrs",)
# records a query never builds (captures' snapshot records, the log's entries): it opens stage commits only
STORED_RECORDS = ("episteme_core.records.storage",)
# ask lists every source (the builtins' source modules and every plugin load), never a stage's work
STAGE_WORK = ("episteme_core.capture", "episteme_core.chunking", "episteme_core.pipeline",
              "episteme_core.personal.ingest", "episteme_core.extract.run", "episteme_core.extract.builder",
              "episteme_core.extract.html", "episteme_core.extract.pdf", "httpx", "html5lib", "pdfplumber",
              "warcio")

_PROBE = """
import contextlib, io, json, sys
from episteme_core.cli.main import run
with contextlib.redirect_stdout(io.StringIO()):
    code = run(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


@pytest.fixture(scope="module")
def read_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home holding a document (``pipeline --map``) and a book's records (``ingest books``)."""
    root = tmp_path_factory.mktemp("lean")
    (root / "notes.txt").write_text("Retention rules\n\nBackups are kept for thirty days, then deleted.\n")
    (root / "map.json").write_text(json.dumps([{"sourceUrl": "https://example.org/notes.txt",
                                                "localPath": "notes.txt", "contentType": "text/plain"}]))
    books = root / "books" / "shelf"
    books.mkdir(parents=True)
    (books / "tale.md").write_text("# A tale\n\nThe lighthouse keeper counted thirty ships.\n\n"
                                   "Then the fog came in over the harbour.\n")
    home = root / "home"
    env = {"EPISTEME_LOAD_PLUGINS": ""}
    for args in (["pipeline", "--map", str(root / "map.json")], ["ingest", "books", str(books)]):
        built = run_cli(["--home", str(home), *args], env=env)
        assert built.exit_code == 0, built.stderr
    return home


def _modules_after(home: Path, *args: str, sample: bool = True) -> set[str]:
    """The modules a new process holds after the CLI ran ``args``, with every installed plugin and (with
    ``sample``) the fixture plugin ``sample`` (a source, readers, families, a command, a tool, importing
    much of the API) there to be loaded."""
    site = str(PLUGIN_SITES / "site-sample") if sample else None
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [site, os.environ.get("PYTHONPATH")]))}
    env.pop("EPISTEME_LOAD_PLUGINS", None)  # every installed entry point may load
    proc = subprocess.run([sys.executable, "-c", _PROBE, "--home", str(home), *args], capture_output=True,
                          text=True, env=env, check=True)
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["code"] == 0, proc.stderr
    return set(result["modules"])


def _denied(modules: set[str], prefixes: tuple[str, ...]) -> list[str]:
    """The modules that are one of ``prefixes`` or inside one of them."""
    return sorted(m for m in modules if m in prefixes or m.startswith(tuple(p + "." for p in prefixes)))


def test_query_imports_no_producing_stage_no_plugin_and_no_converter(read_home: Path) -> None:
    modules = _modules_after(read_home, "query", "--term", "backups thirty days", "--json")
    assert "episteme_core.search.query" in modules  # the probe ran the command
    assert _denied(modules, PRODUCING + PLUGINS + CONVERTER + STORED_RECORDS) == []


@pytest.mark.parametrize("args", [("sources", "--json"), ("show", "book:shelf/tale", "--json")])
def test_show_and_sources_import_no_producing_stage_and_no_plugin(read_home: Path,
                                                                  args: tuple[str, ...]) -> None:
    modules = _modules_after(read_home, *args)
    assert "episteme_core.personal.library" in modules
    assert _denied(modules, PRODUCING + PLUGINS) == []


def test_ask_imports_no_producing_stage(read_home: Path) -> None:
    modules = _modules_after(read_home, "ask", "how long are backups kept", "--json", sample=False)
    assert "episteme_core.ask.run" in modules
    assert _denied(modules, STAGE_WORK) == []


def test_the_deny_list_sees_what_a_writing_command_imports(read_home: Path) -> None:
    """The probe is able to fail: ``plugins`` loads every plugin, ``pipeline`` the producing stages."""
    assert "episteme_sample" in _modules_after(read_home, "plugins", "--json")
    assert "pluggy" in _modules_after(read_home, "plugins", "--json")
    produced = _modules_after(read_home, "pipeline", "--map", str(read_home.parent / "map.json"), "--json")
    assert {"episteme_core.capture.manual", "episteme_core.extract.run", "cattrs"} <= produced
    assert "cattrs" in _modules_after(read_home, "sources", "--json")
    assert "episteme_core.records.storage" in produced
