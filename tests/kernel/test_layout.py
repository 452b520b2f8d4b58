"""The layout's promises: which module may import which.

- The kernel never imports a plugin; a plugin imports only the kernel's public API, not another
  plugin (``plugins/ruff.toml`` enforces the API rule at lint time; this test holds it without ruff).
- Data flows down: library modules import no CLI or builtin module. Only the shell (``cli/``,
  ``builtins/``), the plugin loader, the public API and the test helpers may.
- No import cycle anywhere in the kernel, counting imports under ``TYPE_CHECKING`` and inside
  functions; at most six modules at the top; no two names that differ only by a plural.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KERNEL = ROOT / "episteme_core"
PLUGIN_PACKAGES = {
    d.name.replace("-", "_"): d for d in (ROOT / "plugins").iterdir() if (d / "pyproject.toml").exists()
}
FIXTURE_PLUGINS = sorted((ROOT / "tests" / "fixtures" / "plugins").glob("site-*/*.py"))
# The shell and the contract modules: they may import the CLI and the builtins.
SHELL = {"cli", "builtins", "__main__", "api", "testing", "plugins", "components"}


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, at any depth (functions and TYPE_CHECKING blocks included)."""
    tree = ast.parse(path.read_text("utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _roots(path: Path) -> set[str]:
    return {name.split(".")[0] for name in _imports(path)}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_there_are_plugins_to_check() -> None:
    assert {"episteme_w3c", "episteme_rfc", "episteme_git", "episteme_honcho"} <= set(PLUGIN_PACKAGES)


def test_the_kernel_never_imports_a_plugin() -> None:
    for path in KERNEL.rglob("*.py"):
        assert not _roots(path) & set(PLUGIN_PACKAGES), path


def test_a_plugin_imports_only_the_kernel_not_another_plugin() -> None:
    for package, folder in PLUGIN_PACKAGES.items():
        others = set(PLUGIN_PACKAGES) - {package}
        for path in folder.rglob("*.py"):
            assert not _roots(path) & others, path


def _kernel_modules_used(path: Path) -> set[str]:
    return {name for name in _imports(path) if name.startswith("episteme_core.")} | (
        {"episteme_core"} if "episteme_core" in _imports(path) else set())


def test_a_plugin_imports_only_the_public_api() -> None:
    """Plugin packages (and the fixture plugins) use ``episteme_core.api``; tests also ``.testing``."""
    allowed = ("episteme_core.api", "episteme_core.testing")
    for folder in PLUGIN_PACKAGES.values():
        for path in folder.rglob("*.py"):
            in_tests = "tests" in path.relative_to(folder).parts
            for name in _kernel_modules_used(path):
                ok = name.startswith(allowed[0]) or (in_tests and name.startswith(allowed[1]))
                assert ok, f"{path} imports {name}"
    for path in FIXTURE_PLUGINS:
        for name in _kernel_modules_used(path):
            assert name.startswith(allowed[0]), f"{path} imports {name}"


def test_each_plugin_has_its_own_package_tests_readme_and_tox_env() -> None:
    tox = (ROOT / "tox.ini").read_text("utf-8")
    for package, folder in PLUGIN_PACKAGES.items():
        assert (folder / package).is_dir() or (folder / "src" / package).is_dir(), folder
        assert any(folder.glob("tests/test_*.py")), folder
        assert (folder / "README.md").is_file(), folder
        env = package.removeprefix("episteme_")
        assert f"[testenv:{env}]" in tox, env
        assert f"{folder.relative_to(ROOT)}/{package}" in tox, f"tox -e type does not check {package}"
        text = (folder / "pyproject.toml").read_text("utf-8")
        assert "[project.entry-points.episteme]" in text, folder
        assert '"episteme-core>=' in text and '"episteme"' not in text, folder


def test_library_modules_import_no_cli_or_builtin_module() -> None:
    for path in KERNEL.rglob("*.py"):
        relative = path.relative_to(KERNEL).parts
        if relative[0].removesuffix(".py") in SHELL:
            continue
        for name in _imports(path):
            assert not name.startswith(("episteme_core.cli", "episteme_core.builtins")), (
                f"{path.relative_to(ROOT)} imports {name}: library code takes a RunContext, not the CLI's"
            )


def _kernel_graph() -> dict[str, set[str]]:
    """Module -> the kernel modules it imports (a name imported from a package that is a module of
    its own counts as that module)."""
    modules = {_module_name(path): path for path in KERNEL.rglob("*.py")}

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = {resolve(i) for i in _imports(path) if i.split(".")[0] == "episteme_core"}
        graph[name] = {t for t in targets if t and t != name}
    return graph


def test_the_kernel_has_no_import_cycle() -> None:
    """No module reaches itself through imports, counting those under TYPE_CHECKING and inside
    functions (``lint-imports`` checks the floors between packages; this checks every module)."""
    graph = _kernel_graph()
    done: set[str] = set()

    def visit(name: str, trail: tuple[str, ...]) -> None:
        assert name not in trail, f"import cycle: {' -> '.join((*trail[trail.index(name):], name))}"
        if name in done:
            return
        for target in sorted(graph[name]):
            visit(target, (*trail, name))
        done.add(name)

    for name in sorted(graph):
        visit(name, ())


def test_at_most_six_modules_stand_at_the_top_of_the_kernel() -> None:
    top = sorted(p.name for p in KERNEL.glob("*.py"))
    assert top == ["__init__.py", "__main__.py", "api.py", "errors.py", "hookspecs.py", "pipeline.py"], top


def test_no_two_modules_differ_only_by_a_plural() -> None:
    names = {p.stem for p in KERNEL.rglob("*.py")} | {p.name for p in KERNEL.rglob("*") if p.is_dir()}
    clashes = sorted(n for n in names if n + "s" in names and n not in ("__init__",))
    assert not clashes, clashes
