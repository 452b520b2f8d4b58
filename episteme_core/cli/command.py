"""What a command is (registered through ``episteme_commands``) and what it returns."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from episteme_core.cli.context import Context


@attrs.frozen
class Outcome:
    """A command's result: ``data`` for the envelope, ``text`` for people."""

    data: dict[str, Any]
    text: str = ""


@attrs.frozen
class Command:
    """A CLI subcommand. ``configure`` adds options; ``run`` does the work and returns an Outcome."""

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, Context], Outcome]
    description: str | None = None
