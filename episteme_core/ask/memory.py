"""An in-memory shard with the index's interface, for tests, laws and plugin authors' tests.

``MemoryShard(name, source, paragraphs)`` scores a paragraph (``search``), or a run of a record's
consecutive paragraphs (``passages``, runs cut as the index cuts them), by how many question words
it holds (a crude stand-in for BM25), sorted by (-score, chunk id) as real shards are.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import attrs

_WORD = re.compile(r"\w+")


@attrs.frozen
class MemoryChunk:
    """A stored paragraph: the fields ask reads from a chunk."""

    id: str
    text: str
    record_id: str
    paragraph: int
    time: str | None
    source: str
    attributes: dict[str, Any] = attrs.field(factory=dict)


def words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(text)]


class MemoryShard:
    def __init__(self, name: str, source: str, chunks: Sequence[MemoryChunk]) -> None:
        self.name = name
        self.source = source
        self.chunks = {c.id: c for c in chunks}

    @property
    def rows(self) -> int:
        return len(self.chunks)

    def document_frequency(self, term: str) -> int:
        """How many paragraphs hold ``term`` (an analyzed term, as the index counts them)."""
        from episteme_core.text.analyzer import query_terms

        return sum(1 for c in self.chunks.values() if term in query_terms(c.text))

    def search(self, text: str, k: int, filters: Any = None) -> list[tuple[str, float]]:
        wanted = set(words(text))
        scored = []
        for chunk in self.chunks.values():
            score = float(sum(1 for w in words(chunk.text) if w in wanted))
            if score > 0:
                scored.append((chunk.id, score))
        scored.sort(key=lambda pair: (-pair[1], pair[0]))
        return scored[:k]

    def passages(self, text: str, k: int, filters: Any = None, *,
                 idf: Any = None) -> list[tuple[float, list[str]]]:
        """Runs of consecutive paragraphs of one record (as the index builds them), scored alike."""
        from episteme_core.search.units import RUN_CHARS, runs_of

        wanted = set(words(text))
        records: dict[str, list[MemoryChunk]] = {}
        for chunk in self.chunks.values():
            records.setdefault(chunk.record_id, []).append(chunk)
        scored = []
        for record in sorted(records):
            ordered = sorted(records[record], key=lambda c: (c.paragraph, c.id))
            for run in runs_of(list(range(len(ordered))), [len(c.text) for c in ordered], RUN_CHARS):
                chunks = [ordered[i] for i in run]
                score = float(sum(1 for c in chunks for w in words(c.text) if w in wanted))
                if score > 0:
                    scored.append((score, [c.id for c in chunks]))
        scored.sort(key=lambda pair: (-pair[0], pair[1][0]))
        return scored[:k]

    def chunk(self, chunk_id: str) -> MemoryChunk:
        return self.chunks[chunk_id]
