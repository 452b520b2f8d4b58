"""A small, fast reader of installed entry points (``*.dist-info/entry_points.txt`` on sys.path).

``importlib.metadata`` costs tens of milliseconds to import; reading the few files directly keeps
``episteme --help`` fast while finding the same entry points.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import attrs


@attrs.frozen
class EntryPoint:
    """One ``name = module:attr`` line of a distribution's ``entry_points.txt``."""

    name: str
    value: str
    dist_name: str
    dist_version: str

    def load(self) -> Any:
        module_name, _, attr = self.value.partition(":")
        module = importlib.import_module(module_name.strip())
        for part in filter(None, attr.strip().split(".")):
            module = getattr(module, part)
        return module


def _normalise(name: str) -> str:
    return name.replace("-", "_").lower()


def _parse(text: str, group: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    section = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
        elif section == group and "=" in line:
            name, _, value = line.partition("=")
            found.append((name.strip(), value.strip()))
    return found


def entry_points(group: str) -> list[EntryPoint]:
    """Entry points of ``group`` from every distribution on sys.path (the first copy of each wins)."""
    seen: set[str] = set()
    result: list[EntryPoint] = []
    for directory in sys.path:
        try:
            names = sorted(os.listdir(directory or "."))
        except OSError:
            continue
        for entry in names:
            if not entry.endswith((".dist-info", ".egg-info")):
                continue
            stem = entry.rsplit(".", 1)[0]
            dist_name, _, version = stem.partition("-")
            key = _normalise(dist_name)
            if key in seen:
                continue
            seen.add(key)
            try:
                with open(os.path.join(directory or ".", entry, "entry_points.txt")) as handle:
                    text = handle.read()
            except OSError:
                continue
            for name, value in _parse(text, group):
                result.append(EntryPoint(name, value, dist_name, version or "unknown"))
    return result
