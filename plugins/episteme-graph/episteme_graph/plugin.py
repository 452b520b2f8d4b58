"""The plugin module named by the entry point: the ``graph`` command, one exporter per format, and
the MCP tools ``graph_validate``, ``graph_verify`` and ``graph_evidence``.

Cheap to import (every ``episteme`` run imports it): the work lives in modules loaded on use.
"""

from __future__ import annotations

from episteme_core.api import Register, hookimpl


@hookimpl
def episteme_commands(register: Register) -> None:
    from episteme_core.api import Command
    from episteme_graph.commands import DESCRIPTION, configure, run

    register(
        Command(
            name="graph",
            help="validate, verify, merge, export and view .knowledge.json graphs",
            description=DESCRIPTION,
            configure=configure,
            run=run,
        )
    )


@hookimpl
def episteme_exporters(register: Register) -> None:
    from episteme_graph.exporters import EXPORTERS

    for exporter in EXPORTERS:
        register(exporter)


@hookimpl
def episteme_tools(register: Register) -> None:
    from episteme_graph.tools import graph_tools

    for tool in graph_tools():
        register(tool)
