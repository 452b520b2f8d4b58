"""``ask`` scores a paragraph as a fresh home would after an incremental re-run: its shards are scored
against the shard set's collection (live units, tokens, document frequencies of every shard asked),
as ``query`` scores them, not each small new shard against its own average length."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from episteme_core.store.commits import BUCKETS_FROM_ENV, forget_process_memory
from episteme_core.testing import invoke

# Files of very different lengths, so that a shard holding only the changed one has an average
# length far from the collection's.
FILES = {number: " ".join(["rope sail anchor island"] * (1 + 6 * number)) for number in range(6)}


def _run(*args: str) -> dict[str, Any]:
    forget_process_memory()
    result = invoke(*args, "--json")
    assert result.exit_code == 0, result.stdout + result.stderr
    data: dict[str, Any] = json.loads(result.stdout)["data"]
    return data


def _pipeline(folder: Path, home: Path, files: dict[int, str], version: int) -> None:
    entries = []
    for number, text in files.items():
        path = folder / f"f{number}.txt"
        if not path.exists() or path.read_text("utf-8") != text:
            path.write_text(text, "utf-8")
            stamp = 1_700_000_000_000_000_000 + version
            os.utime(path, ns=(stamp, stamp))
        entries.append({"sourceUrl": f"https://example.org/f{number}", "localPath": path.name,
                        "contentType": "text/plain"})
    (folder / "map.json").write_text(json.dumps(entries), "utf-8")
    _run("pipeline", "--map", str(folder / "map.json"), "--home", str(home))


def _scores(home: Path) -> dict[str, float]:
    return {p["ref"]: p["score"] for p in _run("ask", "sail", "--home", str(home))["paragraphs"]}


def test_ask_after_a_change_scores_as_a_fresh_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BUCKETS_FROM_ENV, "4")  # the changed-buckets path: old shard kept, a small new one
    folder, home, fresh = tmp_path / "files", tmp_path / "home", tmp_path / "fresh"
    folder.mkdir()
    files = dict(FILES)
    _pipeline(folder, home, files, 0)
    files[0] = "whale sail"  # the changed file: short, in a shard of its own
    _pipeline(folder, home, files, 1)
    monkeypatch.delenv(BUCKETS_FROM_ENV)  # the fresh home: one shard of the final files
    _run("pipeline", "--map", str(folder / "map.json"), "--home", str(fresh))
    assert len(list((home / "shards" / "objects").rglob("*.shard"))) == 2
    assert len(list((fresh / "shards" / "objects").rglob("*.shard"))) == 1
    incremental, whole = _scores(home), _scores(fresh)
    assert incremental and incremental == whole
