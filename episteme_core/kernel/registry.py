"""The registry: every loaded plugin and the components it registered, looked up by kind and name.

``kernel.loader`` fills it (``load_plugins``: everything at once; ``get_plugins``: the process's
registry, filled as it is asked); commands and library code look components up here (``get``,
``all``, ``of``) and ``episteme plugins`` lists it, refusals and load failures included.
"""

from __future__ import annotations

from typing import Any, Protocol

import attrs

from episteme_core.errors import EpistemeError


@attrs.frozen
class Component:
    """A named component and the plugin that registered it."""

    kind: str
    name: str
    plugin: str
    obj: Any
    order: tuple[int, int] = (0, 0)  # (plugin's load position, its registrations of this kind before)


@attrs.frozen
class Refusal:
    """A component the registry refused: its kind, its name (if it had one) and why.

    ``missing`` lists the contract's members it lacks (empty when it was refused for another
    reason: a kind its hook does not take, a name another plugin registered too); ``reason`` says it
    in words."""

    kind: str
    name: str | None
    missing: list[str] = attrs.field(factory=list)
    reason: str = ""

    @property
    def message(self) -> str:
        article = "an" if self.kind[:1] in tuple("aeiou") else "a"
        named = f"{self.kind} {self.name!r}" if self.name else f"{article} {self.kind} without a name"
        if self.missing:
            return f"{named}, which lacks {', '.join(self.missing)}"
        return f"{named}: {self.reason}"


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


class Loader(Protocol):
    """What fills a registry on demand (``kernel.loader``): one component, one kind, or everything."""

    def load_component(self, plugins: Plugins, kind: str, name: str) -> None: ...

    def load_kind(self, plugins: Plugins, kind: str) -> None: ...

    def load_all(self, plugins: Plugins) -> None: ...


@attrs.define
class Plugins:
    """The loaded plugins and the registry of their components.

    With a ``loader``, components are loaded as they are asked for: ``get`` loads the one builtin
    that holds the name (a plugin can never take a builtin's name), else the kind; ``all`` and
    ``of`` load the kind; ``load_all`` everything (``episteme plugins``, ``--help``). Failures,
    refusals and warnings are those of what was loaded. ``components`` is what is loaded so far."""

    manager: Any = None  # the pluggy manager of the entry-point plugins, once they are loaded
    infos: dict[str, PluginInfo] = attrs.field(factory=dict)
    components: dict[str, dict[str, Component]] = attrs.field(factory=dict)
    clashes: set[tuple[str, str]] = attrs.field(factory=set)  # (kind, name) two plugins claimed
    loader: Loader | None = None

    def get(self, kind: str, name: str) -> Any:
        """The component ``name`` of ``kind``, or ``INVALID_INPUT`` listing what exists."""
        found = self.find(kind, name)
        if found is None:
            known = ", ".join(sorted(self.of(kind))) or "none"
            raise EpistemeError(
                "INVALID_INPUT",
                f"unknown {kind} {name!r} (known: {known})",
                details={"kind": kind, "name": name},
            )
        return found

    def find(self, kind: str, name: str) -> Any | None:
        """The component ``name`` of ``kind``, or None."""
        if self.loader is not None and name not in self.components.get(kind, {}):
            self.loader.load_component(self, kind, name)
        component = self.components.get(kind, {}).get(name)
        return component.obj if component is not None else None

    def of(self, kind: str) -> dict[str, Component]:
        """Every registered component of ``kind`` by name (the kind loaded whole first)."""
        if self.loader is not None:
            self.loader.load_kind(self, kind)
        return self.components.get(kind, {})

    def all(self, kind: str) -> list[Any]:
        """Every component of ``kind`` in registration order: builtins, then plugins in entry-point
        order, each plugin's components in the order it registered them."""
        found = self.of(kind).values()
        return [component.obj for component in sorted(found, key=lambda c: c.order)]

    def load_all(self) -> Plugins:
        """Every plugin and every component loaded (what ``episteme plugins`` lists)."""
        if self.loader is not None:
            self.loader.load_all(self)
        return self

    def failures(self) -> list[PluginInfo]:
        """Plugins refused whole: they failed to import, declared a hook episteme lacks, or a hook of
        theirs raised (none of their components is registered)."""
        return [info for info in self.infos.values() if info.error]

    def refusals(self) -> list[tuple[str, Refusal]]:
        """Every refused component with the plugin that offered it."""
        return [(info.name, refusal) for info in self.infos.values() for refusal in info.refused]

    def warnings(self) -> list[dict[str, Any]]:
        """What every command reports about the plugins: ``PLUGIN_FAILED`` for each plugin refused
        whole, ``COMPONENT_REFUSED`` for each component refused, each naming the plugin."""
        found: list[dict[str, Any]] = [
            {"code": "PLUGIN_FAILED", "message": f"plugin {info.name} failed to load: {info.error}",
             "plugin": info.name}
            for info in self.failures()
        ]
        found += [
            {"code": "COMPONENT_REFUSED", "message": f"plugin {plugin}: refused {refusal.message}",
             "plugin": plugin, "kind": refusal.kind, "name": refusal.name}
            for plugin, refusal in self.refusals()
        ]
        return found


