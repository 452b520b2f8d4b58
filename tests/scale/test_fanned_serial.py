"""A fanned-out shard set answers ``query`` as the set it wraps does, without Dask: the seam the Dask
executor uses (``FannedShards``) is exercised on every machine, with the serial executor."""

from __future__ import annotations

import json
from pathlib import Path

from episteme_core.testing import run_cli


def test_a_query_over_fanned_shards_equals_the_local_one(tmp_path: Path) -> None:
    from episteme_core.bm25.shards import open_shards
    from episteme_core.executor.base import SerialExecutor
    from episteme_core.records.canonical import canonical_bytes
    from episteme_core.records.convert import unstructure
    from episteme_core.search.fanout import FannedShards
    from episteme_core.search.query import query
    from episteme_core.store.home import Home

    entries = []
    for number in range(6):
        words = " ".join(f"alpha{(number + i) % 5} beta{i % 3}" for i in range(30))
        (tmp_path / f"d{number}.txt").write_text(words + "\n\n" + "gamma delta " * 10, "utf-8")
        entries.append({"sourceUrl": f"https://example.org/d{number}", "localPath": f"d{number}.txt",
                        "contentType": "text/plain"})
    (tmp_path / "map.json").write_text(json.dumps(entries))
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.json").write_text(json.dumps({"shard_size": 2}))
    run = run_cli(["--home", str(home), "pipeline", "--map", str(tmp_path / "map.json"), "--json"])
    assert run.exit_code == 0, run.stderr
    shards = open_shards(Home(home))
    assert len(shards.shards) > 1
    spread = FannedShards(shards, SerialExecutor())
    for text in ("alpha1", "beta2 gamma", '"gamma delta" alpha3'):
        local = query(Home(home), text, limit=10, shard_set=shards)
        remote = query(Home(home), text, limit=10, shard_set=spread)
        assert local.results
        assert canonical_bytes(unstructure(remote)) == canonical_bytes(unstructure(local))
