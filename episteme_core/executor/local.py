"""The local executor: a pool of worker processes on this machine (``--jobs N``, default every core).

Workers come from a fork server (``multiprocessing``'s ``forkserver``): a clean process that
imported the kernel once, so a worker starts in milliseconds yet inherits none of the command's
open files (the writer lock above all: a worker must never keep a dead command's lock alive).
Tasks go out in batches, at most a few per worker ahead, and come back in item order. Work below
the stage's threshold runs in this process unless the user asked for jobs explicitly. On an error,
a cancellation or a signal the workers are stopped at once (``close``), before the caller sweeps
the temp files they may have left.
"""

from __future__ import annotations

import collections
import pickle
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from episteme_core.executor.worker import Batch, run_batch

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

T = TypeVar("T")
R = TypeVar("R")

AHEAD = 3  # batches in flight per worker
PRELOAD = ["episteme_core.executor.worker", "episteme_core.store.commits", "episteme_core.records.canonical"]


def portable(*objects: Any) -> bool:
    """True when ``objects`` can be sent to a worker process (pickled); a component defined inside
    a function cannot, and its stage then runs in this process."""
    try:
        pickle.dumps(objects)
    except Exception:
        return False
    return True


class LocalExecutor:
    """A pool of ``jobs`` worker processes, started on first use and stopped by ``close``."""

    name = "local"

    def __init__(self, jobs: int, *, explicit: bool = False) -> None:
        self.workers = jobs
        self.explicit = explicit
        self._pool: ProcessPoolExecutor | None = None

    # map ---------------------------------------------------------------------------------------

    def map(self, fn: Callable[[T], R], items: Sequence[T], *, work: Callable[[T], int] | None = None,
            min_work: int = 0) -> Iterator[R]:
        items = list(items)
        if not self._parallel(items, work, min_work) or not portable(fn):
            return (fn(item) for item in items)
        return self._map(fn, items, work)

    def _parallel(self, items: Sequence[Any], work: Callable[[Any], int] | None, min_work: int) -> bool:
        if self.workers < 2 or len(items) < 2:
            return False
        if self.explicit:
            return True
        from episteme_core.executor.base import total

        return total(items, work) >= min_work

    def _map(self, fn: Callable[[T], R], items: list[T], work: Callable[[T], int] | None) -> Iterator[R]:
        from episteme_core.executor.base import batches as cut
        from episteme_core.store.atomic import syncing_later

        batches = cut(items, self.workers, work)
        sync = not syncing_later()  # the command flushes what its workers wrote only inside its batch
        pool = self._start()
        pending: collections.deque[Future[Batch]] = collections.deque()
        queue = iter(batches)
        try:
            for batch in queue:
                pending.append(pool.submit(run_batch, fn, batch, sync))
                if len(pending) >= self.workers * AHEAD:
                    break
            while pending:
                done = _result(pending.popleft())
                following = next(queue, None)
                if following is not None:
                    pending.append(pool.submit(run_batch, fn, following, sync))
                yield from done.results
                if done.failure is not None:
                    raise done.failure.error()
        except BaseException:
            self.kill()  # stop every worker now: an error, a cancellation, a signal
            raise

    def _start(self) -> ProcessPoolExecutor:
        if self._pool is None:
            import multiprocessing
            import os
            from concurrent.futures import ProcessPoolExecutor

            from episteme_core.executor.worker import start, worker_start

            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(PRELOAD)
            self._pool = ProcessPoolExecutor(self.workers, mp_context=context, initializer=start,
                                             initargs=(worker_start(os.getpid()),))
        return self._pool

    # shards ------------------------------------------------------------------------------------

    def ask_shards(self, shards: Sequence[Any], call: Callable[..., R], *args: Any) -> list[R]:
        """Every shard in this process: a query is far smaller than starting a worker."""
        return [call(shard, *args) for shard in shards]

    def cpu_seconds(self) -> float | None:
        """CPU seconds the running workers used so far (Linux ``/proc``; None elsewhere): what a
        benchmark adds to the command's own to judge the use of the cores."""
        import os

        pool = self._pool
        if pool is None:
            return 0.0
        total = 0.0
        ticks = os.sysconf("SC_CLK_TCK")
        for pid in list(getattr(pool, "_processes", None) or {}):
            try:
                with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except OSError:
                return None
            total += (int(fields[11]) + int(fields[12])) / ticks
        return total

    # close -------------------------------------------------------------------------------------

    def close(self) -> None:
        """Let idle workers exit (a run that ended without a pending task)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
            _forget_faults()

    def kill(self) -> None:
        """Stop every worker at once (SIGTERM), whatever it is doing, and wait until they are gone."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        found = getattr(pool, "_processes", None) or {}  # no public way before Python 3.14
        processes = list(found.values())
        for process in processes:
            if process.is_alive():
                process.terminate()
        pool.shutdown(wait=True, cancel_futures=True)
        for process in processes:
            process.join(timeout=10)
        _forget_faults()


def _result(future: Future[Batch]) -> Batch:
    """A batch's results; a worker that died (killed, out of memory) is ``PROCESSING_FAILED``."""
    from concurrent.futures.process import BrokenProcessPool

    from episteme_core.errors import EpistemeError

    try:
        return future.result()
    except BrokenProcessPool as exc:
        raise EpistemeError(
            "PROCESSING_FAILED", "a worker process died before it finished its work",
            hint="run again; --jobs 1 runs everything in the command's own process",
        ) from exc


def _forget_faults() -> None:
    from episteme_core.store import faults

    faults.unshare()


__all__ = ["LocalExecutor", "portable"]
