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
