"""Loading plugins: the builtins, then entry points of the group ``episteme``, into one registry.

``EPISTEME_LOAD_PLUGINS=a,b`` loads only those entry points (by entry-point or distribution name);
set but empty, it loads builtins only. Every component is checked against its kind's contract
(``kernel.contracts``) as it registers. A plugin's mistake stays its own: a plugin that fails to
import, whose hook raises, that registers a kind its hook does not take or a component that lacks a
required member is refused and recorded (``episteme plugins``, a warning on every command that loads
it), and everything else still loads.

``load_plugins`` loads everything at once. ``get_plugins`` (the CLI's registry) loads on demand, so
a command pays only for what it uses: a component a builtin holds (``BUILTIN_COMPONENTS``, a table a
test holds to what the builtins register) imports that one builtin module and calls its hook for the
kind; a name no builtin holds, or a whole kind (``Plugins.all``), calls that kind's hooks in every
builtin and entry-point plugin; ``episteme plugins`` and ``--help`` load everything. A plugin can
never take a builtin's name, so ``episteme query`` on a home of the bm25 indexer imports two builtin
modules, no entry-point plugin and not pluggy. Hooks are called in the order the plugin manager
calls them (entry points last-registered first, then the builtins last first), each at most once.
"""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Callable
from functools import cache
from types import ModuleType
from typing import Any

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
# kind -> the one hook that may register it
KIND_HOOK: dict[str, str] = {kind: hook for hook, (_, kinds) in HOOK_KINDS.items() for kind in kinds}


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

BUILTINS = "episteme_core.builtins."
# kind -> name -> the builtin module (under ``BUILTINS``) that registers it; a module's hooks are the
# hooks of the kinds it registers. ``tests/kernel/test_plugin_loading.py`` holds it to a full load.
BUILTIN_COMPONENTS: dict[str, dict[str, str]] = {
    "chunker": {"paragraph": "chunking", "window": "chunking"},
    "command": {
        "ask": "ask", "chunk": "chunking", "diff": "retrieval", "eval": "ask", "export": "export",
        "extract": "extraction", "index": "indexing", "ingest": "ingest", "init": "kernel_commands",
        "manual-ingest": "capture", "pipeline": "retrieval", "plugins": "kernel_commands",
        "query": "retrieval", "serve": "serve", "show": "personal", "snapshot": "capture",
        "sources": "personal", "verify": "kernel_commands", "forget": "forgetting", "gc": "forgetting",
        "doctor": "kernel_commands",
    },
    "exporter": {"warc": "capture"},
    "extractor": {"html": "extraction", "pdf": "extraction", "record": "personal", "text": "extraction",
                  "xml": "extraction"},
    "family": {"generic": "extraction"},
    "indexer": {"bm25": "indexing"},
    "reader": {"bm25": "ask", "http": "ask"},
    "source": {"books": "personal", "claude": "personal", "file": "capture", "http": "capture",
               "intent": "personal", "warc": "capture"},
    "tool": {"ask": "serve", "query": "serve", "show": "serve", "sources": "serve", "verify": "serve"},
}


def builtin_hooks() -> dict[str, list[str]]:
    """hook name -> the builtin modules implementing it, in ``DEFAULT_PLUGINS`` order."""
    implementing: dict[str, set[str]] = {}
    for kind, names in BUILTIN_COMPONENTS.items():
        for module in names.values():
            implementing.setdefault(KIND_HOOK[kind], set()).add(BUILTINS + module)
    return {hook: [m for m in DEFAULT_PLUGINS if m in modules] for hook, modules in implementing.items()}


class _Loading:
    """A registry's loading state: which builtins are imported, which hooks were called by whom, and
    the entry-point plugins' manager (built the first time an entry point is needed)."""

    def __init__(self) -> None:
        self.modules: dict[str, ModuleType] = {}
        self.called: set[tuple[str, str]] = set()  # (plugin, hook)
        self.kinds: set[str] = set()  # kinds loaded whole
        self.external: list[str] | None = None  # the entry points registered, in registration order
        self.everything = False
        # One loading at a time: a hook is marked called before it runs, so a second thread (the MCP
        # server's) must wait for it to finish rather than see a kind half registered. Reentrant: a
        # hook may ask the registry for a component of its own.
        self.lock = threading.RLock()

    # -- what the registry asks for ------------------------------------------------------------------
    def load_component(self, plugins: Plugins, kind: str, name: str) -> None:
        with self.lock:
            module = BUILTIN_COMPONENTS.get(kind, {}).get(name)
            if module is not None:
                self._call_builtin(plugins, BUILTINS + module, KIND_HOOK[kind])
            if name not in plugins.components.get(kind, {}):
                self.load_kind(plugins, kind)

    def load_kind(self, plugins: Plugins, kind: str) -> None:
        with self.lock:
            hook = KIND_HOOK.get(kind)
            if kind in self.kinds or hook is None:
                return
            self.kinds.update(HOOK_KINDS[hook][1])
            self._call_hook(plugins, hook)

    def load_all(self, plugins: Plugins) -> None:
        with self.lock:
            if self.everything:
                return
            self.everything = True
            for module in DEFAULT_PLUGINS:  # every builtin is listed, even one that registers nothing
                self._builtin(plugins, module)
            self._register_entry_points(plugins)
            for hook in HOOK_KINDS:
                self.kinds.update(HOOK_KINDS[hook][1])
                self._call_hook(plugins, hook)

    # -- hooks ---------------------------------------------------------------------------------------
    def _call_hook(self, plugins: Plugins, hook: str) -> None:
        """``hook`` in every plugin that has not had it called, in the plugin manager's order."""
        signal_at(f"hook:{hook}")
        self._register_entry_points(plugins)
        manager = plugins.manager
        if manager is not None:
            for impl in reversed(getattr(manager.hook, hook).get_hookimpls()):
                self._call(plugins, impl.plugin_name, hook, impl.function)
        for module in reversed(builtin_hooks().get(hook, [])):
            self._call_builtin(plugins, module, hook)

    def _call_builtin(self, plugins: Plugins, module_name: str, hook: str) -> None:
        module = self._builtin(plugins, module_name)
        function = getattr(module, hook, None) if module is not None else None
        if function is not None:
            self._call(plugins, module_name, hook, function)

    def _call(self, plugins: Plugins, plugin_name: str, hook: str, function: Callable[..., Any]) -> None:
        if (plugin_name, hook) in self.called:
            return
        self.called.add((plugin_name, hook))
        info = plugins.infos[plugin_name]
        if info.error:  # refused whole already: its other hooks are not called
            return
        default_kind, kinds = HOOK_KINDS[hook]
        register = _make_register(plugins, plugin_name, default_kind, kinds, hook, self.position(plugin_name))
        try:
            function(register=register)
        except Cancelled:
            raise  # a signal while loading is the command's cancellation, never the plugin's failure
        except Exception as exc:
            _cancelled_meanwhile(exc)
            info.error = f"{hook} raised {type(exc).__name__}: {exc}"
            _refuse_whole(plugins, info)

    def position(self, plugin_name: str) -> int:
        """A plugin's place in the load order: the builtins in ``DEFAULT_PLUGINS`` order, then the
        entry points in the order they were registered (whatever was loaded first)."""
        if plugin_name in DEFAULT_PLUGINS:
            return DEFAULT_PLUGINS.index(plugin_name)
        return len(DEFAULT_PLUGINS) + (self.external or []).index(plugin_name)

    # -- plugins -------------------------------------------------------------------------------------
    def _builtin(self, plugins: Plugins, module_name: str) -> ModuleType | None:
        if module_name in plugins.infos:
            return self.modules.get(module_name)
        info = PluginInfo(name=module_name, version=__version__, module=module_name, builtin=True)
        _add_info(plugins, info, self.position(module_name))
        try:
            signal_at(f"plugin:{module_name}")
            module = importlib.import_module(module_name)
        except Cancelled:
            raise  # a signal while loading is the command's cancellation, never the plugin's failure
        except Exception as exc:  # a broken builtin is reported like any plugin
            _cancelled_meanwhile(exc)
            info.error = f"{type(exc).__name__}: {exc}"
            return None
        self.modules[module_name] = module
        return module

    def _register_entry_points(self, plugins: Plugins) -> None:
        """Import every allowed entry-point plugin into a pluggy manager, once (a plugin that fails to
        import, or implements a hook episteme does not define, is refused whole)."""
        if self.external is not None:
            return
        self.external = []
        from episteme_core.kernel.entrypoints import entry_points

        allowed = _allowed_external()
        found = [ep for ep in sorted(entry_points(ENTRY_POINT_GROUP), key=lambda e: e.name)
                 if allowed is None or {ep.name, ep.dist_name, ep.dist_name.replace("_", "-")} & allowed]
        found = [ep for ep in found if ep.name not in DEFAULT_PLUGINS]
        if not found:
            return
        import pluggy

        manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        manager.add_hookspecs(hookspecs)
        plugins.manager = manager
        for ep in found:
            if ep.name in plugins.infos:
                continue
            self.external.append(ep.name)
            info = PluginInfo(name=ep.name, version=ep.dist_version, module=ep.value, builtin=False)
            _add_info(plugins, info, self.position(ep.name))
            try:
                signal_at(f"plugin:{ep.name}")
                module: ModuleType = ep.load()
                manager.register(module, name=ep.name)
            except Cancelled:
                raise
            except Exception as exc:
                _cancelled_meanwhile(exc)
                info.error = f"{type(exc).__name__}: {exc}"
        _drop_invalid(manager, plugins)


def _cancelled_meanwhile(exc: BaseException) -> None:
    """Raise ``Cancelled`` when a signal asked the command to stop while a plugin loaded: code that
    turns exceptions into others (an import that catches ``Exception``) must never make the
    cancellation look like the plugin's failure."""
    signal_name = cancel_requested()
    if signal_name is not None:
        raise Cancelled(signal_name) from exc


def _add_info(plugins: Plugins, info: PluginInfo, position: int) -> None:
    """Record a plugin, keeping ``plugins.infos`` in load order (builtins, then entry points) however
    lazily they came."""
    places = {name: _place(plugins, name) for name in plugins.infos}
    places[info.name] = position
    infos = {**plugins.infos, info.name: info}
    plugins.infos.clear()
    plugins.infos.update(sorted(infos.items(), key=lambda item: places[item[0]]))


def _place(plugins: Plugins, name: str) -> int:
    loading = plugins.loader
    assert isinstance(loading, _Loading)
    return loading.position(name)


def _refuse_whole(plugins: Plugins, info: PluginInfo) -> None:
    """Take every component of a plugin refused whole out of the registry."""
    for kind, names in info.components.items():
        registered = plugins.components.get(kind, {})
        for name in names:
            if name in registered and registered[name].plugin == info.name:
                del registered[name]
    info.components = {}


def _make_register(
    plugins: Plugins, plugin_name: str, default_kind: str, kinds: tuple[str, ...], hook: str, position: int
) -> Callable[..., None]:
    from episteme_core.kernel.contracts import missing_members

    info = plugins.infos[plugin_name]

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
        # the plugin's place, then its registrations of this kind so far (whichever hook ran first)
        sequence = len(info.components.get(kind, []))
        table[name] = Component(kind, name, plugin_name, component, order=(position, sequence))
        names = info.components.setdefault(kind, [])
        names.append(name)
        names.sort()

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


def _drop_invalid(pm: Any, plugins: Plugins) -> None:
    """Unregister (and report) plugins that implement hooks episteme does not define."""
    import pluggy

    while True:
        try:
            pm.check_pending()
            return
        except pluggy.PluginValidationError as exc:
            name = pm.get_name(exc.plugin) or str(exc.plugin)
            pm.unregister(exc.plugin)
            if name in plugins.infos:
                plugins.infos[name].error = f"PluginValidationError: {exc}"


def lazy_plugins() -> Plugins:
    """An empty registry that loads what it is asked for (see the module's docstring)."""
    return Plugins(loader=_Loading())


def load_plugins() -> Plugins:
    """Load builtins and entry-point plugins and collect every component, at once."""
    plugins = lazy_plugins().load_all()
    signal_at("plugins-loaded")
    return plugins


@cache
def get_plugins() -> Plugins:
    """The process-wide plugins: loaded on demand, each hook once."""
    return lazy_plugins()
