"""The reader contract: a question and one shard's labelled paragraphs in, labels out.

A reader only names. It receives ``ReadRequest`` (the question and candidates ``p1..pN``) and
returns ``ReadReply`` (labels, and optionally a score per label for fusing readers). Whatever else
it produces is discarded: the answer is built from the stored paragraphs the labels point to.

A reader *kind* is registered through ``episteme_readers`` as a factory with a ``name`` (the kind:
``bm25``, ``http``, ``llama``) and ``open(spec) -> Reader``; ``config.json`` entries (``ReaderSpec``)
say which readers to open, how many parallel slots each has and how long one read may take.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import attrs


@attrs.frozen
class Candidate:
    """One paragraph offered to a reader: its label (``p1``...), exact text and BM25 score.

    ``coverage`` (0..1) is the IDF-weighted share of the question's terms the paragraph holds, with
    IDF over all shards searched: unlike BM25 scores (whose IDF is per shard), it compares across
    shards, so a shard where the question only grazes common words can be told apart."""

    label: str
    text: str
    score: float
    ref: str  # "<record id>#<n>"
    time: str | None = None
    coverage: float = 1.0


@attrs.frozen
class ReadRequest:
    """One read: the question and one shard's candidates, labelled ``p1..pN`` in BM25 order."""

    question: str
    shard: str
    source: str
    candidates: tuple[Candidate, ...]
    best_coverage: float = 1.0  # the best coverage of any candidate of this question, in any shard

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(c.label for c in self.candidates)


@attrs.frozen
class ReadReply:
    """What a reader returns: labels (as given; the pool validates them) and optional scores."""

    labels: tuple[Any, ...]
    scores: Mapping[str, float] | None = None


class ReadError(Exception):
    """A read that failed (transport error, timeout, junk reply); the pool retries, then falls back."""


@attrs.frozen
class ReaderSpec:
    """A configured reader: its name, kind, parallel slots, timeout (s) and kind-specific options."""

    name: str
    kind: str
    slots: int = 1
    timeout: float = 30.0
    options: Mapping[str, Any] = attrs.field(factory=dict)


class Reader(Protocol):
    """An opened reader. ``read`` may be called from several threads, at most ``slots`` at once."""

    name: str
    kind: str
    slots: int
    timeout: float

    def health(self) -> None:
        """Raise ``ReadError`` if the reader cannot serve reads now."""

    def begin_run(self, question: str, shards: Sequence[str]) -> None:
        """Told once per question, before its reads, which shards will be read (may be ignored)."""

    def read(self, request: ReadRequest) -> ReadReply:
        """Name the labels of ``request`` that bear on its question, or raise ``ReadError``."""

    def close(self) -> None:
        """Release connections, models, threads."""


class BaseReader:
    """Defaults for the optional parts of ``Reader``; subclass and implement ``read``."""

    kind = "base"

    def __init__(self, spec: ReaderSpec) -> None:
        self.spec = spec
        self.name = spec.name
        self.slots = spec.slots
        self.timeout = spec.timeout

    def health(self) -> None:
        return None

    def begin_run(self, question: str, shards: Sequence[str]) -> None:
        return None

    def read(self, request: ReadRequest) -> ReadReply:
        raise NotImplementedError

    def close(self) -> None:
        return None


from episteme_core.components import ReaderKind as ReaderKind  # noqa: E402  (the one contract, re-exported)
