"""The server's shards: opened once, reopened when a commit changes them, old sets still readable."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from episteme_core.errors import EpistemeError
from episteme_core.records.storage import LogEntry
from episteme_core.search.query import query
from episteme_core.serve.shardcache import ShardCache
from episteme_core.store.home import Home
from episteme_core.store.log import Log
from episteme_core.testing import invoke


@pytest.fixture
def home(example_template: Path, tmp_path: Path) -> Home:
    root = tmp_path / "home"
    shutil.copytree(example_template, root)
    return Home(root)


def test_an_unchanged_home_is_opened_once(home: Home) -> None:
    cache = ShardCache(home)
    first = cache.get()
    assert all(cache.get() is first for _ in range(5))
    assert cache.opened == 1


def test_a_commit_reopens_and_the_old_set_still_answers_after_its_files_are_gone(home: Home) -> None:
    cache = ShardCache(home)
    old = cache.get()
    before = query(home, "Elizabeth Darcy", shard_set=old)
    (home.root / "config.json").write_text(json.dumps({"shard_size": 400}), "utf-8")
    assert invoke("--home", str(home.root), "ingest", "--reshard").exit_code == 0
    assert not all(Path(shard.file.path).exists() for shard in old.shards)  # pruned by the commit
    new = cache.get()
    assert new is not old and cache.opened == 2 and len(new.shards) > len(old.shards)
    assert query(home, "Elizabeth Darcy", shard_set=old) == before  # still mapped, still itself
    assert query(home, "Elizabeth Darcy", shard_set=new) == query(home, "Elizabeth Darcy")


def test_a_capture_after_the_shards_makes_them_stale_as_the_cli_says(home: Home) -> None:
    cache = ShardCache(home)
    cache.get()
    Log(home.log_path).append(LogEntry(time="2026-01-01T00:00:00Z", command="snapshot",
                                       source="https://example.org/new", status="captured",
                                       snapshot_id="d" * 64))
    with pytest.raises(EpistemeError) as refused:
        cache.get()
    assert refused.value.code == "STALE_INDEX" and refused.value.hint == "run episteme index"
    with pytest.raises(EpistemeError) as again:  # not cached: refused each time until indexed
        cache.get()
    assert again.value.message == refused.value.message


def test_one_call_keeps_the_set_it_first_got_even_after_a_commit(home: Home) -> None:
    from episteme_core.kernel.loader import load_plugins
    from episteme_core.serve.tools import ToolCall

    cache = ShardCache(home)
    call = ToolCall(home=home, plugins=load_plugins(), open_shards=cache.get)
    first = call.shard_set()
    assert invoke("--home", str(home.root), "ingest", "--reshard").exit_code == 0
    assert call.shard_set() is first  # the call's answer stays within one commit
    assert cache.get() is not first  # the next call sees the new commit


def test_a_long_lived_cache_asks_each_set_it_opens_to_keep_warm(home: Home,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # The server pays numpy's import once, when it opens its shards; a one-query process never does.
    from episteme_core.bm25.shards import Bm25ShardSet

    warmed: list[object] = []
    monkeypatch.setattr(Bm25ShardSet, "keep_warm", lambda self: warmed.append(self))
    short = ShardCache(home)
    short.get()
    assert warmed == []
    server = ShardCache(home, long_lived=True)
    first = server.get()
    server.get()
    assert warmed == [first]
    server.forget()
    assert warmed == [first, server.get()]


def test_keeping_a_bm25_set_warm_imports_numpy_and_answers_the_same(home: Home) -> None:
    import subprocess
    import sys

    script = ("import sys; from pathlib import Path; from episteme_core.store.home import Home; "
              "from episteme_core.search.warm import ShardCache; "
              "from episteme_core.search.query import query; "
              f"home = Home(Path({str(home.root)!r})); cold = ShardCache(home).get(); "
              "a = query(home, 'Elizabeth Darcy', shard_set=cold); print('numpy' in sys.modules); "
              "warm = ShardCache(home, long_lived=True).get(); print('numpy' in sys.modules); "
              "print(query(home, 'Elizabeth Darcy', shard_set=warm) == a)")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True", "True"]


def _maps_numpy(pid: int) -> bool:
    return "_multiarray_umath" in Path(f"/proc/{pid}/maps").read_text()


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads the server's mapped files from /proc")
def test_the_server_opens_and_warms_its_shards_before_it_says_it_listens(home: Home, tmp_path: Path) -> None:
    """Its first call then costs what every later one does (numpy is loaded once the set is warm);
    a home without an index starts all the same, and its calls answer the CLI's error."""
    from .conftest import mcp_call, start_server

    served = start_server(home.root)
    try:
        assert _maps_numpy(served.proc.pid)
    finally:
        served.stop()
    bare = tmp_path / "bare"
    bare.mkdir()
    served = start_server(bare)
    try:
        assert not _maps_numpy(served.proc.pid)
        reply = mcp_call(served.url, "query", {"term": "Elizabeth"})
        assert reply.is_error, reply
        assert "index" in reply.content[0].text, reply.content[0].text
    finally:
        served.stop()
