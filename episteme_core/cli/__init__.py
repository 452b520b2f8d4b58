"""The CLI shell: commands parse options, call one library function, and return an Outcome.

Names are imported lazily so that ``episteme --version`` and ``--help`` stay cheap.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from episteme_core.cli.command import Command, Outcome
    from episteme_core.cli.context import Context

__all__ = ["Command", "Context", "Outcome"]


def __getattr__(name: str) -> Any:
    if name in ("Command", "Outcome"):
        from episteme_core.cli import command

        return getattr(command, name)
    if name == "Context":
        from episteme_core.cli.context import Context

        return Context
    raise AttributeError(name)
