"""--jobs and EPISTEME_JOBS, --executor and EPISTEME_EXECUTOR: resolved, bounded, and refused with a
stable code and exit status; an unreachable Dask scheduler is SOURCE_UNAVAILABLE."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from episteme_core.errors import EpistemeError
from episteme_core.executor.base import MAX_JOBS, ExecutorSpec, available_cores, executor_spec
from episteme_core.testing.crashmatrix import episteme

from .conftest import stage_bytes, write_corpus


def test_the_default_is_a_local_pool_over_every_core() -> None:
    assert executor_spec(environ={}) == ExecutorSpec("local", available_cores(), False)


def test_jobs_from_the_option_else_the_environment() -> None:
    assert executor_spec(3, environ={"EPISTEME_JOBS": "5"}) == ExecutorSpec("local", 3, True)
    assert executor_spec(environ={"EPISTEME_JOBS": " 5 "}) == ExecutorSpec("local", 5, True)
    assert executor_spec(environ={"EPISTEME_JOBS": str(MAX_JOBS)}).jobs == MAX_JOBS


@pytest.mark.parametrize("value", ["0", str(MAX_JOBS + 1), "two", "-1", "1.5"])
def test_a_bad_jobs_value_is_invalid_usage(value: str) -> None:
    with pytest.raises(EpistemeError) as caught:
        executor_spec(environ={"EPISTEME_JOBS": value})
    assert caught.value.code == "INVALID_USAGE"


def test_the_executor_from_the_option_else_the_environment() -> None:
    spec = executor_spec(None, "dask://127.0.0.1:8786", environ={"EPISTEME_EXECUTOR": "local"})
    assert spec.kind == "dask" and spec.address == "tcp://127.0.0.1:8786"
    assert spec.label == "dask://127.0.0.1:8786"
    assert executor_spec(environ={"EPISTEME_EXECUTOR": "dask://[::1]:9000"}).address == "tcp://[::1]:9000"
    assert executor_spec(environ={"EPISTEME_EXECUTOR": "local", "EPISTEME_JOBS": "2"}).jobs == 2


@pytest.mark.parametrize("value", ["dask://", "dask://host", "dask://host:0", "dask://host:65536",
                                   "dask://a/b:1", "ray://host:1", "elsewhere"])
def test_a_bad_executor_is_invalid_usage(value: str) -> None:
    with pytest.raises(EpistemeError) as caught:
        executor_spec(None, value, environ={})
    assert caught.value.code == "INVALID_USAGE"


def test_the_cli_refuses_bad_values_with_exit_status_2(home: Path) -> None:
    for args, env in ((["index", "--jobs", "0"], {}), (["index", "--jobs", str(MAX_JOBS + 1)], {}),
                      (["index"], {"EPISTEME_JOBS": "many"}), (["index", "--executor", "ray://x:1"], {}),
                      (["query", "--term", "x", "--executor", "dask://nohost"], {})):
        proc = episteme(home, [*args, "--json"], env)
        assert proc.returncode == 2, (args, proc.stderr)


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])  # nothing listens once it is closed


def test_an_unreachable_scheduler_is_source_unavailable(tmp_path: Path, home: Path) -> None:
    pytest.importorskip("distributed", reason="the dask extra is not installed")
    map_path = write_corpus(tmp_path, 2, settle=False)
    assert episteme(home, ["pipeline", "--map", str(map_path)]).returncode == 0
    before = stage_bytes(home)
    where = f"dask://127.0.0.1:{_closed_port()}"
    for args in (["index", "--reshard"], ["query", "--term", "alpha1"], ["ask", "what is alpha1"],
                 ["extract", "--force"]):
        proc = episteme(home, [*args, "--json"], {"EPISTEME_EXECUTOR": where, "EPISTEME_DASK_TIMEOUT": "1"})
        assert proc.returncode == 4, (args, proc.stderr)
        error = json.loads(proc.stderr.decode().strip().splitlines()[-1])["error"]
        assert error["code"] == "SOURCE_UNAVAILABLE" and error["details"]["scheduler"].endswith(where[7:])
    assert stage_bytes(home) == before
    assert not (home / "writer.lock").exists()


@pytest.mark.parametrize(("value", "status"), [("1", 4), ("600", None), ("0", 2), ("601", 2), ("soon", 2)])
def test_the_connect_timeout_is_bounded(value: str, status: int | None,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from episteme_core.executor.cluster import connect_seconds

    monkeypatch.setenv("EPISTEME_DASK_TIMEOUT", value)
    if status is None or status == 4:
        assert connect_seconds() == int(value)
    else:
        with pytest.raises(EpistemeError) as caught:
            connect_seconds()
        assert caught.value.code == "INVALID_USAGE"


def test_jobs_give_the_bytes_of_one_process(tmp_path: Path) -> None:
    map_path = write_corpus(tmp_path, 16, settle=False)
    homes = []
    for jobs in ("1", "2"):
        home = tmp_path / f"home{jobs}"
        proc = episteme(home, ["pipeline", "--map", str(map_path), "--json"], {"EPISTEME_JOBS": jobs})
        assert proc.returncode == 0, proc.stderr.decode()
        homes.append(stage_bytes(home))
    assert homes[0] == homes[1]
