"""Readers during a commit in flight: while a writer is at work (ingest and pipeline commit the log,
then the chunks, then the shards), query, ask and the server answer from the shards committed before
it, whole, and say so (INDEX_UPDATING); never STALE_INDEX because of it, never a mix. Once no writer
is at work (it finished, or died), shards behind the chunks are stale and refused again."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from episteme_core.ask.run import AskOptions, ask
from episteme_core.chunking.run import chunk_home
from episteme_core.errors import EpistemeError
from episteme_core.kernel.context import RunContext
from episteme_core.kernel.loader import load_plugins
from episteme_core.search.query import query
from episteme_core.serve.builtin_tools import builtin_tools
from episteme_core.serve.calls import Caller
from episteme_core.serve.shardcache import ShardCache
from episteme_core.store.home import Home
from episteme_core.testing import invoke

from .conftest import commit, make_document, ok

ROUNDS = 6
SIZES = ("400", "2500")  # --max-chars of the alternating re-chunks: the chunks really change


def _home(tmp_path: Path) -> Home:
    root = tmp_path / "home"
    commit(root, [
        make_document("https://e.org/a", [("Fetch", ["fetch a request " * 40, "abort the fetch " * 30]),
                                          ("Header", ["a header value " * 50])]),
        make_document("book:c/x", [("x", ["a fetch in a book", "a header value again"])], kind="books",
                      document_type="record"),
    ])
    ok("--home", str(root), "chunk", "--max-chars", "300", "--overlap-chars", "0")
    ok("--home", str(root), "index")
    return Home(root)


def _rechunk(home: Home) -> None:
    """Commit other chunks (the shards now lag behind them), as an ingest does before it indexes."""
    chunk_home(home, load_plugins().all("chunker"), max_chars=1000, overlap_chars=0)


def _warnings() -> tuple[list[dict[str, Any]], Any]:
    seen: list[dict[str, Any]] = []
    return seen, lambda code, message, **extra: seen.append({"code": code, "message": message, **extra})


def test_readers_answer_the_last_commit_while_a_writer_is_at_work(tmp_path: Path) -> None:
    home = _home(tmp_path)
    before = query(home, "fetch header")
    asked_before = ask(home, AskOptions(question="a fetch in a book"), plugins=load_plugins(),
                       warn=lambda *a, **k: None)
    cache = ShardCache(home)
    ctx = RunContext(command="pipeline", home=home, plugins=load_plugins())
    with ctx.writing():
        _rechunk(home)
        seen, warn = _warnings()
        assert query(home, "fetch header", warn=warn) == before
        [note] = seen
        assert note["code"] == "INDEX_UPDATING" and note["writer"]["command"] == "pipeline"
        assert "the chunks changed since the shards were built" in note["message"]
        seen, warn = _warnings()
        asked = ask(home, AskOptions(question="a fetch in a book"), plugins=load_plugins(), warn=warn)
        assert asked.paragraphs == asked_before.paragraphs and [n["code"] for n in seen] == ["INDEX_UPDATING"]
        served = cache.get()
        assert served.in_flight is not None and query(home, "fetch header", shard_set=served) == before
        caller = Caller(builtin_tools(), home, load_plugins(), cache.get)  # the MCP tools' path
        calls = (("query", {"term": "fetch header"}), ("ask", {"question": "a fetch in a book"}))
        for tool, arguments in calls:
            reply = caller.call(tool, arguments)
            assert reply.ok and [w["code"] for w in reply.warnings] == ["INDEX_UPDATING"], reply.text
        assert reply.data is not None and len(reply.data["paragraphs"]) == len(asked_before.paragraphs)
        cli = invoke("--home", str(home.root), "--json", "query", "--term", "fetch header")
        assert cli.exit_code == 0 and [w["code"] for w in cli.envelope["warnings"]] == ["INDEX_UPDATING"]
    # The writer left without indexing: the shards are stale now, for every reader.
    for attempt in (lambda: query(home, "fetch header"), cache.get):
        with pytest.raises(EpistemeError) as refused:
            attempt()
        assert refused.value.code == "STALE_INDEX" and refused.value.hint == "run episteme index"


def test_a_dead_writer_leaves_stale_shards_refused(tmp_path: Path) -> None:
    home = _home(tmp_path)
    _rechunk(home)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom episteme_core.store.lock import WriterLock\n"
         f"WriterLock(__import__('pathlib').Path({str(home.lock_path)!r}), 'pipeline').acquire()\n"
         "print('held', flush=True)\ntime.sleep(600)"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        cache = ShardCache(home)
        assert cache.get().in_flight["pid"] == holder.pid  # type: ignore[index]
        query(home, "fetch")  # answered from the last commit
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
        holder.stdout.close()  # type: ignore[union-attr]
    assert json.loads(home.lock_path.read_text())["pid"] == holder.pid  # its lock file is left behind
    for attempt in (lambda: query(home, "fetch"), cache.get):
        with pytest.raises(EpistemeError) as refused:
            attempt()
        assert refused.value.code == "STALE_INDEX"


def _text(words: int, seed: int) -> str:
    rng = random.Random(seed)
    vocabulary = [f"{a}{b}" for a in ("ka", "lo", "mi", "ne", "ru", "sa")
                  for b in ("ti", "vo", "be", "da", "fu")]
    paragraphs = []
    for _ in range(words // 80):
        paragraphs.append(" ".join(rng.choice(vocabulary) for _ in range(80)) + ".")
    return "\n\n".join(paragraphs) + "\n"


def _normalized(data: dict[str, Any]) -> str:
    """An answer without its shards' names (a re-chunk to earlier options builds new shard names)."""
    for result in data["results"]:
        result.pop("shard")
    return json.dumps(data, sort_keys=True)


def test_query_during_repeated_rechunking_pipelines_sees_only_whole_answers(tmp_path: Path) -> None:
    """A writer runs pipelines that re-chunk everything (alternating --max-chars) while a reader
    queries without pause: every answer is one of the two commits' answers, none is refused."""
    root = tmp_path / "home"
    files = tmp_path / "files"
    files.mkdir()
    entries = []
    for n in range(6):
        (files / f"{n}.txt").write_text(_text(6000, n))
        entries.append({"sourceUrl": f"https://e.org/{n}.txt", "localPath": f"{n}.txt"})
    (files / "map.json").write_text(json.dumps(entries))
    term = "kati lovo"

    def pipeline(size: str) -> list[str]:
        return ["--home", str(root), "pipeline", "--map", str(files / "map.json"), "--max-chars", size,
                "--overlap-chars", "0"]

    answers = set()
    for size in SIZES:
        ok(*pipeline(size))
        answers.add(_normalized(ok("--home", str(root), "query", "--term", term)))
    assert len(answers) == 2

    failures: list[str] = []
    done = threading.Event()

    def write() -> None:
        try:
            for round_ in range(ROUNDS):
                result = subprocess.run([sys.executable, "-m", "episteme_core", *pipeline(SIZES[round_ % 2])],
                                        capture_output=True, timeout=300)
                if result.returncode != 0:
                    failures.append(result.stderr.decode())
        finally:
            done.set()

    writer = threading.Thread(target=write)
    writer.start()
    reads = in_flight = 0
    while not done.is_set():
        result = invoke("--home", str(root), "--json", "query", "--term", term)
        reads += 1
        assert result.exit_code == 0, result.stderr  # never STALE_INDEX, never a half-open commit
        assert _normalized(result.envelope["data"]) in answers  # one commit's answer, whole
        in_flight += any(w["code"] == "INDEX_UPDATING" for w in result.envelope["warnings"])
    writer.join()
    assert not failures, failures
    assert reads > ROUNDS and in_flight > 0, (reads, in_flight)  # the window between the commits was hit
