"""Second-stage ranking by term proximity: BM25 plus a bonus for query terms that sit close together.

BM25 scores a passage by its words alone, wherever they sit: a passage whose query words are spread
over unrelated sentences scores as well as one where they meet in one sentence. The best BM25
passages (``RERANK_DEPTH`` of them) are therefore scored again with the proximity feature of Tao and
Zhai (SIGIR 2007, "An exploration of proximity measures in information retrieval"): ``MinDist``, the
smallest distance in words between two different query terms of the passage, turned into a bounded
bonus ``WEIGHT * (log(ALPHA + exp(-MinDist)) - log(ALPHA))``. Two query terms side by side add
``WEIGHT * log((ALPHA + e^-1) / ALPHA)`` (1.6 at the defaults), terms five words apart almost
nothing, a passage with one distinct query term nothing. ``ALPHA`` is the paper's; ``WEIGHT`` was
chosen on the dev question set (``bench/quality.py``; 1.5 to 2.5 gave the same hits).

The bonus is never negative and only the top ``RERANK_DEPTH`` passages get one, so the final scores
still sort the whole result list: every reranked passage scores at least its BM25 score, which is
at least the BM25 score of any passage below the depth.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence

from episteme_core.text.analyzer import DEFAULT_LANGUAGE, stem_words, words

RERANK_DEPTH = 30  # the best BM25 passages scored again
ALPHA = 0.3
WEIGHT = 2.0


def matched_words(text: str, terms: Collection[str],
                  languages: Sequence[str] = (DEFAULT_LANGUAGE,)) -> list[tuple[int, str]]:
    """``(word number, term)`` of every word of ``text`` (``analyzer.words``) that is one of the
    query ``terms`` once stemmed as the index stems it (in the first of ``languages`` that makes it
    one)."""
    found = words(text)
    if len(languages) == 1:
        stems = stem_words(found, languages[0])
        return [(number, term) for number, term in enumerate(stems) if term in terms]
    each = [stem_words(found, language) for language in languages]
    out = []
    for number in range(len(found)):
        for stems in each:
            if stems[number] in terms:
                out.append((number, stems[number]))
                break
    return out


def min_distance(matches: Sequence[tuple[int, str]]) -> int | None:
    """The smallest distance in words between two different query terms (None: fewer than two)."""
    best: int | None = None
    last: dict[str, int] = {}
    for number, term in matches:
        for other, seen in last.items():
            if other != term and (best is None or number - seen < best):
                best = number - seen
        last[term] = number
    return best


def bonus(distance: int | None) -> float:
    """The proximity bonus of a passage whose closest two different query terms are ``distance``
    words apart (0 for None)."""
    if distance is None:
        return 0.0
    return WEIGHT * (math.log(ALPHA + math.exp(-distance)) - math.log(ALPHA))


def text_bonus(text: str, terms: Collection[str], languages: Sequence[str] = (DEFAULT_LANGUAGE,)) -> float:
    """``bonus`` of a passage's text for the query ``terms``."""
    return bonus(min_distance(matched_words(text, terms, languages)))


def reorder(scores: Sequence[float], bonuses: Sequence[float]) -> list[int]:
    """The order (indices) of passages ranked best first by BM25 score ``scores`` once the first
    ``len(bonuses)`` get their bonus; ties keep the given order."""
    final = [score + (bonuses[i] if i < len(bonuses) else 0.0) for i, score in enumerate(scores)]
    return sorted(range(len(scores)), key=lambda i: (-final[i], i))
