"""A failure on a Dask worker comes back as a clean error, never a hang: a task that raises is
INTERNAL_ERROR naming it, a task the workers cannot load (a plugin only the command has) the same,
a worker that dies running it or a scheduler that goes away SOURCE_UNAVAILABLE; a stage that fails
so commits nothing and releases the writer lock."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed", reason="the dask extra (episteme-core[dask]) is not installed")

from episteme_core.errors import EpistemeError  # noqa: E402
from episteme_core.testing.crashmatrix import episteme, home_state  # noqa: E402

from .conftest import write_corpus  # noqa: E402

PLUGINS = Path(__file__).parents[1] / "fixtures" / "plugins"


def _executor(address: str):  # type: ignore[no-untyped-def]
    from episteme_core.executor.cluster import DaskExecutor

    return DaskExecutor("tcp://" + address.removeprefix("dask://").removeprefix("tcp://"))


def test_a_task_that_raises_is_an_internal_error_naming_it(cluster: str) -> None:
    def fails_at_three(item: int) -> int:  # pickled by value: the workers cannot import this module
        if item == 3:
            raise ValueError("three is not allowed")
        return item * 2

    executor = _executor(cluster)
    try:
        results: list[int] = []
        with pytest.raises(EpistemeError) as caught:
            results.extend(executor.map(fails_at_three, list(range(8))))
        error = caught.value
        assert error.code == "INTERNAL_ERROR"
        assert "fails_at_three" in error.message and "three is not allowed" in error.message
        assert error.details is not None and error.details["task"].endswith("fails_at_three")
        assert error.details["exception"] == "ValueError"
        assert "three is not allowed" in str(error.__cause__)  # the worker's traceback, for --debug
        assert results == [0, 2, 4]  # the items before the failure came back, in order
        assert list(executor.map(lambda item: item + 1, [1, 2, 3])) == [2, 3, 4]  # the cluster is fine
    finally:
        executor.close()


def test_a_finished_task_whose_result_is_slow_to_arrive_is_not_lost(cluster: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # A result that takes longer to fetch than one poll (here every result: polls of 1 ms, results of
    # 8 MB) was once reported as a lost cluster (SOURCE_UNAVAILABLE) on a busy machine.
    from episteme_core.executor import cluster as cluster_module

    monkeypatch.setattr(cluster_module, "POLL_SECONDS", 0.001)

    def large(item: int) -> bytes:  # pickled by value: the workers cannot import this module
        return bytes([item]) * 8_000_000

    executor = _executor(cluster)
    try:
        results = list(executor.map(large, [1, 2, 3]))
        assert [len(result) for result in results] == [8_000_000] * 3
        assert [result[:1] for result in results] == [b"\x01", b"\x02", b"\x03"]
    finally:
        executor.close()


def test_a_task_the_workers_cannot_load_is_an_internal_error(tmp_path: Path, cluster: str) -> None:
    module = tmp_path / "site" / "only_here.py"
    module.parent.mkdir()
    module.write_text("def double(item):\n    return item * 2\n", "utf-8")
    sys.path.insert(0, str(module.parent))  # on this process's path only: the workers started before
    try:
        import only_here  # type: ignore[import-not-found]

        executor = _executor(cluster)
        try:
            with pytest.raises(EpistemeError) as caught:
                list(executor.map(only_here.double, [1, 2, 3]))
            assert caught.value.code == "INTERNAL_ERROR"
            assert caught.value.details is not None and caught.value.details["task"] == "only_here.double"
            assert "could not be loaded" in caught.value.message and "only_here" in caught.value.message
            assert list(executor.map(abs, [-1, -2])) == [1, 2]  # the workers' connections survived
        finally:
            executor.close()
    finally:
        sys.path.remove(str(module.parent))
        sys.modules.pop("only_here", None)


def test_a_stage_the_workers_cannot_load_fails_cleanly(tmp_path: Path, cluster: str) -> None:
    site = tmp_path / "site-slow"  # a plugin only the command can import (the workers started before)
    shutil.copytree(PLUGINS / "site-slow", site)
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")])),
           "EPISTEME_LOAD_PLUGINS": "slow", "EPISTEME_SLOW_SECONDS": "0"}
    home = tmp_path / "home"
    map_path = write_corpus(tmp_path, 6, content_type="text/x-slow", settle=False)
    proc = episteme(home, ["manual-ingest", "--map", str(map_path)], env)
    assert proc.returncode == 0, proc.stderr.decode()
    before = home_state(home)
    proc = episteme(home, ["extract", "--json", "--executor", cluster], env, timeout=120)
    assert proc.returncode == 1, proc.stderr.decode()
    error = json.loads(proc.stderr.decode().strip().splitlines()[-1])["error"]  # Dask may log before it
    assert error["code"] == "INTERNAL_ERROR", error
    assert error["details"]["task"] == "episteme_core.extract.run.extract_one"
    assert "episteme_slow" in error["message"]  # what the worker could not import
    assert not (home / "writer.lock").exists()
    assert [path for path in home.rglob("*.tmp")] == []
    assert home_state(home) == before  # nothing committed
    done = episteme(home, ["extract", "--json", "--executor", "local"], env)
    assert done.returncode == 0, done.stderr.decode()


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_lost_worker_or_scheduler_is_source_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    dask = shutil.which("dask", path=str(Path(sys.executable).parent))
    if dask is None:
        pytest.skip("the dask command is not installed next to this Python")
    monkeypatch.setenv("EPISTEME_DASK_TIMEOUT", "2")
    port = _free_port()
    env = {**os.environ, "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env,
             "start_new_session": True}
    scheduler = subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port),
                                  "--no-dashboard"], **quiet)  # type: ignore[call-overload]
    worker = subprocess.Popen([dask, "worker", f"tcp://127.0.0.1:{port}", "--host", "127.0.0.1",
                               "--nthreads", "1", "--no-dashboard"], **quiet)  # type: ignore[call-overload]
    executor = None
    try:
        deadline = time.monotonic() + 60
        while executor is None:
            try:
                executor = _executor(f"tcp://127.0.0.1:{port}")
            except EpistemeError as error:  # not up yet
                assert error.code == "SOURCE_UNAVAILABLE" and time.monotonic() < deadline
                time.sleep(0.5)

        def dies(item: int) -> int:  # kills the worker running it, every time Dask retries it
            os._exit(3)

        with pytest.raises(EpistemeError) as caught:  # the nanny restarts the worker; Dask gives up
            list(executor.map(dies, [1]))
        assert caught.value.code == "SOURCE_UNAVAILABLE" and caught.value.retryable
        assert caught.value.details is not None and caught.value.details["task"].endswith("dies")

        def sleeps(item: int) -> int:
            time.sleep(60)
            return item

        results = executor.map(sleeps, [1])
        os.killpg(scheduler.pid, signal.SIGKILL)
        with pytest.raises(EpistemeError) as caught:
            list(results)
        assert caught.value.code == "SOURCE_UNAVAILABLE"
        assert caught.value.details is not None and caught.value.details["task"].endswith("sleeps")
    finally:
        if executor is not None:
            executor.close()
        for process in (worker, scheduler):
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait(timeout=20)
