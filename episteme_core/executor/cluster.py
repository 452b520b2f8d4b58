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
from typing import Any, TypeVar

import attrs

from episteme_core.errors import EpistemeError
from episteme_core.executor.worker import Batch, run_batch

T = TypeVar("T")
R = TypeVar("R")

CONNECT_SECONDS = 10  # how long connecting waits for the scheduler and a worker (EPISTEME_DASK_TIMEOUT)
TIMEOUT_ENV = "EPISTEME_DASK_TIMEOUT"
MAX_CONNECT_SECONDS = 600
# What must match between this process, the scheduler and every worker.
SAME_VERSIONS = ("python", "dask", "distributed", "cloudpickle", "msgpack", "episteme_core")
AHEAD = 3


def _unavailable(address: str, exc: BaseException) -> EpistemeError:
    return EpistemeError(
        "SOURCE_UNAVAILABLE", f"cannot reach the Dask scheduler at {address}: {exc or type(exc).__name__}",
        details={"scheduler": address},
        hint="start one (dask scheduler; dask worker tcp://HOST:PORT) or run with --executor local",
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


@attrs.frozen
class ShardSpec:
    """How a worker opens one bm25 shard: its file (the same path on every worker), the sha256 of its
    header and its deleted rows, as the stage index records them."""

    path: str
    name: str
    source: str
    size: int
    header_sha256: str
    deleted: tuple[int, ...]

    @classmethod
    def of(cls, shard: Any) -> ShardSpec | None:
        """The spec of a bm25 ``Shard`` mapped from a file; None for any other shard (a shard of an
        index file lives in the command's memory; another indexer's travels pickled, if it can)."""
        import mmap
        import struct

        from episteme_core.index.shardfile import MAGIC, header_sha256
        from episteme_core.index.shards import Shard

        mapped = getattr(getattr(shard, "file", None), "_map", None)
        if type(shard) is not Shard or not isinstance(mapped, mmap.mmap):
            return None
        (length,) = struct.unpack_from("<Q", mapped, len(MAGIC))
        return cls(str(shard.file.path), shard.name, shard.source, len(mapped),
                   header_sha256(mapped[: len(MAGIC) + 8 + length]), tuple(sorted(shard.deleted)))


_OPEN: dict[ShardSpec, Any] = {}  # in a worker: every shard it opened, mapped once


def open_spec(spec: ShardSpec | Any) -> Any:
    """The shard ``spec`` names, opened once per worker process (memory-mapped, header verified); a
    shard that travelled pickled is used as it is."""
    if not isinstance(spec, ShardSpec):
        return spec
    shard = _OPEN.get(spec)
    if shard is None:
        from pathlib import Path

        from episteme_core.index.shards import Shard

        shard = Shard(Path(spec.path), name=spec.name, source=spec.source, size=spec.size,
                      header_sha256=spec.header_sha256, deleted=spec.deleted)
        _OPEN[spec] = shard
    return shard


def travelling(shard: Any) -> ShardSpec | Any | None:
    """What is sent to a worker for ``shard``: its spec, the shard itself when it pickles, else None
    (it is asked in this process)."""
    spec = ShardSpec.of(shard)
    if spec is not None:
        return spec
    from episteme_core.executor.local import portable

    return shard if portable(shard) else None


class ShardHost:
    """A Dask actor pinned to one worker: holds its shards open and answers calls on each."""

    def __init__(self, specs: list[Any]) -> None:
        self.shards = [open_spec(spec) for spec in specs]

    def call(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> list[Any]:
        """``fn(shard, *args)`` for each of this worker's shards, in order."""
        return [fn(shard, *args) for shard in self.shards]


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

    def map(self, fn: Callable[[T], R], items: Sequence[T], *, work: Callable[[T], int] | None = None,
            min_work: int = 0) -> Iterator[R]:
        from episteme_core.executor import chunked

        items = list(items)
        if not items:
            return iter(())
        size = max(1, -(-len(items) // (self.workers * 8)))
        return self._map(fn, chunked(items, size))

    def _map(self, fn: Callable[[T], R], batches: list[list[T]]) -> Iterator[R]:
        import collections

        pending: collections.deque[Any] = collections.deque()
        queue = iter(batches)
        try:
            for batch in queue:
                pending.append(self.client.submit(run_batch, fn, batch, True, pure=False))
                if len(pending) >= self.workers * AHEAD:
                    break
            while pending:
                done: Batch = self._result(pending.popleft())
                following = next(queue, None)
                if following is not None:
                    pending.append(self.client.submit(run_batch, fn, following, True, pure=False))
                yield from done.results
                if done.failure is not None:
                    raise done.failure.error()
        finally:
            for future in pending:
                future.cancel()

    def _result(self, future: Any) -> Any:
        try:
            return future.result()
        except (OSError, TimeoutError) as exc:
            raise _unavailable(self.address, exc) from exc

    def ask_shards(self, shards: Sequence[Any], call: Callable[..., R], *args: Any) -> list[R]:
        """``call(shard, *args)`` on every shard, each on the worker holding it (scattered at once,
        gathered in shard order); a shard that cannot travel is asked in this process."""
        sent = [travelling(shard) for shard in shards]
        remote = [number for number, spec in enumerate(sent) if spec is not None]
        with self.client.as_current():  # an actor's handle talks through the current client
            hosts = self._pinned([sent[number] for number in remote]) if remote else []
            asked = [(host.call(call, args), [remote[row] for row in rows]) for host, rows in hosts]
            return self._gathered(shards, sent, asked, call, args)

    def _gathered(self, shards: Sequence[Any], sent: list[Any], asked: list[tuple[Any, list[int]]],
                  call: Callable[..., R], args: tuple[Any, ...]) -> list[R]:
        """The answers in shard order: the workers' as they come back, the rest asked here."""
        answers: list[Any] = [None] * len(shards)
        for number, spec in enumerate(sent):
            if spec is None:
                answers[number] = call(shards[number], *args)
        for future, rows in asked:
            try:
                for row, answer in zip(rows, future.result(), strict=True):
                    answers[row] = answer
            except (OSError, TimeoutError) as exc:
                raise _unavailable(self.address, exc) from exc
        return answers

    def _pinned(self, specs: list[Any]) -> list[tuple[Any, list[int]]]:
        """One actor per worker holding its share of ``specs`` (shard i on worker i mod N, workers in
        address order); made once per set of shards, kept while the same set is asked again."""
        key = tuple(id(spec) if not isinstance(spec, ShardSpec) else spec for spec in specs)
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
                future = self.client.submit(ShardHost, [specs[r] for r in rows], actor=True,
                                            workers=[worker], allow_other_workers=False, pure=False)
                hosts.append((self._result(future), rows))
            self._hosts = {key: hosts}  # a new commit's shards replace the old set
        return hosts

    def close(self) -> None:
        self._hosts.clear()
        self.client.close()


__all__ = ["DaskExecutor", "ShardHost", "ShardSpec", "check_versions", "connect", "open_spec", "travelling"]
