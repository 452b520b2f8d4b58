"""What every executor shares: the ``Executor`` protocol, the spec a command asks for, the serial
executor, cleanup on a signal, and how a map is cut into batches.

``executor`` (the package) opens the executor a spec names; ``local`` and ``cluster`` are the two
kinds besides the serial one. Cheap to import: nothing here starts a process.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import attrs

from episteme_core.errors import EpistemeError

if TYPE_CHECKING:
    from episteme_core.store.home import Home

T = TypeVar("T")
R = TypeVar("R")

MIN_JOBS, MAX_JOBS = 1, 1024
DASK_SCHEME = "dask://"
JOBS_ENV = "EPISTEME_JOBS"
EXECUTOR_ENV = "EPISTEME_EXECUTOR"


class Executor(Protocol):
    """Where a stage's tasks run. ``name`` is ``local`` or the scheduler's address; ``workers`` how
    many tasks may run at once."""

    name: str
    workers: int

    def map(self, fn: Callable[[T], R], items: Sequence[T], *, work: Callable[[T], int] | None = None,
            min_work: int = 0) -> Iterator[R]:
        """``fn(item)`` for every item, yielded in item order. ``work(item)`` estimates an item's cost
        (bytes, chunks); below ``min_work`` in all, a local executor chosen by default runs the
        items in this process. An error raised by ``fn`` is raised here, at its item."""
        ...

    def ask_shards(self, shards: Sequence[Any], call: Callable[..., R], *args: Any) -> list[R]:
        """``call(shard, *args)`` for every shard of ``shards``, answers in their order."""
        ...

    def close(self) -> None:
        """Stop the workers (idempotent); a cancelled run calls it before it sweeps temp files."""
        ...


@attrs.frozen
class ExecutorSpec:
    """Which executor a command asked for: ``local`` with ``jobs`` processes (``explicit`` when the
    user set them, so small work is spread too), or ``dask`` at ``address`` (``tcp://HOST:PORT``)."""

    kind: str = "local"
    jobs: int = 1
    explicit: bool = False
    address: str | None = None

    @property
    def label(self) -> str:
        return f"{DASK_SCHEME}{self.address.removeprefix('tcp://')}" if self.address else "local"


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _jobs(value: str, where: str) -> int:
    try:
        jobs = int(value.strip(), 10)
    except ValueError:
        jobs = 0
    if not MIN_JOBS <= jobs <= MAX_JOBS:
        raise EpistemeError(
            "INVALID_USAGE", f"{where} must be an integer in {MIN_JOBS}–{MAX_JOBS}, not {value!r}",
            details={"value": value}, hint=f"for example {where.split()[0]} 4",
        )
    return jobs


def _address(value: str, where: str) -> str:
    """``dask://HOST:PORT`` as the scheduler address ``tcp://HOST:PORT``; anything else INVALID_USAGE."""
    rest = value[len(DASK_SCHEME):]
    host, _, port = rest.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536 or "/" in rest or "@" in rest:
        raise EpistemeError(
            "INVALID_USAGE", f"{where} {value!r} is not dask://HOST:PORT",
            details={"value": value}, hint="for example --executor dask://127.0.0.1:8786",
        )
    return f"tcp://{host}:{int(port)}"


def executor_spec(jobs: int | None = None, executor: str | None = None,
                  environ: Mapping[str, str] | None = None) -> ExecutorSpec:
    """The executor a command uses: its options, else ``EPISTEME_EXECUTOR`` / ``EPISTEME_JOBS``, else
    a local pool over every available core. Bad values are ``INVALID_USAGE``."""
    env = os.environ if environ is None else environ
    where = "--executor"
    if executor is None and env.get(EXECUTOR_ENV, "").strip():
        executor, where = env[EXECUTOR_ENV].strip(), EXECUTOR_ENV
    explicit = jobs is not None
    if jobs is None and env.get(JOBS_ENV, "").strip():
        jobs, explicit = _jobs(env[JOBS_ENV], f"{JOBS_ENV}"), True
    elif jobs is not None and not MIN_JOBS <= jobs <= MAX_JOBS:
        raise EpistemeError("INVALID_USAGE", f"--jobs must be in {MIN_JOBS}–{MAX_JOBS}",
                            details={"value": jobs})
    if executor is None or executor == "local":
        return ExecutorSpec("local", jobs if jobs is not None else available_cores(), explicit)
    if executor.startswith(DASK_SCHEME):
        return ExecutorSpec("dask", jobs or 1, explicit, _address(executor, where))
    raise EpistemeError(
        "INVALID_USAGE", f"{where} {executor!r}: expected local or dask://HOST:PORT",
        details={"value": executor}, hint="for example --executor local or --executor dask://127.0.0.1:8786",
    )


class SerialExecutor:
    """Every task in this process, one after another: what library callers get by default."""

    name = "local"
    workers = 1

    def map(self, fn: Callable[[T], R], items: Sequence[T], *, work: Callable[[T], int] | None = None,
            min_work: int = 0) -> Iterator[R]:
        return (fn(item) for item in items)

    def ask_shards(self, shards: Sequence[Any], call: Callable[..., R], *args: Any) -> list[R]:
        return [call(shard, *args) for shard in shards]

    def close(self) -> None:
        return None


SERIAL = SerialExecutor()


@contextlib.contextmanager
def cleaning_up(home: Home, executor: Executor | None) -> Iterator[None]:
    """Around a stage's tasks, under the writer lock: on any error, cancellation or signal, stop the
    workers at once and sweep the temp files they may have left, so a cancelled run leaves none."""
    try:
        yield
    except BaseException:
        stop = getattr(executor, "kill", None)
        if callable(stop):
            stop()
        from episteme_core.store.sweep import sweep_home

        sweep_home(home)
        raise


def accepts_executor(function: Callable[..., Any]) -> bool:
    """Whether ``function`` takes an ``executor`` keyword (a plugin indexer's ``build`` may not)."""
    import inspect

    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False
    return "executor" in parameters or any(p.kind is p.VAR_KEYWORD for p in parameters.values())


def chunked(items: Sequence[T], size: int) -> list[list[T]]:
    """``items`` cut into lists of at most ``size`` (the batches one task takes)."""
    return [list(items[i : i + size]) for i in range(0, len(items), max(1, size))]


# A map is cut into about this many batches per worker: enough that a worker that finishes early
# takes more, few enough that a batch's round trip stays small against its work.
BATCHES_PER_WORKER = 8


def batches(items: Sequence[T], workers: int, work: Callable[[T], int] | None = None) -> list[list[T]]:
    """``items`` cut, in order, into about ``BATCHES_PER_WORKER`` batches per worker of even work.

    With a ``work`` measure a batch closes before the item that would take it past its share of the
    total, so heavy items (a shard's build) go one per batch and the last batch of a map is no longer
    than one item (two built together would leave the other worker idle for one build at the end);
    without one, batches hold the same count of items."""
    parts = max(1, workers * BATCHES_PER_WORKER)
    if work is None:
        return chunked(items, max(1, -(-len(items) // parts)))
    weights = [max(0, int(work(item))) for item in items]
    share = sum(weights) / parts
    cut: list[list[T]] = []
    current: list[T] = []
    filled = 0
    for item, weight in zip(items, weights, strict=True):
        if current and filled + weight > share:
            cut.append(current)
            current, filled = [], 0
        current.append(item)
        filled += weight
    if current:
        cut.append(current)
    return cut


def total(items: Iterable[T], work: Callable[[T], int] | None) -> int:
    """The summed ``work`` of ``items`` (their count when no measure is given)."""
    return sum(map(work, items)) if work is not None else sum(1 for _ in items)
