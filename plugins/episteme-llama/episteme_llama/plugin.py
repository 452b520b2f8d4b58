"""The plugin module named by the entry point: the ``llama`` reader kind and the ``reader`` command.

Nothing heavy is imported here (this module loads at every ``episteme`` start): llama.cpp loads
when a llama reader is opened.
"""

from __future__ import annotations

from episteme_core.api import Register, hookimpl


@hookimpl
def episteme_readers(register: Register) -> None:
    from episteme_llama.kind import LlamaKind

    register(LlamaKind())


@hookimpl
def episteme_commands(register: Register) -> None:
    from episteme_llama.cli import reader_command

    register(reader_command())
