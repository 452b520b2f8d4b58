"""Loading plugins: the builtins, then entry points of the group ``episteme``, into one registry.

``EPISTEME_LOAD_PLUGINS=a,b`` loads only those entry points (by entry-point or distribution name);
set but empty, it loads builtins only. Every component is checked against its kind's contract
(``kernel.contracts``) as it registers. A plugin's mistake stays its own: a plugin that fails to
import, whose hook raises, that registers a kind its hook does not take or a component that lacks a
required member is refused and recorded (``episteme plugins``, a warning on every command), and
everything else still loads.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from functools import cache
from types import ModuleType
from typing import Any

import pluggy

from episteme_core import __version__, hookspecs
from episteme_core.errors import Cancelled, cancel_requested
from episteme_core.kernel.registry import Component, PluginInfo, Plugins, Refusal
from episteme_core.store.faults import signal_at

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


def _allowed_external() -> set[str] | None:
    raw = os.environ.get("EPISTEME_LOAD_PLUGINS")
    if raw is None:
        return None
    return {name.strip() for name in raw.split(",") if name.strip()}


# The kernel's own plugins (``episteme_core.builtins``), registered exactly as external plugins are,
# first and in this order. Named, not imported: the registry never imports the shell.
DEFAULT_PLUGINS: tuple[str, ...] = (
    "episteme_core.builtins.kernel_commands",
    "episteme_core.builtins.ingest",
    "episteme_core.builtins.capture",
    "episteme_core.builtins.export",
    "episteme_core.builtins.extraction",
    "episteme_core.builtins.personal",
    "episteme_core.builtins.ask",
    "episteme_core.builtins.chunking",
    "episteme_core.builtins.indexing",
    "episteme_core.builtins.retrieval",
    "episteme_core.builtins.serve",
    "episteme_core.builtins.forgetting",
)


def _builtin_modules() -> list[str]:
    return list(DEFAULT_PLUGINS)


def _register_builtins(pm: pluggy.PluginManager, plugins: Plugins) -> None:
    for module_name in _builtin_modules():
        info = PluginInfo(
            name=module_name, version=__version__, module=module_name, builtin=True
        )
        plugins.infos[module_name] = info
        try:
            signal_at(f"plugin:{module_name}")
            module = importlib.import_module(module_name)
            pm.register(module, name=module_name)
        except Cancelled:
            raise  # a signal while loading is the command's cancellation, never the plugin's failure
        except Exception as exc:  # a broken builtin is reported like any plugin
            _cancelled_meanwhile(exc)
            info.error = f"{type(exc).__name__}: {exc}"


def _cancelled_meanwhile(exc: BaseException) -> None:
    """Raise ``Cancelled`` when a signal asked the command to stop while a plugin loaded: code that
    turns exceptions into others (an import that catches ``Exception``) must never make the
    cancellation look like the plugin's failure."""
    signal_name = cancel_requested()
    if signal_name is not None:
        raise Cancelled(signal_name) from exc


def _register_entry_points(pm: pluggy.PluginManager, plugins: Plugins) -> None:
    from episteme_core.kernel.entrypoints import entry_points

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
            signal_at(f"plugin:{ep.name}")
            module: ModuleType = ep.load()
            pm.register(module, name=ep.name)
        except Cancelled:
            raise
        except Exception as exc:
            _cancelled_meanwhile(exc)
            info.error = f"{type(exc).__name__}: {exc}"


def _collect(pm: pluggy.PluginManager, plugins: Plugins) -> None:
    for hook_name, (default_kind, kinds) in HOOK_KINDS.items():
        signal_at(f"hook:{hook_name}")
        caller = getattr(pm.hook, hook_name)
        # pluggy calls implementations last-registered first; keep that order.
        for impl in reversed(caller.get_hookimpls()):
            info = plugins.infos[impl.plugin_name]
            if info.error:  # refused whole already: its other hooks are not called
                continue
            register = _make_register(plugins, impl.plugin_name, default_kind, kinds, hook_name)
            try:
                impl.function(register=register)
            except Cancelled:
                raise  # a signal while loading is the command's cancellation, never the plugin's failure
            except Exception as exc:
                _cancelled_meanwhile(exc)
                info.error = f"{hook_name} raised {type(exc).__name__}: {exc}"
                _refuse_whole(plugins, info)


def _refuse_whole(plugins: Plugins, info: PluginInfo) -> None:
    """Take every component of a plugin refused whole out of the registry."""
    for kind, names in info.components.items():
        registered = plugins.components.get(kind, {})
        for name in names:
            if name in registered and registered[name].plugin == info.name:
                del registered[name]
    info.components = {}


def _make_register(
    plugins: Plugins, plugin_name: str, default_kind: str, kinds: tuple[str, ...], hook: str
) -> Callable[..., None]:
    from episteme_core.kernel.contracts import missing_members

    info = plugins.infos[plugin_name]
    position = list(plugins.infos).index(plugin_name)

    def refuse(kind: str, name: Any, *, missing: list[str] | None = None, reason: str = "") -> None:
        named = name if isinstance(name, str) and name else None
        info.refused.append(Refusal(kind, named, list(missing or []), reason))

    def register(component: Any, *, kind: str | None = None) -> None:
        kind = kind or default_kind
        name = getattr(component, "name", None)
        if kind not in kinds:
            refuse(str(kind), name, reason=f"registered through {hook}, which takes {', '.join(kinds)}")
            return
        missing = missing_members(component, kind)
        if missing:  # refused here, so no command meets it half-built later
            refuse(kind, name, missing=missing)
            return
        assert isinstance(name, str)
        table = plugins.components.setdefault(kind, {})
        existing = table.get(name)
        if existing is not None or (kind, name) in plugins.clashes:
            _clash(plugins, info, kind, name, existing)
            if not info.builtin or name in table:
                return
        sequence = sum(len(names) for names in info.components.values())
        table[name] = Component(kind, name, plugin_name, component, order=(position, sequence))
        info.components.setdefault(kind, []).append(name)

    return register


def _clash(plugins: Plugins, info: PluginInfo, kind: str, name: str, existing: Component | None) -> None:
    """Two plugins registered one name: a builtin keeps it (a plugin overrides a builtin by priority,
    never by its name); between plugins neither is used, and both are told who else claimed it."""
    first = plugins.infos[existing.plugin] if existing is not None else None
    if first is not None and first.builtin:
        info.refused.append(Refusal(kind, name, reason=_builtin_name(first.name)))
        return
    plugins.clashes.add((kind, name))
    if existing is not None and first is not None:
        del plugins.components[kind][name]
        first.components[kind].remove(name)
        if not first.components[kind]:
            del first.components[kind]
        reason = _builtin_name(info.name) if info.builtin else f"plugin {info.name} registers the same name"
        first.refused.append(Refusal(kind, name, reason=reason))
    if info.builtin:  # the builtin came second (hook order): it takes the name back
        plugins.clashes.discard((kind, name))
        return
    others = existing.plugin if existing is not None else "another plugin"
    info.refused.append(Refusal(kind, name, reason=f"plugin {others} registers the same name"))


def _builtin_name(builtin: str) -> str:
    return f"the name is the builtin {builtin}'s (give it another name, and a higher priority)"


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
    signal_at("plugins-loaded")
    return plugins


@cache
def get_plugins() -> Plugins:
    """The process-wide plugins, loaded once."""
    return load_plugins()
