"""Hypothesis strategies shared by the ask laws: in-memory shards of small-vocabulary paragraphs,
questions over the same words, and readers that return whatever hypothesis makes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

from episteme_core.ask.base_reader import BaseReader
from episteme_core.ask.memory import MemoryChunk, MemoryShard
from episteme_core.records.reading import ReaderSpec, ReadReply, ReadRequest

WORDS = ("whale", "sea", "ship", "truth", "ball", "tea", "code", "test", "Straße", "東京", "café")
SOURCES = ("books", "claude", "file", "intent")  # builtin sources only: plugins may be absent

times = st.one_of(
    st.none(),
    st.dates().map(lambda d: d.isoformat()),
    st.datetimes(timezones=st.sampled_from([None]) | st.timezones()).map(lambda t: t.isoformat()),
    st.just("not a time"),
)
short_texts = st.lists(st.sampled_from(WORDS) | st.text(max_size=8), min_size=1, max_size=12).map(" ".join)
# now and then a paragraph long enough that an answer shows its best window (``candidates.excerpted``)
texts = st.one_of(short_texts, short_texts, short_texts,
                  short_texts.map(lambda text: (text + ". ") * (1000 // (len(text) + 2) + 1)))


@st.composite
def shard_sets(draw: Any) -> list[MemoryShard]:
    shards = []
    for s, source in enumerate(draw(st.lists(st.sampled_from(SOURCES), min_size=1, max_size=4))):
        chunks = []
        for n, (text, time) in enumerate(draw(st.lists(st.tuples(texts, times), max_size=8)), start=1):
            record = f"rec:{source}/{s}"
            chunks.append(MemoryChunk(f"{record}#{n}", text, record, n, time, source))
        shards.append(MemoryShard(f"{source}-{s:04d}", source, chunks))
    return shards


questions = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)
labels = st.one_of(
    st.from_regex(r"p[0-9]{1,2}", fullmatch=True), st.text(max_size=30), st.integers(), st.none(),
    st.floats(allow_nan=True), st.lists(st.integers(), max_size=2),
)


class ScriptedReader(BaseReader):
    """A reader that answers each read with labels (and scores) drawn by hypothesis, or raises."""

    kind = "scripted"

    def __init__(self, replies: Sequence[Any]) -> None:
        super().__init__(ReaderSpec(name="scripted", kind="scripted", slots=2, timeout=5.0))
        self.replies = list(replies)
        self.calls = 0

    def read(self, request: ReadRequest) -> ReadReply:
        reply = self.replies[self.calls % len(self.replies)] if self.replies else ()
        self.calls += 1
        if reply == "raise":
            raise RuntimeError("scripted failure")
        return ReadReply(labels=tuple(reply), scores={str(x): 1.0 for x in reply if isinstance(x, str)})


replies = st.lists(st.one_of(st.just("raise"), st.lists(labels, max_size=10)), min_size=1, max_size=5)


def stored(shards: Sequence[MemoryShard]) -> dict[str, MemoryChunk]:
    return {c.id: c for s in shards for c in s.chunks.values()}


def ignore(*args: Any, **kwargs: Any) -> None:
    return None
