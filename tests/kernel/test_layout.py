"""The layout's promises: the kernel never imports a plugin; a plugin imports only the kernel."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PLUGIN_PACKAGES = {
    d.name.replace("-", "_"): d for d in (ROOT / "plugins").iterdir() if (d / "pyproject.toml").exists()
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text("utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def test_there_are_plugins_to_check() -> None:
    assert {"episteme_w3c", "episteme_rfc", "episteme_git", "episteme_honcho"} <= set(PLUGIN_PACKAGES)


def test_the_kernel_never_imports_a_plugin() -> None:
    for path in (ROOT / "episteme_core").rglob("*.py"):
        assert not _imports(path) & set(PLUGIN_PACKAGES), path


def test_a_plugin_imports_only_the_kernel_not_another_plugin() -> None:
    for package, folder in PLUGIN_PACKAGES.items():
        others = set(PLUGIN_PACKAGES) - {package}
        for path in folder.rglob("*.py"):
            assert not _imports(path) & others, path


def test_each_plugin_has_its_own_package_tests_and_tox_env() -> None:
    tox = (ROOT / "tox.ini").read_text("utf-8")
    for package, folder in PLUGIN_PACKAGES.items():
        assert (folder / package).is_dir() or (folder / "src" / package).is_dir(), folder
        assert any(folder.glob("tests/test_*.py")), folder
        env = package.removeprefix("episteme_")
        assert f"[testenv:{env}]" in tox, env
        text = (folder / "pyproject.toml").read_text("utf-8")
        assert "[project.entry-points.episteme]" in text, folder
