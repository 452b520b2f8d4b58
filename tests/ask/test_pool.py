"""The pool against a real reference reader server: slots in parallel, retry, fallback, junk,
invented labels, timeouts, huge replies, health and the run announcement."""

from __future__ import annotations

import time

import pytest

from episteme_core.ask.http_reader import HttpReader
from episteme_core.ask.pool import Pool
from episteme_core.ask.reference_server import ReferenceServer
from episteme_core.records.reading import Candidate, ReaderSpec, ReadRequest

from .conftest import Warnings


def request(i: int = 0) -> ReadRequest:
    return ReadRequest("where did the white whale swim", f"books-{i:04d}", "books", (
        Candidate("p1", "Nothing of note.", 4.0, f"book:a/{i}#1", coverage=0.9),
        Candidate("p2", "The white whale swam north.", 3.0, f"book:a/{i}#2", coverage=0.8),
        Candidate("p3", "A whale, white as snow.", 1.0, f"book:a/{i}#3", coverage=0.3),
    ))


def http_reader(server: ReferenceServer, name: str = "ref", slots: int = 1, timeout: float = 5.0,
                **options: object) -> HttpReader:
    return HttpReader(ReaderSpec(name, "http", slots=slots, timeout=timeout,
                                 options={"url": server.url, **options}))


def run(readers: list[HttpReader], requests: list[ReadRequest], warnings: Warnings) -> list:
    pool = Pool(readers, warnings)
    try:
        pool.prepare(requests[0].question, [r.shard for r in requests])
        return pool.read_all(requests)
    finally:
        pool.close()


def test_keyword_rule_names_labels_and_run_is_announced(reference: ReferenceServer,
                                                        warnings: Warnings) -> None:
    [read] = run([http_reader(reference)], [request()], warnings)
    assert read.labels == ("p2", "p3") and read.reader == "ref" and not read.fallback
    assert warnings == []
    stats = reference.stats()
    assert stats["health"] == 1
    assert stats["runs"] == [{"question": "where did the white whale swim", "shards": ["books-0000"]}]


@pytest.mark.parametrize("slots", [1, 2, 4])
def test_reads_run_in_parallel_across_slots(reference: ReferenceServer, warnings: Warnings,
                                            slots: int) -> None:
    reference.configure(latency=0.3)
    started = time.monotonic()
    reads = run([http_reader(reference, slots=slots)], [request(i) for i in range(4)], warnings)
    elapsed = time.monotonic() - started
    assert [r.shard for r in reads] == [f"books-{i:04d}" for i in range(4)]
    assert all(r.labels == ("p2", "p3") for r in reads)
    # The server saw `slots` reads at once: they ran in parallel. Only the lower bound is timed (a
    # loaded machine can slow the reads, never speed them past their 0.3 s latency).
    assert reference.stats()["max_inflight"] == slots
    assert elapsed >= 0.3 * (4 / slots) - 0.05


def test_failed_read_is_retried_once_on_another_slot(reference: ReferenceServer, warnings: Warnings) -> None:
    reference.configure(mode="fail", count=1)
    [read] = run([http_reader(reference, slots=2)], [request()], warnings)
    assert not read.fallback and read.labels == ("p2", "p3")
    assert [(a.slot, a.ok) for a in read.attempts] == [(0, False), (1, True)]
    assert "500" in (read.attempts[0].error or "")
    assert warnings == []


def test_retry_prefers_another_reader(warnings: Warnings) -> None:
    with ReferenceServer(mode="fail") as bad, ReferenceServer() as good:
        [read] = run([http_reader(bad, "bad"), http_reader(good, "good")], [request()], warnings)
    assert read.reader in ("good", "bad")
    assert [a.reader for a in read.attempts][-1] == "good" and read.attempts[-1].ok


def test_two_failures_fall_back_to_bm25_with_a_warning(reference: ReferenceServer,
                                                       warnings: Warnings) -> None:
    reference.configure(mode="fail", count=2)
    [read] = run([http_reader(reference, slots=2)], [request()], warnings)
    assert read.fallback and read.reader == "bm25"
    assert read.labels == ("p1", "p2")  # bm25: coverage 0.9 and 0.8 are at least half the best; 0.3 is not
    assert warnings.codes() == ["READER_FALLBACK"]
    assert "books-0000" in warnings[0][1] and "500" in warnings[0][1]


@pytest.mark.parametrize("mode", ["junk", "badjson"])
def test_junk_is_a_failed_read(reference: ReferenceServer, warnings: Warnings, mode: str) -> None:
    reference.configure(mode=mode)
    [read] = run([http_reader(reference)], [request()], warnings)
    assert read.fallback
    assert warnings.codes() == ["READER_FALLBACK"]


def test_json_inside_plain_text_is_accepted(reference: ReferenceServer, warnings: Warnings) -> None:
    reference.configure(mode="plain")
    [read] = run([http_reader(reference)], [request()], warnings)
    assert read.labels == ("p2", "p3") and not read.fallback and warnings == []


def test_invented_labels_are_dropped_with_a_warning(reference: ReferenceServer, warnings: Warnings) -> None:
    reference.configure(mode="invent")
    [read] = run([http_reader(reference)], [request()], warnings)
    assert read.labels == ("p2", "p3")
    assert read.invented == ("p999", "q1", "7")
    assert warnings.codes() == ["READER_INVENTED_LABELS"]
    assert "p999" in warnings[0][1]


def test_a_reader_slower_than_its_timeout_falls_back_in_bounded_time(
    reference: ReferenceServer, warnings: Warnings
) -> None:
    reference.configure(mode="stall", delay=120)
    started = time.monotonic()
    [read] = run([http_reader(reference, slots=2, timeout=0.3)], [request()], warnings)
    elapsed = time.monotonic() - started
    assert read.fallback
    assert all("timed out" in (a.error or "") for a in read.attempts) and len(read.attempts) == 2
    # Two 0.3 s timeouts take about 0.6 s; a reader that waited out the stall would take 120 s. The
    # bound between them is generous (100 times the time it takes) so a loaded machine never breaks it.
    assert elapsed < 60


@pytest.mark.parametrize("mode", ["huge", "hugestream"])
def test_a_10_mb_reply_is_bounded_and_fails_cleanly(reference: ReferenceServer, warnings: Warnings,
                                                    mode: str) -> None:
    reference.configure(mode=mode)
    [read] = run([http_reader(reference, max_reply_bytes=1 << 20)], [request()], warnings)
    assert read.fallback
    assert "larger than 1048576" in warnings[0][1]


def test_unhealthy_reader_is_skipped_with_a_warning(reference: ReferenceServer, warnings: Warnings) -> None:
    reference.configure(health=503)
    [read] = run([http_reader(reference)], [request()], warnings)
    assert read.fallback and reference.stats()["chat"] == 0
    assert warnings.codes() == ["READER_UNHEALTHY", "READER_FALLBACK"]


def test_refused_connection_is_unhealthy_not_a_crash(warnings: Warnings) -> None:
    server = ReferenceServer().start()
    reader = http_reader(server)
    server.stop()
    [read] = run([reader], [request()], warnings)
    assert read.fallback and warnings.codes() == ["READER_UNHEALTHY", "READER_FALLBACK"]


def test_run_announcement_404_is_ignored_other_failures_warn(reference: ReferenceServer,
                                                             warnings: Warnings) -> None:
    reference.configure(run_status=404)
    run([http_reader(reference)], [request()], warnings)
    assert warnings == []
    reference.configure(run_status=500)
    [read] = run([http_reader(reference)], [request()], warnings)
    assert warnings.codes() == ["READER_RUN_FAILED"] and not read.fallback


def test_shard_without_candidates_is_not_sent(reference: ReferenceServer, warnings: Warnings) -> None:
    empty = ReadRequest("q", "books-0009", "books", ())
    [read] = run([http_reader(reference)], [empty], warnings)
    assert read.labels == () and read.reader == "none" and reference.stats()["chat"] == 0
