"""Per-command executor options (``--jobs``, ``--executor``): where a command's work runs.

Added the way stage options are: ``add_executor_options(parser)`` when the command is configured,
``executor_spec_of(args)`` when it runs (the option, else ``EPISTEME_JOBS``/``EPISTEME_EXECUTOR``,
else a local pool over every core). The library takes the resulting executor as an argument.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from episteme_core.executor.base import ExecutorSpec


def add_executor_options(parser: argparse.ArgumentParser, *, jobs: bool = True) -> None:
    """``--executor`` and, for commands that build (``jobs``), ``--jobs``."""
    if jobs:
        from episteme_core.cli.parser import int_range
        from episteme_core.executor.base import MAX_JOBS, MIN_JOBS

        parser.add_argument(
            "--jobs", type=int_range(MIN_JOBS, MAX_JOBS), default=None, metavar="N",
            help=f"worker processes for the local executor ({MIN_JOBS}-{MAX_JOBS}; default "
                 "$EPISTEME_JOBS, else every core; small work runs in this process unless N is given)",
        )
    parser.add_argument(
        "--executor", metavar="WHERE", default=None,
        help="where the work runs: local, or dask://HOST:PORT for a Dask scheduler (default "
             "$EPISTEME_EXECUTOR, else local)",
    )


def executor_spec_of(args: argparse.Namespace) -> ExecutorSpec:
    """The executor the parsed options (and the environment) ask for; bad values ``INVALID_USAGE``."""
    from episteme_core.executor.base import executor_spec

    return executor_spec(getattr(args, "jobs", None), getattr(args, "executor", None))


__all__ = ["add_executor_options", "executor_spec_of"]
