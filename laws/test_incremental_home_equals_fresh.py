"""IncrementalHomeEqualsFresh: after any sequence of changed, added and forgotten files and re-runs, a home answers as a fresh build of the final files.

Each re-run of ``pipeline`` takes the changed-buckets paths (every stage is bucketed here: the
threshold is lowered to 4 entries), so the index keeps its old shards, marks the changed documents'
rows deleted and builds small shards for them; a fresh home of the final map holds one shard. The
documents and chunks stages are the same bytes; the shard layouts differ by design, and every query
gives the same hits, with the same scores to the bit, and the same totals.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from episteme_core.store.commits import BUCKETS_FROM_ENV, forget_process_memory
from episteme_core.testing import invoke

VOCABULARY = ["harpoon", "whale", "sea", "ship", "rope", "sail", "storm", "island", "compass", "anchor"]
QUERIES = [*VOCABULARY, "whale sea", "storm ship rope", "anchor island compass harpoon"]
CLI_QUERIES = ["whale", "storm ship rope"]

PARAGRAPH = st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=14).map(" ".join)
TEXT = st.lists(PARAGRAPH, min_size=1, max_size=3).map("\n\n".join)
# one round of edits: (what, which file (modulo the files there are), the new text)
EDIT = st.tuples(st.sampled_from(["change", "add", "forget"]), st.integers(0, 63), TEXT)
ROUNDS = st.lists(st.lists(EDIT, min_size=1, max_size=3), min_size=1, max_size=3)


def _run(*args: str) -> dict[str, Any]:
    forget_process_memory()  # every command reads the files as a new process would
    result = invoke(*args, "--json")
    assert result.exit_code == 0, result.stdout + result.stderr
    data: dict[str, Any] = json.loads(result.stdout)["data"]
    return data


def _write(folder: Path, files: dict[int, str], version: int) -> Path:
    """The files (number -> text) and the map naming them; times set apart per version."""
    entries = []
    for number, text in sorted(files.items()):
        path = folder / f"f{number:03d}.txt"
        if not path.exists() or path.read_text("utf-8") != text:
            path.write_text(text, "utf-8")
            os.utime(path, ns=(1_700_000_000_000_000_000 + version, 1_700_000_000_000_000_000 + version))
        entries.append({"sourceUrl": f"https://example.org/f{number}", "localPath": path.name,
                        "contentType": "text/plain"})
    map_path = folder / "map.json"
    map_path.write_text(json.dumps(entries), "utf-8")
    return map_path


def _stages(home: Path) -> dict[str, bytes]:
    return {str(p.relative_to(home)): p.read_bytes() for stage in ("documents", "chunks")
            for p in sorted((home / stage).rglob("*")) if p.is_file()}


def _answers(home: Path) -> list[Any]:
    """Every query's hits (chunk id, exact score), total, and the CLI's results."""
    from episteme_core.bm25.shards import collection_of, open_shards
    from episteme_core.store.home import Home

    forget_process_memory()
    shard_set = open_shards(Home(home))
    answers: list[Any] = []
    for query in QUERIES:
        hits, total = shard_set.search(query, 10)
        answers.append((query, [(hit.chunk_id, hit.score) for hit in hits], total))
        terms = shard_set.terms(query)
        collection = collection_of(terms, shard_set.shards)
        idf = shard_set.idf(terms)
        for shard in shard_set.shards:  # plain Python and numpy score a shard alike, to the bit
            assert shard.ranked(terms, 50, idf=idf, collection=collection, vectorized=True) == shard.ranked(
                terms, 50, idf=idf, collection=collection, vectorized=False)
    for query in CLI_QUERIES:  # the command's results too: snippets, rerank, what a user reads
        found = _run("query", "--term", query, "--home", str(home), "--limit", "10")
        answers.append((query, found["total"], [(r["chunkId"], r["score"], r["snippet"]) for r in found["results"]]))
    return answers


def _asked(home: Path) -> dict[tuple[str, str, str], float]:
    """Each paragraph ``ask`` shows for each query, by (query, ref, text): its score. ``ask``'s reader
    names a shard's best candidates shard by shard, so which paragraphs it names may follow the shard
    layout; the score of each it names is the collection's, whatever the layout."""
    found: dict[tuple[str, str, str], float] = {}
    for query in CLI_QUERIES:
        for paragraph in _run("ask", query, "--home", str(home))["paragraphs"]:
            for ref in (paragraph["ref"], *paragraph["alsoAt"]):
                found[(query, ref, paragraph["text"])] = paragraph["score"]
    return found


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(first=st.lists(TEXT, min_size=5, max_size=10), rounds=ROUNDS)
def test_an_incremental_home_answers_as_a_fresh_one(first: list[str], rounds: list[list[tuple[str, int, str]]]
                                                    ) -> None:
    saved = os.environ.get(BUCKETS_FROM_ENV)
    os.environ[BUCKETS_FROM_ENV] = "4"
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            folder, home, fresh = root / "files", root / "home", root / "fresh"
            folder.mkdir()
            files = dict(enumerate(first))
            next_number = len(files)
            _run("pipeline", "--map", str(_write(folder, files, 0)), "--home", str(home))
            for version, edits in enumerate(rounds, start=1):
                captured = sorted(files)  # what the home holds: a file added this round is not there
                for what, which, text in edits:
                    present = sorted(files)
                    if what == "add":
                        files[next_number] = text
                        next_number += 1
                    elif what == "change":
                        files[present[which % len(present)]] = text
                    elif len(present) > 1 and (held := [n for n in captured if n in files]):
                        number = held[which % len(held)]  # forget: gone from the home and the map
                        del files[number]
                        (folder / f"f{number:03d}.txt").unlink()
                        _run("forget", "--source", f"https://example.org/f{number}", "--home", str(home))
                map_path = _write(folder, files, version)
                _run("pipeline", "--map", str(map_path), "--home", str(home))
            _run("pipeline", "--map", str(folder / "map.json"), "--home", str(fresh))
            assert _stages(home) == _stages(fresh)
            assert _answers(home) == _answers(fresh)
            asked, asked_fresh = _asked(home), _asked(fresh)
            shared = asked.keys() & asked_fresh.keys()
            assert bool(shared) == bool(asked_fresh)  # an answer in one home is an answer in the other
            assert {key: asked[key] for key in shared} == {key: asked_fresh[key] for key in shared}
    finally:
        if saved is None:
            os.environ.pop(BUCKETS_FROM_ENV, None)
        else:
            os.environ[BUCKETS_FROM_ENV] = saved
        forget_process_memory()
