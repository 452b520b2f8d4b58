"""The kernel's own plugins, registered exactly as external plugins are.

Each module implements hooks from ``episteme_core.hookspecs``; the registry loads them by name, in
the order of ``kernel.registry.DEFAULT_PLUGINS`` (a new builtin is a new module and one line there).
"""
