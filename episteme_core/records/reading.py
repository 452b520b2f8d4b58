"""What a reader is handed and hands back: candidates, one read's request and reply, and its spec.

A reader only names. It receives ``ReadRequest`` (the question and candidates ``p1..pN``) and
returns ``ReadReply`` (labels, and optionally a score per label for fusing readers). Whatever else
it produces is discarded: the answer is built from the stored paragraphs the labels point to.
``config.json`` entries (``ReaderSpec``) say which readers to open, how many parallel slots each has
and how long one read may take. The contracts (``ReaderKind``, ``Reader``) are in ``kernel.contracts``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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
    best_score: float = 0.0  # the best BM25 score of any candidate of this question, in any shard

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
