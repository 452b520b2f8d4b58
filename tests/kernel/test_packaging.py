"""Every distribution declares what an install needs and an index shows: a licence file, a readme,
classifiers for Python 3.11 and 3.12, a project URL; the core's extra ``all`` names every plugin.
(``scripts/build`` checks the same in the built wheels and installs them; this keeps the sources so.)"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROJECTS = [ROOT, *sorted(p.parent for p in (ROOT / "plugins").glob("*/pyproject.toml"))]


def _project(folder: Path) -> dict:  # type: ignore[type-arg]
    return tomllib.loads((folder / "pyproject.toml").read_text("utf-8"))["project"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("folder", PROJECTS, ids=lambda p: p.name)
def test_a_distribution_declares_licence_readme_classifiers_and_urls(folder: Path) -> None:
    project = _project(folder)
    assert project["license"] == "Apache-2.0" and project["license-files"] == ["LICENSE"]
    assert (folder / "LICENSE").read_text("utf-8") == (ROOT / "LICENSE").read_text("utf-8")
    assert project["readme"] == "README.md" and (folder / "README.md").is_file()
    assert project["requires-python"] == ">=3.11"
    for python in ("3.11", "3.12"):
        assert f"Programming Language :: Python :: {python}" in project["classifiers"]
    assert project["urls"]["Homepage"].startswith("https://")


def test_the_extra_all_names_every_plugin() -> None:
    extras = _project(ROOT)["optional-dependencies"]
    assert {"test", "dask", "all"} <= set(extras)
    named = {requirement.split(">")[0].split("[")[0] for requirement in extras["all"]}
    plugins = {_project(folder)["name"] for folder in PROJECTS[1:]}
    assert plugins and plugins <= named
    assert "episteme-core" in named  # [dask] through the core's own extra
