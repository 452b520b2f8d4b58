"""Per-command stage locations (``--snapshots``, ``--documents``, ``--chunks``, ``--index``).

Callers who keep a stage elsewhere name it per command; the home keeps everything else.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from episteme_core.kernel.context import Context

# option -> (stage, what the option says)
STAGE_OPTIONS = {
    "snapshots": ("snapshots", "the snapshots stage"),
    "documents": ("documents", "the documents stage"),
    "chunks": ("chunks", "the chunks stage"),
    "index": ("shards", "the shards (index) stage"),
}


def add_stage_options(parser: argparse.ArgumentParser, *names: str) -> None:
    """Add ``--NAME DIR`` for each named stage option."""
    for name in names:
        stage, what = STAGE_OPTIONS[name]
        parser.add_argument(f"--{name}", metavar="DIR", default=None,
                            help=f"keep {what} in DIR (default HOME/{stage})")


def apply_stage_options(args: argparse.Namespace, ctx: Context) -> None:
    """Point the home's stages at the directories given on the command line."""
    for name, (stage, _) in STAGE_OPTIONS.items():
        value = getattr(args, name, None)
        if isinstance(value, str) and value:
            ctx.home.stage_overrides[stage] = Path(value).expanduser().absolute()
