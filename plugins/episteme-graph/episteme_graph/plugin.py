"""The plugin module named by the entry point: the ``graph`` command and one exporter per format.

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
