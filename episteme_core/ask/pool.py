"""The reader pool: health first, then every shard's read in parallel across the readers' slots.

A read that fails or outlives its reader's timeout is retried once on another slot (another reader
when there is one); when that fails too, the builtin bm25 reader answers the shard, with a warning.
Labels a reader invents (not among the shard's ``p1..pN``) are dropped, with a warning. The pool
never sees text from a reader: only labels, and scores from fusing readers.
"""

from __future__ import annotations

import concurrent.futures as cf
import time
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from episteme_core.ask.bm25_reader import default_bm25
from episteme_core.kernel.contracts import Reader
from episteme_core.records.reading import ReadError, ReadReply, ReadRequest

GRACE_S = 1.0  # the pool's own deadline is the reader's timeout plus this
MAX_ATTEMPTS = 2
Warn = Callable[..., None]


@attrs.frozen
class Attempt:
    reader: str
    slot: int
    ok: bool
    error: str | None
    ms: int


@attrs.frozen
class ShardRead:
    """How one shard was read: who answered, the labels kept, what was invented, fallbacks."""

    shard: str
    source: str
    reader: str
    labels: tuple[str, ...]
    scores: dict[str, float]
    invented: tuple[str, ...]
    fallback: bool
    attempts: tuple[Attempt, ...]


def check_labels(request: ReadRequest, reply: ReadReply) -> tuple[list[str], list[str], dict[str, float]]:
    """Split a reply into offered labels (first mention kept, reader order) and invented ones."""
    offered = set(request.labels)
    kept: list[str] = []
    invented: list[str] = []
    for label in reply.labels:
        if isinstance(label, str) and label in offered:
            if label not in kept:
                kept.append(label)
        else:
            shown = label if isinstance(label, str) else repr(label)
            invented.append(shown[:40])
    scores: dict[str, float] = {}
    if reply.scores:
        for label, score in dict(reply.scores).items():
            if label in kept and isinstance(score, int | float) and not isinstance(score, bool):
                if score == score and abs(score) != float("inf"):
                    scores[label] = float(score)
    return kept, invented, scores


@attrs.define
class _Job:
    request: ReadRequest
    attempts: list[Attempt] = attrs.field(factory=list)
    tried: set[tuple[int, int]] = attrs.field(factory=set)
    queued: float = attrs.field(factory=time.monotonic)


@attrs.define
class _Running:
    job: _Job
    slot: tuple[int, int]
    started: float
    deadline: float


class Pool:
    """Readers and their slots for one question."""

    def __init__(self, readers: Sequence[Reader], warn: Warn) -> None:
        self.readers = list(readers)
        self.warn = warn
        self.fallback = default_bm25()
        self.healthy: list[int] = []
        self.unhealthy: dict[str, str] = {}

    # -- before the reads -------------------------------------------------------------------
    def prepare(self, question: str, shards: Sequence[str]) -> None:
        """Health-check every reader (in parallel), then tell the healthy ones the run's shards."""
        def probe(i: int) -> tuple[int, str | None]:
            try:
                self.readers[i].health()
                return i, None
            except ReadError as exc:
                return i, str(exc)
            except Exception as exc:  # a plugin reader's bug must not sink the question
                return i, f"{type(exc).__name__}: {exc}"

        with cf.ThreadPoolExecutor(max_workers=max(1, len(self.readers))) as executor:
            results = sorted(executor.map(probe, range(len(self.readers))))
        for i, error in results:
            reader = self.readers[i]
            if error is None:
                self.healthy.append(i)
                continue
            self.unhealthy[reader.name] = error
            self.warn(
                "READER_UNHEALTHY",
                f"reader {reader.name} is not healthy ({error}); its shards go to the other readers or bm25",
                reader=reader.name,
            )
        for i in self.healthy:
            reader = self.readers[i]
            try:
                reader.begin_run(question, shards)
            except Exception as exc:
                self.warn(
                    "READER_RUN_FAILED",
                    f"reader {reader.name}: announcing the run failed ({exc}); reading anyway",
                    reader=reader.name,
                )

    # -- the reads --------------------------------------------------------------------------
    def read_all(self, requests: Sequence[ReadRequest]) -> list[ShardRead]:
        """Read every request; results come back in the order of ``requests``."""
        results: dict[int, ShardRead] = {}
        jobs: list[tuple[int, _Job]] = []
        for index, request in enumerate(requests):
            if not request.candidates:
                results[index] = ShardRead(request.shard, request.source, "none", (), {}, (), False, ())
            else:
                jobs.append((index, _Job(request)))
        slots = [(r, s) for r in self.healthy for s in range(self.readers[r].slots)]
        if not slots:
            for index, job in jobs:
                results[index] = self._fall_back(job, "no healthy reader")
        elif all(self.readers[r].kind == "bm25" for r in self.healthy):
            for index, job in jobs:  # in-process and instant: no threads needed
                results[index] = self._inline(job, slots[0])
        else:
            results.update(self._schedule(jobs, slots))
        return [results[i] for i in range(len(requests))]

    def _inline(self, job: _Job, slot: tuple[int, int]) -> ShardRead:
        reader = self.readers[slot[0]]
        started = time.monotonic()
        try:
            reply = reader.read(job.request)
        except Exception as exc:
            job.attempts.append(Attempt(reader.name, slot[1], False, str(exc), _ms(started)))
            return self._fall_back(job, str(exc))
        job.attempts.append(Attempt(reader.name, slot[1], True, None, _ms(started)))
        return self._accept(job, reader.name, reply, fallback=False)

    def _schedule(self, jobs: list[tuple[int, _Job]], slots: list[tuple[int, int]]) -> dict[int, ShardRead]:
        results: dict[int, ShardRead] = {}
        pending = list(jobs)
        free = list(slots)
        running: dict[cf.Future[ReadReply], tuple[int, _Running]] = {}
        stuck: dict[cf.Future[ReadReply], tuple[int, int]] = {}
        executor = cf.ThreadPoolExecutor(max_workers=len(slots), thread_name_prefix="episteme-reader")
        try:
            while pending or running:
                self._dispatch(pending, free, running, stuck, executor, slots, results)
                waiting = list(running) + list(stuck)
                now = time.monotonic()
                timeout = min((r.deadline for _, r in running.values()), default=now + 1.0) - now
                done, _ = cf.wait(waiting, timeout=max(0.0, timeout), return_when=cf.FIRST_COMPLETED)
                for future in done:
                    if future in stuck:
                        free.append(stuck.pop(future))
                        continue
                    index, run = running.pop(future)
                    free.append(run.slot)
                    self._finished(index, run, future, pending, results)
                now = time.monotonic()
                for future, (index, run) in list(running.items()):
                    if now >= run.deadline and not future.done():
                        del running[future]
                        stuck[future] = run.slot  # the slot is busy until the thread returns
                        reader = self.readers[run.slot[0]]
                        error = f"timed out after {reader.timeout:g} s"
                        self._failed(index, run, error, pending, results)
        finally:
            executor.shutdown(wait=False, cancel_futures=True)
        return results

    def _dispatch(self, pending: list[tuple[int, _Job]], free: list[tuple[int, int]],
                  running: dict[cf.Future[ReadReply], tuple[int, _Running]],
                  stuck: dict[cf.Future[ReadReply], tuple[int, int]],
                  executor: cf.ThreadPoolExecutor, slots: list[tuple[int, int]],
                  results: dict[int, ShardRead]) -> None:
        still: list[tuple[int, _Job]] = []
        max_wait = max(self.readers[r].timeout for r, _ in slots) + GRACE_S
        for index, job in pending:
            slot = self._pick(job, free, slots)
            if slot is None:
                if job.attempts and time.monotonic() - job.queued > max_wait:
                    results[index] = self._fall_back(job, "no slot came free for the retry")
                else:
                    still.append((index, job))
                continue
            free.remove(slot)
            reader = self.readers[slot[0]]
            started = time.monotonic()
            future = executor.submit(reader.read, job.request)
            running[future] = (index, _Running(job, slot, started, started + reader.timeout + GRACE_S))
        pending[:] = still

    def _pick(self, job: _Job, free: list[tuple[int, int]],
              slots: list[tuple[int, int]]) -> tuple[int, int] | None:
        """A free slot for ``job``: one it has not tried, on a reader it has not tried if possible."""
        if not free:
            return None
        tried_readers = {r for r, _ in job.tried}
        untried_readers = {r for r, _ in slots} - tried_readers
        untried_slots = [s for s in slots if s not in job.tried]
        if untried_readers:
            choices = [s for s in free if s[0] in untried_readers]
            if not choices:
                return None  # wait for a slot of another reader
        elif untried_slots:
            choices = [s for s in free if s not in job.tried]
            if not choices:
                return None
        else:
            choices = list(free)
        load = {r: sum(1 for s in free if s[0] == r) for r, _ in choices}
        return sorted(choices, key=lambda s: (-load[s[0]], s))[0]

    def _finished(self, index: int, run: _Running, future: cf.Future[ReadReply],
                  pending: list[tuple[int, _Job]], results: dict[int, ShardRead]) -> None:
        reader = self.readers[run.slot[0]]
        try:
            reply = future.result()
        except Exception as exc:
            self._failed(index, run, str(exc) or type(exc).__name__, pending, results)
            return
        if not isinstance(reply, ReadReply):
            error = f"reader returned {type(reply).__name__}, not ReadReply"
            self._failed(index, run, error, pending, results)
            return
        run.job.attempts.append(Attempt(reader.name, run.slot[1], True, None, _ms(run.started)))
        results[index] = self._accept(run.job, reader.name, reply, fallback=False)

    def _failed(self, index: int, run: _Running, error: str, pending: list[tuple[int, _Job]],
                results: dict[int, ShardRead]) -> None:
        reader = self.readers[run.slot[0]]
        job = run.job
        job.attempts.append(Attempt(reader.name, run.slot[1], False, error, _ms(run.started)))
        job.tried.add(run.slot)
        if len(job.attempts) < MAX_ATTEMPTS:
            job.queued = time.monotonic()
            pending.insert(0, (index, job))
        else:
            results[index] = self._fall_back(job, error)

    def _fall_back(self, job: _Job, error: str) -> ShardRead:
        request = job.request
        tried = ", ".join(f"{a.reader}: {a.error}" for a in job.attempts if a.error) or error
        self.warn(
            "READER_FALLBACK",
            f"shard {request.shard} answered by bm25 after its reads failed ({tried})",
            shard=request.shard,
        )
        return self._accept(job, "bm25", self.fallback.read(request), fallback=True)

    def _accept(self, job: _Job, reader: str, reply: ReadReply, *, fallback: bool) -> ShardRead:
        request = job.request
        kept, invented, scores = check_labels(request, reply)
        if invented:
            shown = ", ".join(invented[:5]) + (", ..." if len(invented) > 5 else "")
            self.warn(
                "READER_INVENTED_LABELS",
                f"reader {reader} named {len(invented)} label(s) not offered for shard {request.shard} "
                f"({shown}); dropped",
                shard=request.shard,
                reader=reader,
            )
        return ShardRead(
            request.shard, request.source, reader, tuple(kept), scores, tuple(invented), fallback,
            tuple(job.attempts),
        )

    def close(self) -> None:
        for reader in self.readers:
            try:
                reader.close()
            except Exception:
                pass


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def describe(readers: Sequence[Reader], pool: Pool) -> list[dict[str, Any]]:
    """The readers of a run as the answer and telemetry list them (never URLs or keys)."""
    return [
        {"name": r.name, "kind": r.kind, "slots": r.slots, "healthy": r.name not in pool.unhealthy}
        for r in readers
    ]
