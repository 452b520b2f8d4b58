"""The analysed words of each chunk's text, stored in its shard: what a query's rerank reads instead
of the text.

The proximity rerank (``search.proximity``) and the non-prose weighing (``query.prose_factor``) of a
query's best passages need, for each chunk, the term of each word of its text (``analyzer.words``,
stemmed as the index stems it), its text's length and whether it is one of a book's non-prose parts.
Built once, with the shard, they cost a query a few array reads per candidate instead of parsing
its stored JSON and analysing its text again. Arrays (section ``words``, layout ``LAYOUT``):

- ``rowWords`` (u8, 2 rows + 1): for row ``r``, ``[2r]`` is where its words begin in ``wordTerms``,
  ``[2r + 1]`` its text's length in characters times 2, plus 1 where its ``paragraphKind`` is one of
  ``NON_PROSE_KINDS``, and ``[2r + 2]`` where the next row's words begin (one read gives all three);
- ``wordTerms`` (u2, or u4 past 65,535 terms): each word's term, as its id in the shard's vocabulary.

Only a shard of one language has them (every word's stem is then a term of its vocabulary); a
shard built before them, or of several languages, is answered from its rows' text as before.
"""

from __future__ import annotations

import array
import sys
from collections.abc import Callable, Sequence
from typing import Any

from episteme_core.records.trust import NON_PROSE_KINDS
from episteme_core.text.analyzer import stemmer, words

# shards meta ``layout``: 4 compresses the stored rows with Zstandard (``bm25.rows``), 3 deflated them;
# 2 added the ``words`` section; absent, 1: before it. The indexer rebuilds shards of another layout;
# a reader opens them all.
LAYOUT = 4


class _TermIds(dict[str, int]):
    """Normalized word -> the vocabulary id of its stem, each distinct word stemmed once, on first
    sight (``KeyError`` where the stem is not a term)."""

    def __init__(self, position: dict[str, int], stem: Callable[[str], str]) -> None:
        super().__init__()
        self._position, self._stem = position, stem

    def __missing__(self, word: str) -> int:
        found = self[word] = self._position[self._stem(word)]
        return found


def word_arrays(views: Sequence[dict[str, Any]], language: str,
                vocab: Sequence[str]) -> dict[str, tuple[str, bytes]]:
    """The ``words`` section of a one-language shard over ``views`` (``fields.indexed`` rows, in row
    order) whose sorted vocabulary is ``vocab``; empty when a word's term is not in it (never for
    text the shard indexed: left to the text path rather than stored wrong)."""
    term_ids = _TermIds(dict(zip(vocab, range(len(vocab)), strict=True)), stemmer(language))
    kind = "u2" if len(vocab) <= 0xFFFF else "u4"
    terms = array.array("H" if kind == "u2" else "I")
    rows = array.array("Q", [0])
    for view in views:
        text: str = view["text"]
        try:
            terms.extend(map(term_ids.__getitem__, words(text)))
        except KeyError:
            return {}
        rows.append(2 * len(text) + (view.get("paragraphKind") in NON_PROSE_KINDS))
        rows.append(len(terms))
    if sys.byteorder == "big":  # pragma: no cover - the shard's arrays are little-endian
        terms.byteswap()
        rows.byteswap()
    return {"rowWords": ("u8", rows.tobytes()), "wordTerms": (kind, terms.tobytes())}


class WordSpans:
    """Where each row's words lie among the tokens a shard build numbers (``build.bm25_arrays``):
    the tokenizer records them as it goes (``record``), the numbering hands over every token's term
    id (``take``), and ``arrays`` is then the ``words`` section, the text analysed once for both."""

    # rows gathered per step of ``take``: its index temporaries stay a few MB
    STEP_ROWS = 1 << 13

    def __init__(self, rows: int) -> None:
        self.starts = array.array("q", [-1]) * rows  # a row's first word, in the build's token order
        self.counts = array.array("q", [0]) * rows
        self.at = 0  # tokens of the units numbered so far
        self.terms: Any = None

    def record(self, unit: Sequence[int], spans: Sequence[tuple[int, int]], tokens: int) -> None:
        """A unit's rows and their words' ``(offset, count)`` among its ``tokens`` tokens; a row in
        several units (overlapping runs) keeps its first."""
        for row, (offset, count) in zip(unit, spans, strict=True):
            if self.starts[row] < 0:
                self.starts[row] = self.at + offset
                self.counts[row] = count
        self.at += tokens

    def take(self, token_terms: Any, vocabulary: int) -> None:
        """Every token's term id (numpy, in the build's token order), over ``vocabulary`` terms: each
        row's words' ids gathered in row order (nothing when a row was never tokenized)."""
        import numpy as np

        starts = np.frombuffer(self.starts, dtype=np.int64)
        if starts.size and int(starts.min()) < 0:
            return
        counts = np.frombuffer(self.counts, dtype=np.int64)
        kind = np.uint16 if vocabulary <= 0xFFFF else np.uint32
        pieces = []
        for low in range(0, starts.size, self.STEP_ROWS):
            first, many = starts[low : low + self.STEP_ROWS], counts[low : low + self.STEP_ROWS]
            before = np.cumsum(many) - many
            at = np.repeat(first - before, many) + np.arange(int(many.sum()), dtype=np.int64)
            pieces.append(token_terms[at].astype(kind))
        self.terms = np.concatenate(pieces) if pieces else np.zeros(0, dtype=kind)

    def arrays(self, views: Sequence[dict[str, Any]]) -> dict[str, tuple[str, bytes]] | None:
        """The ``words`` section (as ``word_arrays`` makes it) over ``views`` in row order; None when
        ``take`` gathered nothing."""
        import numpy as np

        if self.terms is None:
            return None
        rows = np.zeros(2 * len(views) + 1, dtype="<u8")
        rows[1::2] = np.fromiter((2 * len(view["text"]) + (view.get("paragraphKind") in NON_PROSE_KINDS)
                                  for view in views), dtype=np.int64, count=len(views))
        rows[2::2] = np.cumsum(np.frombuffer(self.counts, dtype=np.int64))
        kind = "u2" if self.terms.dtype == np.uint16 else "u4"
        terms = self.terms.astype(f"<{kind}").tobytes()
        return {"rowWords": ("u8", rows.tobytes()), "wordTerms": (kind, terms)}
