"""The Dask executor (``--executor dask://HOST:PORT``): a stage's tasks and a query's shards on a Dask
cluster, for a corpus larger than one machine.

Dask (``distributed``, the optional extra ``episteme-core[dask]``) is imported only here, only when a
command names a scheduler. On connect the scheduler, every worker and this process must run the
same Python, Dask and episteme versions (a worker with another episteme could write other bytes).
Every worker must see the home at the same path (a shared file system): tasks read committed
stages there and write content-addressed objects, made durable before the task returns; only
this process commits. Shards are pinned to workers: one actor per worker opens its shards once,
memory-mapped, and answers every query scattered to it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol, TypeVar

import attrs

from episteme_core.errors import EpistemeError
from episteme_core.executor.worker import Batch, Failure, pack, run_packed, unpack

T = TypeVar("T")
R = TypeVar("R")

CONNECT_SECONDS = 10  # how long connecting waits for the scheduler and a worker (EPISTEME_DASK_TIMEOUT)
TIMEOUT_ENV = "EPISTEME_DASK_TIMEOUT"
MAX_CONNECT_SECONDS = 600
# What must match between this process, the scheduler and every worker.
SAME_VERSIONS = ("python", "dask", "distributed", "cloudpickle", "msgpack", "episteme_core")
AHEAD = 3
POLL_SECONDS = 1.0  # how often a wait for a task checks that the scheduler and a worker are still there
PROBE_SECONDS = 1.0  # how long that check waits for the scheduler's answer before counting it as silent
FETCH_SECONDS = 30.0  # the longest wait between checks while a finished task's result is fetched


def _unavailable(address: str, exc: BaseException) -> EpistemeError:
    return EpistemeError(
        "SOURCE_UNAVAILABLE", f"cannot reach the Dask scheduler at {address}: {exc or type(exc).__name__}",
        details={"scheduler": address},
        hint="start one (dask scheduler; dask worker tcp://HOST:PORT) or run with --executor local",
    )


def _lost(address: str, task: str, exc: BaseException | str) -> EpistemeError:
    return EpistemeError(
        "SOURCE_UNAVAILABLE", f"the Dask cluster at {address} was lost while it ran task {task}: "
        f"{exc if isinstance(exc, str) else (str(exc) or type(exc).__name__)}",
        details={"scheduler": address, "task": task},
        hint="run again once the scheduler and its workers are up, or run with --executor local",
    )


def connect(address: str) -> Any:
    """A ``distributed.Client`` on ``address`` whose cluster runs our versions; ``SOURCE_UNAVAILABLE``
    when the scheduler cannot be reached, ``INVALID_INPUT`` naming the worker whose versions differ."""
    try:
        from distributed import Client as make_client
    except ImportError as exc:
        raise EpistemeError(
            "INVALID_USAGE", "--executor dask://... needs Dask: pip install 'episteme-core[dask]'",
            details={"scheduler": address},
        ) from exc
    Client: Any = make_client  # noqa: N806 (distributed's API is not typed strictly)
    seconds = connect_seconds()
    try:
        client: Any = Client(address, timeout=seconds, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise _unavailable(address, exc) from exc
    try:
        check_versions(client.get_versions(packages=["episteme_core"]), address)
        if not client.scheduler_info().get("workers"):
            client.wait_for_workers(1, timeout=seconds)
    except EpistemeError:
        client.close()
        raise
    except (OSError, TimeoutError) as exc:
        client.close()
        raise _unavailable(address, exc) from exc
    return client


def connect_seconds() -> int:
    """``EPISTEME_DASK_TIMEOUT`` (whole seconds, 1-600), else ``CONNECT_SECONDS``."""
    import os

    value = os.environ.get(TIMEOUT_ENV, "").strip()
    if not value:
        return CONNECT_SECONDS
    if not value.isdigit() or not 1 <= int(value) <= MAX_CONNECT_SECONDS:
        raise EpistemeError("INVALID_USAGE",
                            f"{TIMEOUT_ENV} must be whole seconds in 1–{MAX_CONNECT_SECONDS}, not {value!r}",
                            details={"value": value})
    return int(value)


def check_versions(versions: dict[str, Any], address: str) -> None:
    """Refuse a cluster whose scheduler or any worker runs other versions than this process."""
    ours = {name: versions["client"]["packages"].get(name) for name in SAME_VERSIONS}
    others = {"scheduler": versions.get("scheduler") or {}, **(versions.get("workers") or {})}
    for who, info in sorted(others.items()):
        theirs = {name: (info.get("packages") or {}).get(name) for name in SAME_VERSIONS}
        differ = {name: {"here": ours[name], "there": theirs[name]}
                  for name in SAME_VERSIONS if theirs[name] != ours[name] and
                  not (who == "scheduler" and name == "episteme_core")}
        if differ:
            node = "scheduler" if who == "scheduler" else f"worker {who}"
            listed = ", ".join(f"{name} {v['there']} (here {v['here']})" for name, v in differ.items())
            raise EpistemeError(
                "INVALID_INPUT", f"the Dask {node} at {address} runs other versions: {listed}",
                details={"scheduler": address, "node": who, "versions": differ},
                hint="install the same versions of Python, Dask and episteme-core on every node",
            )


class ShardTicket(Protocol):
    """How a worker opens a shard itself instead of receiving it pickled: what a shard's ``travel()``
    returns (hashable and picklable, so each worker opens each shard once). An indexer's shards offer
    it when they live in files every worker can read (the bm25 shards); ``open()`` opens it there."""

    def open(self) -> Any: ...


@attrs.frozen
class _Ticketed:
    """A shard sent as its ticket (as opposed to a shard sent whole, pickled)."""

    ticket: Any


_OPEN: dict[Any, Any] = {}  # in a worker: every shard it opened from a ticket, opened once


def open_travelled(sent: Any) -> Any:
    """The shard ``sent`` stands for: opened once per worker process from its ticket, or, when it
    travelled pickled, the shard itself."""
    if not isinstance(sent, _Ticketed):
        return sent
    shard = _OPEN.get(sent.ticket)
    if shard is None:
        shard = sent.ticket.open()
        _OPEN[sent.ticket] = shard
    return shard


def travelling(shard: Any) -> Any | None:
    """What is sent to a worker for ``shard``: its ticket (``shard.travel()``, when it offers one), the
    shard itself when it pickles, else None (it is asked in this process)."""
    travel = getattr(shard, "travel", None)
    ticket = travel() if callable(travel) else None
    if ticket is not None:
        return _Ticketed(ticket)
    from episteme_core.executor.local import portable

    return shard if portable(shard) else None


class ShardHost:
    """A Dask actor pinned to one worker: holds its shards open and answers calls on each. What it is
    sent travels as bytes (``worker.pack``), so a shard or a call it cannot load comes back as a
    ``Failure`` instead of breaking the worker's connection."""

    def __init__(self, task: str, payload: bytes) -> None:
        self.failure: Failure | None = None
        self.shards: list[Any] = []
        unpacked = unpack(task, payload)
        if isinstance(unpacked, Failure):
            self.failure = unpacked
            return
        _, (specs,) = unpacked
        try:
            self.shards = [open_travelled(spec) for spec in specs]
        except EpistemeError as error:
            self.failure = Failure.of(error)
        except Exception as exc:
            self.failure = Failure.internal(task, "could not open its shards", exc)

    def call(self, task: str, payload: bytes) -> Batch:
        """``fn(shard, *args)`` for each of this worker's shards, in order (``payload`` is
        ``pack(fn, args)``)."""
        from episteme_core.executor.worker import run_batch

        if self.failure is not None:
            return Batch([], self.failure)
        unpacked = unpack(task, payload)
        if isinstance(unpacked, Failure):
            return Batch([], unpacked)
        fn, (args,) = unpacked
        return run_batch(lambda shard: fn(shard, *args), self.shards, False, contain=True, task=task)


class DaskExecutor:
    """Tasks and shards on the Dask cluster at ``address``."""

    remote = True  # a query's shards are fanned out to the workers (``executor.fanout``)

    def __init__(self, address: str) -> None:
        self.address = address
        self.name = f"dask://{address.removeprefix('tcp://')}"
        self.client = connect(address)
        workers = self.client.scheduler_info().get("workers") or {}
        self.workers = max(1, sum(int(w.get("nthreads", 1)) for w in workers.values()))
        self._hosts: dict[tuple[Any, ...], list[tuple[Any, list[int]]]] = {}
        self.patience = connect_seconds()

    def map(self, fn: Callable[[T], R], items: Sequence[T], *, work: Callable[[T], int] | None = None,
            min_work: int = 0) -> Iterator[R]:
        from episteme_core.executor.base import batches

        items = list(items)
        if not items:
            return iter(())
        return self._map(fn, batches(items, self.workers, work))

    def _map(self, fn: Callable[[T], R], batches: list[list[T]]) -> Iterator[R]:
        import collections

        from episteme_core.executor.worker import task_name

        task = task_name(fn)
        pending: collections.deque[Any] = collections.deque()
        queue = iter(batches)
        try:
            for batch in queue:
                pending.append(self._submit(fn, batch))
                if len(pending) >= self.workers * AHEAD:
                    break
            while pending:
                done: Batch = self._result(pending.popleft(), task)
                following = next(queue, None)
                if following is not None:
                    pending.append(self._submit(fn, following))
                yield from done.results
                if done.failure is not None:
                    raise done.failure.error()
        finally:
            for future in pending:
                future.cancel()

    def _submit(self, fn: Callable[[T], R], batch: list[T]) -> Any:
        import uuid

        task, payload = pack(fn, batch)
        key = f"episteme-{task.rpartition('.')[2]}-{uuid.uuid4().hex}"
        return self.client.submit(run_packed, task, payload, key=key, pure=False)

    def _result(self, future: Any, task: str) -> Any:
        """What ``future`` (a task's or an actor call's) returns, waiting while the scheduler and at
        least one worker answer: a cluster lost for ``EPISTEME_DASK_TIMEOUT`` seconds, a worker that
        died running the task (Dask retries it on others first) or a scheduler that cancelled it is
        ``SOURCE_UNAVAILABLE``; any other error there is ``INTERNAL_ERROR`` naming the task."""
        import asyncio
        import concurrent.futures
        import time

        lost_since: float | None = None
        wait = POLL_SECONDS
        while True:
            try:
                return future.result(timeout=wait)
            except TimeoutError as exc:
                if future.done():  # finished, its result still on its way (a large batch, a busy
                    wait = min(2 * wait, FETCH_SECONDS)  # machine): not lost, wait longer next time
                problem = self._problem()
                if problem is None:
                    lost_since = None
                    continue
                lost_since = time.monotonic() if lost_since is None else lost_since
                if time.monotonic() - lost_since >= self.patience:
                    raise _lost(self.address, task, problem) from exc
            except EpistemeError:
                raise
            except (OSError, asyncio.CancelledError, concurrent.futures.CancelledError) as exc:
                raise _lost(self.address, task, exc) from exc
            except Exception as exc:
                if type(exc).__name__ == "KilledWorker":
                    raise _lost(self.address, task, f"every worker that ran it died ({exc})") from exc
                raise Failure.internal(task, "failed", exc).error() from exc

    def _problem(self) -> str | None:
        """Why the cluster cannot run a task now (no scheduler, no worker), or None."""
        status = getattr(self.client, "status", "running")
        if status != "running":
            return f"the connection to the scheduler is {status}"
        try:
            workers = self.client.sync(self.client.scheduler.ncores, callback_timeout=PROBE_SECONDS)
        except Exception as exc:  # the scheduler does not answer
            return f"the scheduler does not answer ({type(exc).__name__}: {exc})"
        return None if workers else "the cluster has no worker"

    def ask_shards(self, shards: Sequence[Any], call: Callable[..., R], *args: Any) -> list[R]:
        """``call(shard, *args)`` on every shard, each on the worker holding it (scattered at once,
        gathered in shard order); a shard that cannot travel is asked in this process."""
        from episteme_core.executor.worker import task_name

        sent = [travelling(shard) for shard in shards]
        remote = [number for number, spec in enumerate(sent) if spec is not None]
        task, payload = pack(call, args)
        try:
            with self.client.as_current():  # an actor's handle talks through the current client
                hosts = self._pinned([sent[number] for number in remote]) if remote else []
                asked = [(host.call(task, payload), [remote[row] for row in rows]) for host, rows in hosts]
                return self._gathered(shards, sent, asked, call, args, task_name(call))
        except BaseException:
            self._hosts.clear()  # a lost or failed actor is made again on the next call
            raise

    def _gathered(self, shards: Sequence[Any], sent: list[Any], asked: list[tuple[Any, list[int]]],
                  call: Callable[..., R], args: tuple[Any, ...], task: str) -> list[R]:
        """The answers in shard order: the workers' as they come back, the rest asked here."""
        answers: list[Any] = [None] * len(shards)
        for number, spec in enumerate(sent):
            if spec is None:
                answers[number] = call(shards[number], *args)
        for future, rows in asked:
            batch: Batch = self._result(future, task)
            if batch.failure is not None:
                raise batch.failure.error()
            for row, answer in zip(rows, batch.results, strict=True):
                answers[row] = answer
        return answers

    def _pinned(self, specs: list[Any]) -> list[tuple[Any, list[int]]]:
        """One actor per worker holding its share of ``specs`` (shard i on worker i mod N, workers in
        address order); made once per set of shards, kept while the same set is asked again."""
        key = tuple(spec if isinstance(spec, _Ticketed) else id(spec) for spec in specs)
        hosts = self._hosts.get(key)
        if hosts is None:
            workers = sorted(self.client.scheduler_info().get("workers") or {})
            if not workers:
                raise _unavailable(self.address, RuntimeError("the cluster has no worker"))
            shares: dict[str, list[int]] = {}
            for number in range(len(specs)):
                shares.setdefault(workers[number % len(workers)], []).append(number)
            hosts = []
            for worker, rows in sorted(shares.items()):
                task, payload = pack(ShardHost, [specs[r] for r in rows])
                future = self.client.submit(ShardHost, task, payload, actor=True,
                                            workers=[worker], allow_other_workers=False, pure=False)
                hosts.append((self._result(future, "ShardHost"), rows))
            self._hosts = {key: hosts}  # a new commit's shards replace the old set
        return hosts

    def close(self) -> None:
        self._hosts.clear()
        self.client.close()


__all__ = ["DaskExecutor", "ShardHost", "ShardTicket", "check_versions", "connect", "open_travelled",
           "travelling"]
