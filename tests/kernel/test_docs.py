"""Meta-tests that keep the documentation's promises."""

from __future__ import annotations

import re
from pathlib import Path

from episteme_core import hookspecs

ROOT = Path(__file__).resolve().parents[2]


def test_cli_reference_is_generated_from_the_parser() -> None:
    from episteme_core.cli.reference import render

    page = (ROOT / "docs" / "cli.md").read_text("utf-8")
    assert page == render(), "docs/cli.md is stale: python -m episteme_core.cli.reference > docs/cli.md"


def test_every_hookspec_is_documented_in_the_plugin_guide() -> None:
    guide = (ROOT / "docs" / "plugins.md").read_text("utf-8")
    for name in dir(hookspecs):
        if name.startswith("episteme_"):
            assert re.search(rf"^### `{name}\(register\)`$", guide, re.M), f"{name} is not documented"


def test_every_hookspec_has_a_docstring_saying_what_and_when() -> None:
    for name in dir(hookspecs):
        if name.startswith("episteme_"):
            doc = getattr(hookspecs, name).__doc__ or ""
            assert "Register" in doc and len(doc.split()) > 20, name


def test_every_hookspec_is_exercised_by_a_test() -> None:
    """Each hook has a ``test_hook_<name>`` that drives a plugin's component through it (datasette's
    rule), besides the registration test that every hook fills the registry."""
    from episteme_core.kernel.loader import HOOK_KINDS

    tests = "\n".join(p.read_text("utf-8") for p in (ROOT / "tests").rglob("test_*.py"))
    for name in dir(hookspecs):
        if name.startswith("episteme_"):
            assert re.search(rf"^def test_hook_{name}\(", tests, re.M), f"no test_hook_{name}"
    plugin_tests = (ROOT / "tests" / "kernel" / "test_plugins.py").read_text("utf-8")
    assert '@pytest.mark.parametrize("hook", HOOKS)' in plugin_tests
    assert sorted(HOOK_KINDS) == sorted(n for n in dir(hookspecs) if n.startswith("episteme_"))


def test_the_plugin_guide_shows_the_contracts_the_registry_checks() -> None:
    from episteme_core.kernel.contracts import contract_table

    guide = (ROOT / "docs" / "plugins.md").read_text("utf-8")
    assert contract_table() in guide, "docs/plugins.md: regenerate the table from components.contract_table()"


def test_the_architecture_page_lists_every_module() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text("utf-8")
    for path in sorted((ROOT / "episteme_core").rglob("*.py")):
        module = path.relative_to(ROOT / "episteme_core").as_posix()
        assert f"| `{module}` |" in page, f"docs/architecture.md does not list episteme_core/{module}"
