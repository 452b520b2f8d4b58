"""The Dask executor on a LocalCluster bound to 127.0.0.1 (2 workers, one per test session) and once
on `dask scheduler` + `dask worker` processes: versions checked, stages and a query's shards on the
workers, the same bytes and answers as this process gives."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed", reason="the dask extra (episteme-core[dask]) is not installed")

from episteme_core.errors import EpistemeError  # noqa: E402
from episteme_core.testing.crashmatrix import episteme  # noqa: E402

from .conftest import stage_bytes, write_corpus  # noqa: E402


def _query(home: Path, term: str, env: dict[str, str]) -> bytes:
    proc = episteme(home, ["query", "--term", term, "--limit", "20", "--json"], env)
    assert proc.returncode == 0, proc.stderr.decode()
    return json.dumps(json.loads(proc.stdout)["data"], sort_keys=True).encode()


def test_stages_and_queries_on_dask_equal_local(tmp_path: Path, cluster: str) -> None:
    map_path = write_corpus(tmp_path, 24, settle=False)
    local, remote = tmp_path / "local", tmp_path / "remote"
    assert episteme(local, ["pipeline", "--map", str(map_path)], {"EPISTEME_JOBS": "1"}).returncode == 0
    proc = episteme(remote, ["pipeline", "--map", str(map_path), "--executor", cluster])
    assert proc.returncode == 0, proc.stderr.decode()
    assert stage_bytes(local) == stage_bytes(remote)
    proc = episteme(remote, ["index", "--reshard", "--json"], {"EPISTEME_EXECUTOR": cluster})
    assert proc.returncode == 0, proc.stderr.decode()
    for term in ("alpha1", "beta2 gamma3", '"delta4 omega5"'):
        assert _query(remote, term, {}) == _query(remote, term, {"EPISTEME_EXECUTOR": cluster})


def test_a_query_fans_out_to_every_shard(tmp_path: Path, cluster: str) -> None:
    from distributed import Client

    from episteme_core.bm25.shards import open_shards
    from episteme_core.executor.cluster import DaskExecutor
    from episteme_core.search.fanout import fanned
    from episteme_core.store.home import Home

    map_path = write_corpus(tmp_path, 20, settle=False)
    home = tmp_path / "home"
    (home).mkdir()
    (home / "config.json").write_text(json.dumps({"shard_size": 4}))
    assert episteme(home, ["pipeline", "--map", str(map_path)]).returncode == 0
    shards = open_shards(Home(home))
    assert len(shards.shards) >= 2
    executor = DaskExecutor("tcp://" + cluster.removeprefix("dask://"))
    try:
        spread = fanned(shards, executor)
        for terms in (["alpha1"], ["beta7", "gamma9"], ["nothing-here"]):
            assert spread.search(terms, 7) == shards.search(terms, 7)
        weights = {"gamma9": 0.5}  # query weighs terms only identifiers add so: the same on workers
        assert spread.search(["beta7", "gamma9"], 7, weights=weights) == shards.search(
            ["beta7", "gamma9"], 7, weights=weights) != shards.search(["beta7", "gamma9"], 7)
        def worker_of(shard: object) -> int:  # pickled by value: the workers cannot import this module
            return __import__("os").getpid()

        where = executor.ask_shards(shards.shards, worker_of)
        assert len(set(where)) == 2 and os.getpid() not in where  # shards pinned round the two workers
        assert executor.ask_shards(shards.shards, worker_of) == where  # and kept there
    finally:
        executor.close()
    with Client(cluster.replace("dask://", "tcp://")) as client:
        assert len(client.scheduler_info()["workers"]) == 2


def test_versions_that_differ_are_refused() -> None:
    from episteme_core.executor.cluster import check_versions

    ours = {"python": "3.11.7.final.0", "dask": "1", "distributed": "1", "cloudpickle": "3", "msgpack": "1",
            "episteme_core": "0.1"}
    same = {"client": {"packages": ours}, "scheduler": {"packages": {**ours, "episteme_core": None}},
            "workers": {"tcp://127.0.0.1:1": {"packages": ours}}}
    check_versions(same, "tcp://127.0.0.1:2")
    other = {**same, "workers": {"tcp://127.0.0.1:1": {"packages": {**ours, "episteme_core": "0.2"}}}}
    with pytest.raises(EpistemeError) as caught:
        check_versions(other, "tcp://127.0.0.1:2")
    assert caught.value.code == "INVALID_INPUT" and caught.value.details["node"] == "tcp://127.0.0.1:1"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_scheduler_and_a_worker_started_as_processes(tmp_path: Path) -> None:
    dask = shutil.which("dask", path=str(Path(sys.executable).parent))
    if dask is None:
        pytest.skip("the dask command is not installed next to this Python")
    port = _free_port()
    env = {**os.environ, "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env}
    scheduler = subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port),
                                  "--no-dashboard"], **quiet)  # type: ignore[call-overload]
    worker = subprocess.Popen([dask, "worker", f"tcp://127.0.0.1:{port}", "--host", "127.0.0.1",
                               "--nthreads", "1", "--no-dashboard", "--nworkers", "1"],
                              **quiet)  # type: ignore[call-overload]
    try:
        map_path = write_corpus(tmp_path, 8, settle=False)
        home = tmp_path / "home"
        where = f"dask://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            proc = episteme(home, ["pipeline", "--map", str(map_path), "--json"],
                            {"EPISTEME_EXECUTOR": where, "EPISTEME_DASK_TIMEOUT": "20"})
            if proc.returncode != 4 or time.monotonic() > deadline:  # 4: the scheduler is not up yet
                break
            time.sleep(0.5)
        assert proc.returncode == 0, proc.stderr.decode()
        assert _query(home, "alpha1", {}) == _query(home, "alpha1", {"EPISTEME_EXECUTOR": where})
    finally:
        for process in (worker, scheduler):
            process.terminate()
        for process in (worker, scheduler):
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
