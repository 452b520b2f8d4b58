"""What a source registered through ``episteme_sources`` looks like."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from episteme_core.cli.command import Outcome
    from episteme_core.cli.context import Context


@runtime_checkable
class Source(Protocol):
    """Any capture source: a name (also the snapshot ``capture_kind`` it writes) and a help line."""

    name: str
    help: str


@runtime_checkable
class IngestSource(Source, Protocol):
    """A source that ``episteme ingest <name>`` runs: it adds its options and does the ingest."""

    def configure(self, parser: argparse.ArgumentParser) -> None: ...

    def ingest(self, args: argparse.Namespace, ctx: Context) -> Outcome: ...
