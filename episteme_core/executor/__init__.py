"""The executor seam: where a stage's work runs (this process, a pool of local processes, or Dask).

One small protocol, ``Executor``, with two calls:

- ``map(fn, items, work=..., min_work=...)``: ``fn`` over every item, results in item order. A task
  reads what it needs from the store and returns a result or writes content-addressed objects;
  only the command's own process commits, so a commit stays single-writer and atomic.
- ``ask_shards(shards, call, *args)``: ``call(shard, *args)`` on every shard, answers in shard
  order. Locally that is a loop; on Dask each worker holds its shards open (an actor per worker,
  each memory-mapping its shards once) and the query is scattered to them and gathered.

Which executor: ``--executor local|dask://HOST:PORT`` (else ``$EPISTEME_EXECUTOR``, else local) and,
locally, ``--jobs N`` (else ``$EPISTEME_JOBS``, else every core this process may use). The local
executor runs small work in this process (starting workers costs more than it saves); ``--jobs``
or ``EPISTEME_JOBS`` given explicitly uses the workers whenever there are two items or more.
Results never depend on where the work ran: every task is a pure function of its inputs.

This module is cheap to import: the pool (``local``) and Dask (``cluster``) load only when used.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from episteme_core.executor.base import Executor, ExecutorSpec, SerialExecutor


def open_executor(spec: ExecutorSpec | None) -> Executor:
    """The executor ``spec`` names (``None``: this process only); close it when the command ends."""
    if spec is None or (spec.kind == "local" and spec.jobs <= 1):
        return SerialExecutor()
    if spec.kind == "local":
        from episteme_core.executor.local import LocalExecutor

        return LocalExecutor(spec.jobs, explicit=spec.explicit)
    from episteme_core.executor.cluster import DaskExecutor

    assert spec.address is not None
    return DaskExecutor(spec.address)


@contextlib.contextmanager
def running(spec: ExecutorSpec | None) -> Iterator[Executor]:
    """``open_executor(spec)`` for the block, closed at its end (workers stopped even on a signal)."""
    executor = open_executor(spec)
    try:
        yield executor
    finally:
        executor.close()
