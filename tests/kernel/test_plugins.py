"""The plugin manager: builtins, a real entry-point plugin, restriction, failures, name clashes."""

from __future__ import annotations

import pytest

from episteme_core import hookspecs
from episteme_core.errors import EpistemeError
from episteme_core.kernel.loader import HOOK_KINDS, load_plugins
from episteme_core.testing import invoke, run_cli, validate

HOOKS = sorted(name for name in dir(hookspecs) if name.startswith("episteme_"))


def test_every_hookspec_has_a_kind_table_entry() -> None:
    assert HOOKS == sorted(HOOK_KINDS)


def test_builtins_are_plugins_too() -> None:
    plugins = load_plugins()
    kernel = plugins.infos["episteme_core.builtins.kernel_commands"]
    assert kernel.builtin and kernel.error is None
    assert {"init", "plugins", "verify"} <= set(kernel.components["command"])


def test_an_entry_point_plugin_is_found_loaded_and_listed(plugin_site) -> None:
    env = plugin_site("sample")
    result = run_cli(["--json", "plugins"], env=env)  # a new process: real discovery
    assert result.exit_code == 0, result.stderr
    validate(result.envelope, "cli-envelope")
    validate(result.envelope["data"], "plugins")
    sample = next(p for p in result.envelope["data"]["plugins"] if p["name"] == "sample")
    assert sample["version"] == "1.2.3" and sample["builtin"] is False
    assert sample["components"]["reader"] == ["sample-reader"]
    assert sample["components"]["family"] == ["sample-family"]


def test_the_fixture_plugin_is_visible_to_importlib_metadata_as_well(plugin_site) -> None:
    from importlib.metadata import entry_points

    plugin_site("sample")
    assert "sample" in {ep.name for ep in entry_points(group="episteme")}


def test_human_listing_shows_versions_and_components(plugin_site) -> None:
    plugin_site("sample")
    result = invoke("plugins")
    assert "sample 1.2.3 (episteme_sample)" in result.stdout
    assert "  reader: sample-reader" in result.stdout


@pytest.mark.parametrize(("restriction", "loaded"), [("", False), ("sample", True),
                                                      ("episteme-sample", True), ("other", False)])
def test_episteme_load_plugins_restricts_external_plugins(
    plugin_site, restriction: str, loaded: bool
) -> None:
    plugin_site("sample")
    result = invoke("--json", "plugins", env={"EPISTEME_LOAD_PLUGINS": restriction})
    names = {p["name"] for p in result.envelope["data"]["plugins"]}
    assert ("sample" in names) is loaded
    assert "episteme_core.builtins.kernel_commands" in names


def test_a_plugin_that_fails_to_import_is_reported_and_the_rest_load(plugin_site) -> None:
    plugin_site("sample", "broken")
    listing = invoke("--json", "plugins")
    assert listing.exit_code == 0
    broken = next(p for p in listing.envelope["data"]["plugins"] if p["name"] == "broken")
    assert "ImportError" in broken["error"]
    assert listing.envelope["warnings"][0]["code"] == "PLUGIN_FAILED"
    other = invoke("sample-read", "--input", "-", stdin=b"[]")
    assert other.exit_code == 0
    assert "warning: plugin broken failed to load" in other.stderr


def test_a_name_a_builtin_holds_is_refused_and_every_command_still_works(plugin_site) -> None:
    plugin_site("clash")
    result = invoke("--json", "plugins")
    assert result.exit_code == 0
    clash = next(p for p in result.envelope["data"]["plugins"] if p["name"] == "clash")
    assert clash["refused"] == [{"kind": "command", "name": "verify", "missing": [],
                                 "reason": "the name is the builtin episteme_core.builtins.kernel_commands's "
                                           "(give it another name, and a higher priority)"}]
    warning = next(w for w in result.envelope["warnings"] if w["code"] == "COMPONENT_REFUSED")
    assert warning["plugin"] == "clash" and "verify" in warning["message"]
    validate(result.envelope["data"], "plugins")
    assert invoke("--json", "verify", "--home", "/nonexistent-home").envelope["command"] == "verify"


def test_two_plugins_claiming_one_name_are_both_refused_and_the_rest_loads(plugin_site) -> None:
    plugin_site("mistakes", "twin")
    plugins = load_plugins()
    assert "twin" not in plugins.components["command"]
    refused = {(plugin, r.name): r.reason for plugin, r in plugins.refusals() if r.name == "twin"}
    assert refused == {("mistakes", "twin"): "plugin twin registers the same name",
                       ("twin", "twin"): "plugin mistakes registers the same name"}
    assert invoke("mistakes-ok").stdout.strip() == "ok"
    missing = invoke("--json", "twin")
    assert missing.exit_code == 2 and missing.envelope["error"]["code"] == "INVALID_USAGE"


def test_a_wrong_kind_and_a_priority_that_is_no_integer_are_refused(plugin_site) -> None:
    plugin_site("mistakes")
    result = invoke("--json", "plugins")
    assert result.exit_code == 0
    mistakes = next(p for p in result.envelope["data"]["plugins"] if p["name"] == "mistakes")
    by_name = {r["name"]: r for r in mistakes["refused"]}
    assert by_name["misfiled"]["kind"] == "command"
    assert by_name["misfiled"]["reason"] == "registered through episteme_exporters, which takes exporter"
    assert by_name["eager-text"]["missing"] == ["priority (an integer)"]
    assert by_name["mistakes-not-a-tool"]["missing"] == [
        "description (a non-empty string)", "input_schema (a mapping)", "run() (a method)"]
    assert "eager-text" not in mistakes["components"].get("extractor", [])
    codes = [w["code"] for w in result.envelope["warnings"]]
    assert codes.count("COMPONENT_REFUSED") == 3
    listing = invoke("plugins")
    assert "refused: command 'misfiled': registered through episteme_exporters" in listing.stdout
    assert "refused: extractor 'eager-text', which lacks priority (an integer)" in listing.stdout


def test_a_hook_that_raises_refuses_its_plugin_whole(plugin_site) -> None:
    plugin_site("raising", "sample")
    plugins = load_plugins()
    raising = plugins.infos["raising"]
    assert raising.error == "episteme_tools raised RuntimeError: the tools hook is broken"
    assert raising.components == {} and "raising-cmd" not in plugins.components["command"]
    result = invoke("--json", "plugins")
    assert result.exit_code == 0
    failed = [w for w in result.envelope["warnings"] if w["code"] == "PLUGIN_FAILED"]
    assert [w["plugin"] for w in failed] == ["raising"]
    assert invoke("sample-read", "--input", "-", stdin=b"[]").exit_code == 0


def test_unknown_component_lookup_lists_what_exists() -> None:
    with pytest.raises(EpistemeError, match=r"unknown command 'nope' \(known: .*verify"):
        load_plugins().get("command", "nope")


@pytest.mark.parametrize("hook", HOOKS)
def test_hook_registers_components_of_its_kind(plugin_site, hook: str) -> None:
    """Each hook, called through pluggy on a real entry-point plugin, fills the registry."""
    plugin_site("sample")
    plugins = load_plugins()
    default_kind, kinds = HOOK_KINDS[hook]
    registered = {
        kind: [c for c in plugins.components.get(kind, {}).values() if c.plugin == "sample"]
        for kind in kinds
    }
    assert all(registered[kind] for kind in kinds), registered
    component = registered[default_kind][0]
    assert plugins.get(default_kind, component.name) is component.obj
