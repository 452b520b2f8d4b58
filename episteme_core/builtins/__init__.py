"""The kernel's own plugins, registered exactly as external plugins are.

Each module listed here implements hooks from ``episteme_core.hookspecs``. Later steps add their
builtins (sources, extractors, chunkers, indexers, readers) as new modules and one line here.
"""

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
)
