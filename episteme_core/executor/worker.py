"""What runs inside a worker process: its start (signals, environment, dying with the command) and the
wrapper every batch of tasks runs in (durability, errors that cross a process boundary).

A worker never holds the writer lock (it is started by the fork server, not forked from the
command, so it shares none of the command's open files) and never commits: it reads committed
stages, returns results and may write content-addressed objects, which mean nothing until the
command's commit names them.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from episteme_core.errors import EpistemeError

WATCH_SECONDS = 0.1
PR_SET_PDEATHSIG = 1


@attrs.frozen
class WorkerStart:
    """What a worker needs from its command: its pid, its ``EPISTEME_*`` environment (a fork server
    started earlier has an older one) and the shared fault counts (tests)."""

    command: int
    environment: dict[str, str]
    faults: dict[str, Any] | None = None


def worker_start(command: int) -> WorkerStart:
    """The ``WorkerStart`` of this process for the workers it is about to start."""
    from episteme_core.store import faults

    environment = {key: value for key, value in os.environ.items() if key.startswith("EPISTEME_")}
    return WorkerStart(command, environment, faults.share())


def start(state: WorkerStart) -> None:
    """A worker's initializer: ignore SIGINT (the command handles it and stops the workers), take the
    command's environment and fault counts, and die when the command dies."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    for key in [k for k in os.environ if k.startswith("EPISTEME_") and k not in state.environment]:
        del os.environ[key]
    os.environ.update(state.environment)
    from episteme_core.store import faults

    faults.join(state.faults)
    _die_with(state.command)


def _die_with(command: int) -> None:
    """Exit as soon as ``command`` is gone: the kernel's parent-death signal where there is one (the
    fork server, this worker's parent, exits with the command) and a watcher thread everywhere."""
    parent = os.getppid()
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass

    def watch() -> None:
        while True:
            time.sleep(WATCH_SECONDS)
            if not _alive(command) or os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="episteme-watch-command", daemon=True).start()


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs: not gone, and not a zombie (a command killed outright stays one until its
    own parent reaps it, which may wait for the output pipes this worker would keep open)."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):  # PermissionError: the pid was reused by another user
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            state = handle.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True  # no /proc (not Linux): the signal probe is all there is
    return state not in (b"Z", b"X")


@attrs.frozen
class Failure:
    """An error raised by a task, as plain values (it crosses a process boundary): an
    ``EpistemeError`` as it was, anything else as ``INTERNAL_ERROR`` naming the task, with the
    worker's traceback as text (``--debug`` shows it)."""

    code: str
    message: str
    details: dict[str, Any] | None
    hint: str | None
    trace: str | None = None

    @classmethod
    def of(cls, error: EpistemeError) -> Failure:
        return cls(error.code, error.message, error.details, error.hint)

    @classmethod
    def internal(cls, task: str, what: str, exc: BaseException) -> Failure:
        """An exception that is no ``EpistemeError`` (a bug, or a task the worker cannot load)."""
        import socket
        import traceback

        return cls(
            "INTERNAL_ERROR", f"task {task} {what} on a worker: {type(exc).__name__}: {exc}",
            {"task": task, "exception": type(exc).__name__, "worker": socket.gethostname(),
             "pid": os.getpid()},
            "every worker must run the same episteme and plugins as the command; "
            "--executor local runs the stage on this machine",
            "".join(traceback.format_exception(exc)),
        )

    def error(self) -> EpistemeError:
        error = EpistemeError(self.code, self.message, details=self.details, hint=self.hint)
        if self.trace:
            error.__cause__ = WorkerTraceback(self.trace)
        return error


class WorkerTraceback(Exception):
    """The traceback of an exception raised in a worker, as text (the cause of its ``Failure``)."""


@attrs.frozen
class Batch:
    """The results of one batch of tasks, in order, and the failure that stopped it (if any)."""

    results: list[Any]
    failure: Failure | None = None


def task_name(fn: Callable[..., Any]) -> str:
    """``module.qualname`` of a task function (of the function inside a ``functools.partial``)."""
    inner = getattr(fn, "func", fn)
    module = getattr(inner, "__module__", None) or "?"
    return f"{module}.{getattr(inner, '__qualname__', type(inner).__name__)}"


def run_batch(fn: Callable[[Any], Any], items: Sequence[Any], sync: bool, *, contain: bool = False,
              task: str | None = None) -> Batch:
    """``fn`` over ``items`` in this worker. ``sync``: make what the tasks wrote durable before
    returning (a worker on another machine); else the command's own flush covers it (same machine).
    The first ``EpistemeError`` ends the batch and travels back as a ``Failure``; with ``contain``
    (a remote worker) so does any other exception, as ``INTERNAL_ERROR`` naming the task (``task``,
    else ``fn``'s name)."""
    from episteme_core.store.atomic import deferred_sync

    results: list[Any] = []
    with deferred_sync(flush=sync):
        for item in items:
            try:
                results.append(fn(item))
            except EpistemeError as error:
                return Batch(results, Failure.of(error))
            except Exception as exc:
                if not contain:
                    raise
                return Batch(results, Failure.internal(task or task_name(fn), "failed", exc))
    return Batch(results)


def pack(fn: Callable[..., Any], *args: Any) -> tuple[str, bytes]:
    """The task's name and ``(fn, args)`` as cloudpickle bytes: what a remote worker is sent. The
    scheduler and the worker's connection pass bytes through untouched; the worker loads them inside
    the task (``unpack``), so a task it cannot load fails that task alone, never the worker's
    connection to the scheduler (which Dask would retry for ever)."""
    import cloudpickle  # type: ignore[import-untyped,import-not-found,unused-ignore]

    return task_name(fn), cloudpickle.dumps((fn, args))


def unpack(task: str, payload: bytes) -> tuple[Callable[..., Any], tuple[Any, ...]] | Failure:
    """What ``pack`` packed, or the ``Failure`` of a task this worker cannot load."""
    import pickle

    try:
        fn, args = pickle.loads(payload)
    except Exception as exc:
        return Failure.internal(task, "could not be loaded", exc)
    return fn, args


def run_packed(task: str, payload: bytes) -> Batch:
    """A batch sent by a remote executor (``pack(fn, items)``), every failure contained."""
    unpacked = unpack(task, payload)
    if isinstance(unpacked, Failure):
        return Batch([], unpacked)
    fn, (items,) = unpacked
    return run_batch(fn, items, True, contain=True)


__all__ = ["Batch", "Failure", "WorkerStart", "WorkerTraceback", "pack", "run_batch", "run_packed", "start",
           "task_name", "unpack", "worker_start"]
