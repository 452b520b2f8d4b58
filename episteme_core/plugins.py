"""The plugin manager: builtins from DEFAULT_PLUGINS, external plugins from entry points, one registry.

``EPISTEME_LOAD_PLUGINS=a,b`` loads only those entry points (by entry-point or distribution name);
set but empty, it loads builtins only. A plugin that fails to import, or whose hook raises, is
recorded with its error and the rest still load. Every component is checked against its kind's
contract (``episteme_core.components``) as it registers: one that lacks a required member is
refused and recorded on its plugin, and the plugin's other components still register.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from functools import cache
from types import ModuleType
from typing import Any

import attrs
import pluggy

from episteme_core import __version__, hookspecs
from episteme_core.errors import EpistemeError

ENTRY_POINT_GROUP = "episteme"

# hook name -> (default kind, kinds it may register)
HOOK_KINDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "episteme_sources": ("source", ("source",)),
    "episteme_extractors": ("extractor", ("extractor", "family")),
    "episteme_chunkers": ("chunker", ("chunker",)),
    "episteme_indexers": ("indexer", ("indexer",)),
    "episteme_readers": ("reader", ("reader",)),
    "episteme_exporters": ("exporter", ("exporter",)),
    "episteme_commands": ("command", ("command",)),
    "episteme_tools": ("tool", ("tool",)),
}


@attrs.frozen
class Component:
    """A named component and the plugin that registered it."""

    kind: str
    name: str
    plugin: str
    obj: Any
    order: tuple[int, int] = (0, 0)  # (plugin's load position, registration within the plugin)


@attrs.frozen
class Refusal:
    """A component the registry refused: its kind, its name (if it had one) and what it lacks."""

    kind: str
    name: str | None
    missing: list[str]

    @property
    def message(self) -> str:
        article = "an" if self.kind[0] in "aeiou" else "a"
        named = f"{self.kind} {self.name!r}" if self.name else f"{article} {self.kind} without a name"
        return f"{named}, which lacks {', '.join(self.missing)}"


@attrs.define
class PluginInfo:
    """A plugin as ``episteme plugins`` reports it."""

    name: str
    version: str
    module: str
    builtin: bool
    error: str | None = None
    components: dict[str, list[str]] = attrs.field(factory=dict)
    refused: list[Refusal] = attrs.field(factory=list)


@attrs.define
class Plugins:
    """The loaded plugins and the registry of their components."""

    manager: pluggy.PluginManager
    infos: dict[str, PluginInfo] = attrs.field(factory=dict)
    components: dict[str, dict[str, Component]] = attrs.field(factory=dict)

    def get(self, kind: str, name: str) -> Any:
        """The component ``name`` of ``kind``, or ``INVALID_INPUT`` listing what exists."""
        try:
            return self.components.get(kind, {})[name].obj
        except KeyError:
            known = ", ".join(sorted(self.components.get(kind, {}))) or "none"
            raise EpistemeError(
                "INVALID_INPUT",
                f"unknown {kind} {name!r} (known: {known})",
                details={"kind": kind, "name": name},
            ) from None

    def all(self, kind: str) -> list[Any]:
        """Every component of ``kind`` in registration order: builtins, then plugins in entry-point
        order, each plugin's components in the order it registered them."""
        found = self.components.get(kind, {}).values()
        return [component.obj for component in sorted(found, key=lambda c: c.order)]

    def failures(self) -> list[PluginInfo]:
        """Plugins that failed to load (their components are missing)."""
        return [info for info in self.infos.values() if info.error]

    def refusals(self) -> list[tuple[str, Refusal]]:
        """Every refused component with the plugin that offered it."""
        return [(info.name, refusal) for info in self.infos.values() for refusal in info.refused]


def _allowed_external() -> set[str] | None:
    raw = os.environ.get("EPISTEME_LOAD_PLUGINS")
    if raw is None:
        return None
    return {name.strip() for name in raw.split(",") if name.strip()}


def _builtin_modules() -> list[str]:
    from episteme_core.builtins import DEFAULT_PLUGINS

    return list(DEFAULT_PLUGINS)


def _register_builtins(pm: pluggy.PluginManager, plugins: Plugins) -> None:
    for module_name in _builtin_modules():
        info = PluginInfo(
            name=module_name, version=__version__, module=module_name, builtin=True
        )
        plugins.infos[module_name] = info
        try:
            module = importlib.import_module(module_name)
            pm.register(module, name=module_name)
        except Exception as exc:  # a broken builtin is reported like any plugin
            info.error = f"{type(exc).__name__}: {exc}"


def _register_entry_points(pm: pluggy.PluginManager, plugins: Plugins) -> None:
    from episteme_core.entrypoints import entry_points

    allowed = _allowed_external()
    for ep in sorted(entry_points(ENTRY_POINT_GROUP), key=lambda e: e.name):
        names = {ep.name, ep.dist_name, ep.dist_name.replace("_", "-")}
        if allowed is not None and not names & allowed:
            continue
        if ep.name in plugins.infos:
            continue
        info = PluginInfo(name=ep.name, version=ep.dist_version, module=ep.value, builtin=False)
        plugins.infos[ep.name] = info
        try:
            module: ModuleType = ep.load()
            pm.register(module, name=ep.name)
        except Exception as exc:
            info.error = f"{type(exc).__name__}: {exc}"


def _collect(pm: pluggy.PluginManager, plugins: Plugins) -> None:
    for hook_name, (default_kind, kinds) in HOOK_KINDS.items():
        caller = getattr(pm.hook, hook_name)
        # pluggy calls implementations last-registered first; keep that order.
        for impl in reversed(caller.get_hookimpls()):
            register = _make_register(plugins, impl.plugin_name, default_kind, kinds, hook_name)
            try:
                impl.function(register=register)
            except EpistemeError:
                raise
            except Exception as exc:
                info = plugins.infos[impl.plugin_name]
                info.error = f"{hook_name} raised {type(exc).__name__}: {exc}"


def _make_register(
    plugins: Plugins, plugin_name: str, default_kind: str, kinds: tuple[str, ...], hook: str
) -> Callable[..., None]:
    from episteme_core.components import missing_members

    info = plugins.infos[plugin_name]
    position = list(plugins.infos).index(plugin_name)

    def register(component: Any, *, kind: str | None = None) -> None:
        kind = kind or default_kind
        if kind not in kinds:
            raise EpistemeError(
                "INVALID_INPUT",
                f"plugin {plugin_name} registered a {kind!r} through {hook}, which takes "
                f"{', '.join(kinds)}",
                details={"plugin": plugin_name, "kind": kind},
            )
        name = getattr(component, "name", None)
        missing = missing_members(component, kind)
        if missing:  # refused here, so no command meets it half-built later
            info.refused.append(Refusal(kind, name if isinstance(name, str) and name else None, missing))
            return
        assert isinstance(name, str)
        existing = plugins.components.setdefault(kind, {}).get(name)
        if existing is not None:
            raise EpistemeError(
                "INVALID_INPUT",
                f"two plugins register the {kind} {name!r}: {existing.plugin} and {plugin_name}",
                details={"kind": kind, "name": name, "plugins": [existing.plugin, plugin_name]},
                hint="uninstall one of them, or restrict loading with EPISTEME_LOAD_PLUGINS",
            )
        sequence = sum(len(names) for names in info.components.values())
        plugins.components[kind][name] = Component(kind, name, plugin_name, component,
                                                   order=(position, sequence))
        info.components.setdefault(kind, []).append(name)

    return register


def _drop_invalid(pm: pluggy.PluginManager, plugins: Plugins) -> None:
    """Unregister (and report) plugins that implement hooks episteme does not define."""
    while True:
        try:
            pm.check_pending()
            return
        except pluggy.PluginValidationError as exc:
            name = pm.get_name(exc.plugin) or str(exc.plugin)
            pm.unregister(exc.plugin)
            if name in plugins.infos:
                plugins.infos[name].error = f"PluginValidationError: {exc}"


def load_plugins() -> Plugins:
    """Load builtins and entry-point plugins into a fresh manager and collect their components."""
    pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    plugins = Plugins(manager=pm)
    _register_builtins(pm, plugins)
    _register_entry_points(pm, plugins)
    _drop_invalid(pm, plugins)
    _collect(pm, plugins)
    for info in plugins.infos.values():
        for names in info.components.values():
            names.sort()
    return plugins


@cache
def get_plugins() -> Plugins:
    """The process-wide plugins, loaded once."""
    return load_plugins()
