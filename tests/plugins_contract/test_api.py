"""``episteme_core.api`` is the whole surface a plugin may use: complete, typed, lazy, and enforced."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import episteme_core.api as api

ROOT = Path(__file__).resolve().parents[2]


def test_every_public_name_resolves_and_all_is_the_export_table() -> None:
    assert api.__all__ == sorted(api._EXPORTS)
    for name in api.__all__:
        assert getattr(api, name) is not None, name
    assert sorted(api.__dir__()) == api.__all__


def test_type_checkers_see_the_same_names_as_run_time() -> None:
    """The TYPE_CHECKING block re-exports each name from the very module and attribute it loads."""
    tree = ast.parse((ROOT / "episteme_core" / "api.py").read_text("utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If)
                 and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
    seen = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names:
            seen[alias.asname or alias.name] = (node.module, alias.name)
    assert seen == api._EXPORTS


def test_the_contract_protocols_and_helpers_a_plugin_needs_are_public() -> None:
    for name in ("hookimpl", "Source", "Extractor", "Family", "Chunker", "Indexer", "ReaderKind",
                 "Exporter", "Command", "Outcome", "Context", "RunContext", "EpistemeError",
                 "SnapshotWriter", "read_catalog", "read_documents", "iter_chunk_rows", "DocumentBuilder",
                 "build_chunks", "Cut", "Chunk", "Document", "run_ingest", "decode_source", "BaseFamily",
                 "BaseReader"):
        assert name in api.__all__, name
    assert (ROOT / "episteme_core" / "py.typed").is_file()


def test_importing_the_api_loads_nothing_it_names() -> None:
    code = ("import sys, episteme_core.api; "
            "print(sorted(m for m in sys.modules if m.startswith('episteme_core')))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert eval(loaded) == ["episteme_core", "episteme_core.api"]


def test_the_import_contracts_name_every_plugin_and_every_floor() -> None:
    """``lint-imports`` (tox -e lint) holds the floors and the plugin rule: every plugin package of
    ``plugins/`` is bound to ``episteme_core.api``, and every package of the kernel stands on a floor."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["importlinter"]
    plugins = sorted(d.name.replace("-", "_") for d in (ROOT / "plugins").iterdir()
                     if (d / "pyproject.toml").exists())
    contracts = {c["name"]: c for c in config["contracts"]}
    rule = contracts["A plugin imports only the kernel's public API (episteme_core.api)"]
    assert sorted(rule["source_modules"]) == plugins
    assert rule["forbidden_modules"] == ["episteme_core.*"]
    assert sorted(rule["ignore_imports"]) == sorted(f"{p}.** -> episteme_core.api" for p in plugins)
    assert set(plugins) <= set(config["root_packages"])
    floors = next(c for c in config["contracts"] if c["type"] == "layers")
    named = {name.strip() for layer in floors["layers"] for name in layer.split("|")}
    kernel = {p.stem if p.suffix == ".py" else p.name for p in (ROOT / "episteme_core").iterdir()
              if (p.suffix == ".py" or (p / "__init__.py").exists()) and p.stem != "__init__"}
    assert named == kernel
    fixtures = (ROOT / "tests" / "fixtures" / "plugins" / "ruff.toml").read_text("utf-8")
    assert 'extend = "../../../plugins/ruff.toml"' in fixtures
