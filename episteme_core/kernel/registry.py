"""The registry: every loaded plugin and the components it registered, looked up by kind and name.

``kernel.loader`` fills it (``load_plugins``); commands and library code look components up here
(``get``, ``all``) and ``episteme plugins`` lists it, refusals and load failures included.
"""

from __future__ import annotations

from typing import Any

import attrs
import pluggy

from episteme_core.errors import EpistemeError


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


@attrs.define
class Plugins:
    """The loaded plugins and the registry of their components."""

    manager: pluggy.PluginManager
    infos: dict[str, PluginInfo] = attrs.field(factory=dict)
    components: dict[str, dict[str, Component]] = attrs.field(factory=dict)
    clashes: set[tuple[str, str]] = attrs.field(factory=set)  # (kind, name) two plugins claimed

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


