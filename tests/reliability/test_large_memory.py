"""A shard build over 20,000 chunks runs in a real process under a 384 MiB address-space limit
(``RLIMIT_AS``) and writes the shard a build without the limit writes. The build holds each chunk's
index view and stored bytes, never its parsed row, lets a part's text go once its tokens are
counted, and scores the matrix a slice at a time: before that it needed more than 448 MiB of address
space here (the same command failed with ``MemoryError``), and 1 GiB of memory for a million chunks.
"""

from __future__ import annotations

import json
import os
import random
import resource
import shutil
import subprocess
import sys
from pathlib import Path

from episteme_core.chunking.paragraph import ParagraphChunker
from episteme_core.chunking.run import chunk_home
from episteme_core.chunking.window import WindowChunker
from episteme_core.records.evidence import Block, Document, Provenance, Section, Span, seal
from episteme_core.stages.documents import write_documents
from episteme_core.store.home import Home
from episteme_core.testing import validate

LIMIT = 384 << 20
CHUNKS = 20_000
PER_DOCUMENT = 100


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def _documents(count: int) -> list[Document]:
    """``count`` documents of ``PER_DOCUMENT`` sections, each one paragraph of 90 words drawn
    from 20,000 made-up words (Zipf-like): one chunk per section, about 1.8 KB of chunk JSON."""
    rng = random.Random(12)
    syllables = ("ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "be", "da", "fu", "go", "hi", "ju")
    words = sorted({"".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))) for _ in range(30_000)})
    weights = [1.0 / (rank + 1) for rank in range(len(words))]
    documents = []
    for d in range(count):
        sections = []
        for s in range(PER_DOCUMENT):
            text = " ".join(rng.choices(words, weights, k=90)) + "."
            heading = " ".join(rng.choices(words, weights, k=3))
            block = Block(id=f"p{s}", kind="paragraph", text=text, section_id=f"s{s}", anchor=f"s{s}",
                          span=Span(0, len(text)))
            sections.append(Section(id=f"s{s}", heading=heading, path=[heading], blocks=[block]))
        sha = f"{d:064x}"
        documents.append(seal(Document(
            id="", source=f"https://large.example/{d}", source_kind="http", snapshot_id=sha,
            source_sha256=sha, content_type="text/plain", document_type="spec", family="generic",
            authority="normative", title=f"doc {d}", status="ok", sections=sections,
            provenance=Provenance("episteme", "0", "text", "1", "generic", "1", sha, sha),
            url=f"https://large.example/{d}",
        )))
    return documents


def _reshard(home: Path, *, limited: bool) -> dict:
    proc = subprocess.run(
        [sys.executable, "-m", "episteme_core", "--json", "--home", str(home), "index", "--reshard",
         "--jobs", "1"], capture_output=True, timeout=600, preexec_fn=_limited if limited else None,
        env={**os.environ, "OPENBLAS_NUM_THREADS": "1"},
    )
    assert proc.returncode == 0, proc.stdout.decode()[-2000:] + proc.stderr.decode()[-2000:]
    envelope = json.loads(proc.stdout.decode().strip().splitlines()[-1])
    validate(envelope, "cli-envelope")
    return envelope["data"]  # type: ignore[no-any-return]


def _shards(home: Path) -> dict[str, str]:
    index = json.loads((home / "shards" / "index.json").read_text())
    return {entry["key"]: entry["sha256"] for entry in index["entries"]}


def test_a_reshard_of_20000_chunks_fits_in_384_mib_of_address_space(tmp_path: Path) -> None:
    free, limited = tmp_path / "free", tmp_path / "limited"
    free.mkdir()
    home = Home(free)
    write_documents(home, _documents(CHUNKS // PER_DOCUMENT))
    chunk_home(home, [ParagraphChunker(), WindowChunker()], max_chars=6000, overlap_chars=400)
    shutil.copytree(free, limited)
    expected = _reshard(free, limited=False)
    got = _reshard(limited, limited=True)
    assert got["chunks"] == expected["chunks"] == CHUNKS
    assert got["shards"] == 1 and _shards(limited) == _shards(free)
