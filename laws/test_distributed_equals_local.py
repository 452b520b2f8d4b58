"""DistributedEqualsLocal: a query whose shards are fanned out to Dask workers (a LocalCluster on
127.0.0.1) returns the same hits, scores and total, to the byte, as the same query in one process."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from episteme_core.testing import run_cli

from ._retrieval_world import WORDS

pytest.importorskip("distributed", reason="the dask extra (episteme-core[dask]) is not installed")


@pytest.fixture(scope="module")
def executor(tmp_path_factory) -> Iterator[tuple[object, Path]]:  # type: ignore[no-untyped-def]
    """A Dask executor on a 2-worker LocalCluster, and a home of several shards to ask."""
    from distributed import LocalCluster

    from episteme_core.executor.cluster import DaskExecutor

    work = tmp_path_factory.mktemp("corpus")
    entries = []
    for number in range(12):
        text = "\n\n".join(" ".join(WORDS[(number * 7 + i * 3 + j) % len(WORDS)] for j in range(25))
                           for i in range(4))
        (work / f"d{number}.txt").write_text(text, "utf-8")
        entries.append({"sourceUrl": f"https://example.org/d{number}", "localPath": f"d{number}.txt",
                        "contentType": "text/plain"})
    (work / "map.json").write_text(json.dumps(entries))
    home = work / "home"
    home.mkdir()
    (home / "config.json").write_text(json.dumps({"shard_size": 5}))
    run = run_cli(["--home", str(home), "pipeline", "--map", str(work / "map.json"), "--max-chars", "300",
                   "--overlap-chars", "0", "--json"])
    assert run.exit_code == 0, run.stderr
    with LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0") as cluster:
        spread = DaskExecutor(cluster.scheduler_address)
        try:
            yield spread, home
        finally:
            spread.close()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(terms=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4), k=st.integers(min_value=1, max_value=30),
       exact=st.booleans())
def test_a_fanned_out_query_equals_the_local_one(executor, terms, k, exact) -> None:  # type: ignore[no-untyped-def]
    from episteme_core.bm25.shards import open_shards
    from episteme_core.records.canonical import canonical_bytes
    from episteme_core.records.convert import unstructure
    from episteme_core.search.fanout import fanned
    from episteme_core.search.query import query
    from episteme_core.store.home import Home

    spread, home = executor
    shards = open_shards(Home(home))
    assert len(shards.shards) > 2
    assert fanned(shards, spread).search(terms, k) == shards.search(terms, k)
    text = " ".join(terms)
    local = query(Home(home), text, limit=min(k, 100), exact=exact, shard_set=shards)
    remote = query(Home(home), text, limit=min(k, 100), exact=exact, shard_set=fanned(shards, spread))
    assert canonical_bytes(unstructure(remote)) == canonical_bytes(unstructure(local))
