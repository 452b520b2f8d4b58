"""Loading on demand: a command loads only the components it asks for, the registry a full load gives
is the same whichever way it was filled, and the tables that make that possible match the builtins."""

from __future__ import annotations

import sys
from typing import Any

import pluggy

from episteme_core import hookspecs
from episteme_core.kernel.loader import (
    BUILTIN_COMPONENTS,
    BUILTINS,
    DEFAULT_PLUGINS,
    HOOK_KINDS,
    builtin_hooks,
    lazy_plugins,
    load_plugins,
)
from episteme_core.kernel.registry import Plugins
from episteme_core.testing import invoke


def _snapshot(plugins: Plugins) -> dict[str, Any]:
    """Everything a full load decides: components (with their order), plugins, refusals, warnings."""
    return {
        "components": {kind: {name: (c.plugin, c.order) for name, c in table.items()}
                       for kind, table in sorted(plugins.components.items())},
        "infos": [(i.name, i.error, i.components, [r.message for r in i.refused])
                  for i in plugins.infos.values()],
        "warnings": plugins.warnings(),
    }


def test_the_builtin_table_is_what_the_builtins_register() -> None:
    plugins = load_plugins()
    registered = {kind: {name: c.plugin.removeprefix(BUILTINS) for name, c in table.items()
                         if plugins.infos[c.plugin].builtin}
                  for kind, table in plugins.components.items()}
    assert registered == BUILTIN_COMPONENTS


def test_each_builtin_implements_exactly_the_hooks_of_its_kinds() -> None:
    hooks = builtin_hooks()
    for module_name in DEFAULT_PLUGINS:
        module = sys.modules.get(module_name) or __import__(module_name, fromlist=["_"])
        marked = sorted(name for name in HOOK_KINDS if hasattr(getattr(module, name, None), "episteme_impl"))
        assert marked == sorted(h for h, modules in hooks.items() if module_name in modules), module_name


def test_the_builtins_pass_pluggys_own_checks() -> None:
    """The builtins are called without the plugin manager; registered into one, they are valid."""
    manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    manager.add_hookspecs(hookspecs)
    for module_name in DEFAULT_PLUGINS:
        manager.register(__import__(module_name, fromlist=["_"]), name=module_name)
    manager.check_pending()
    for hook, modules in builtin_hooks().items():
        assert [impl.plugin_name for impl in getattr(manager.hook, hook).get_hookimpls()] == modules


def test_the_markers_are_pluggys() -> None:
    def a(register: Any) -> None: ...

    def b(register: Any) -> None: ...

    pluggy.HookimplMarker("episteme")(a)
    hookspecs.hookimpl(b)
    assert b.episteme_impl == a.episteme_impl  # type: ignore[attr-defined]
    pluggy.HookimplMarker("episteme")(tryfirst=True, specname="x")(a)
    hookspecs.hookimpl(tryfirst=True, specname="x")(b)
    assert b.episteme_impl == a.episteme_impl  # type: ignore[attr-defined]
    pluggy.HookspecMarker("episteme")(a)
    hookspecs.hookspec(b)
    assert b.episteme_spec == a.episteme_spec  # type: ignore[attr-defined]


def test_a_builtin_component_loads_one_builtin_module_and_no_plugin(plugin_site) -> None:
    plugin_site("sample", "clash")
    plugins = lazy_plugins()
    assert plugins.get("indexer", "bm25").name == "bm25"
    assert list(plugins.infos) == [BUILTINS + "indexing"]  # no other builtin, no entry point
    assert plugins.manager is None and plugins.warnings() == []
    assert plugins.get("command", "query").name == "query"
    assert list(plugins.infos) == [BUILTINS + "indexing", BUILTINS + "retrieval"]  # in load order


def test_a_name_no_builtin_holds_loads_its_kind_from_every_plugin(plugin_site) -> None:
    plugin_site("sample", "clash")
    plugins = lazy_plugins()
    assert plugins.get("indexer", "sample-indexer").name == "sample-indexer"
    assert {"sample", "clash"} <= set(plugins.infos) and plugins.manager is not None
    assert sorted(plugins.components) == ["indexer"]  # only the indexer hooks were called
    assert plugins.warnings() == []  # clash's mistake is a command: not loaded, not reported
    commands = plugins.of("command")
    assert "sample-read" in commands and commands["verify"].plugin == BUILTINS + "kernel_commands"
    assert [w["plugin"] for w in plugins.warnings()] == ["clash"]  # reported once its kind loaded


def test_loading_on_demand_ends_in_the_registry_a_full_load_gives(plugin_site) -> None:
    plugin_site("sample", "clash", "mistakes", "twin", "raising", "broken")
    full = _snapshot(load_plugins())
    lazy = lazy_plugins()
    lazy.get("indexer", "bm25")
    lazy.get("command", "query")
    lazy.all("reader")
    lazy.get("family", "sample-family")
    assert _snapshot(lazy.load_all()) == full


def test_an_unknown_name_lists_every_component_of_its_kind(plugin_site) -> None:
    plugin_site("sample")
    plugins = lazy_plugins()
    assert plugins.find("indexer", "nope") is None
    assert sorted(plugins.of("indexer")) == ["bm25", "sample-indexer"]


def test_a_builtin_command_reports_the_plugins_it_loaded_while_it_ran(plugin_site, tmp_path) -> None:
    """``query --indexer sample-indexer`` loads the indexers of every plugin: a plugin that failed to
    import is reported by that command; a plain ``verify`` loads no plugin and reports none."""
    plugin_site("sample", "broken")
    home = str(tmp_path / "home")
    assert invoke("--home", home, "ingest", "sample-source", "some words here").exit_code == 0
    assert invoke("--home", home, "index", "--indexer", "sample-indexer").exit_code == 0
    found = invoke("--home", home, "--json", "query", "--term", "words", "--indexer", "sample-indexer")
    assert found.exit_code == 0, found.stderr
    assert [w["plugin"] for w in found.envelope["warnings"] if w["code"] == "PLUGIN_FAILED"] == ["broken"]
    quiet = invoke("--home", home, "--json", "verify")
    assert quiet.exit_code == 0 and quiet.envelope["warnings"] == []


def test_threads_asking_at_once_each_wait_for_the_kind_to_be_whole(monkeypatch: Any) -> None:
    """The MCP server's threads share one registry: a thread that asks for a component while another
    is still running the hook that registers it waits, and never sees the kind half loaded."""
    import importlib
    import threading
    import time

    module = importlib.import_module(BUILTINS + BUILTIN_COMPONENTS["reader"]["bm25"])
    original = module.episteme_readers

    def slow(register: Any) -> None:
        time.sleep(0.3)  # the window in which a second thread used to find nothing
        original(register=register)

    monkeypatch.setattr(module, "episteme_readers", slow)
    plugins = lazy_plugins()
    names: list[str] = []
    first = threading.Thread(target=lambda: names.extend(plugins.of("reader")))
    first.start()
    time.sleep(0.05)
    assert plugins.get("reader", "bm25") is not None  # before: INVALID_INPUT, "known: none"
    first.join()
    assert "bm25" in names
