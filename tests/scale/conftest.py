"""Helpers for the scale tests: a folder of small text files and the map that names them, and a
Dask LocalCluster on 127.0.0.1 shared by the session."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

WORDS = [f"{stem}{n}" for stem in ("alpha", "beta", "gamma", "delta", "omega") for n in range(40)]


def write_corpus(folder: Path, count: int, *, content_type: str = "text/plain", seed: int = 7,
                 settle: bool = True) -> Path:
    """``count`` text files of a few paragraphs under ``folder/files`` and ``folder/map.json``;
    ``settle`` waits until their times are old enough for the stat cache to record them."""
    rng = random.Random(seed)
    files = folder / "files"
    files.mkdir(parents=True, exist_ok=True)
    entries = []
    for number in range(count):
        text = "\n\n".join(" ".join(rng.choice(WORDS) for _ in range(30)) for _ in range(4))
        (files / f"f{number:05d}.txt").write_text(text, "utf-8")
        entries.append({"sourceUrl": f"https://example.org/f{number}",
                        "localPath": f"files/f{number:05d}.txt", "contentType": content_type})
    path = folder / "map.json"
    path.write_text(json.dumps(entries), "utf-8")
    if settle:
        time.sleep(0.25)  # past the stat cache's racy window (RACY_NS)
    return path


def stage_bytes(home: Path, stages: tuple[str, ...] = ("documents", "chunks", "shards")) -> dict[str, bytes]:
    """Every file of the derived stages, by path relative to the home."""
    return {str(path.relative_to(home)): path.read_bytes()
            for stage in stages for path in sorted((home / stage).rglob("*")) if path.is_file()}


@pytest.fixture(scope="session")
def cluster() -> Iterator[str]:
    """A LocalCluster of 2 single-threaded worker processes on 127.0.0.1; its dask:// address."""
    distributed = pytest.importorskip("distributed",
                                      reason="the dask extra (episteme-core[dask]) is not installed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1",
                                  dashboard_address="127.0.0.1:0", processes=True) as local:
        yield "dask://" + local.scheduler_address.removeprefix("tcp://")
