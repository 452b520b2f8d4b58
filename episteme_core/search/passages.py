"""What a query reads of its candidate passages: each row's length and analysed words, each row's
JSON only where it is shown.

The best passages of a query are reranked (proximity, non-prose weighing) and joined where their
runs overlap before the page is cut; only the page's rows are shown. A shard that stores its rows'
analysed words (``words``, ``row_words``: the bm25 indexer's since layout 2) gives the rerank what
it needs without its rows' JSON or text; other shards (older ones, plugins', several languages) are
read from their rows' text, parsed once per query. Both give the same bonuses to the bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from episteme_core.search.proximity import bonus, matched_words, min_distance, text_bonus

if TYPE_CHECKING:
    from episteme_core.kernel.contracts import SearchableShard, SearchableShards

Key = tuple[str, int]  # (shard name, row)
NON_PROSE_WEIGHT = 0.5  # the share of its score a passage keeps when a book's contents hold its words


def prose_share(marked: Sequence[bool], counts: Sequence[int]) -> float:
    """What share of its score a passage keeps, from which of its rows are non-prose (``marked``)
    and how many of the query's words each holds (``counts``): 1, less where those words sit in
    non-prose rows, down to ``NON_PROSE_WEIGHT`` when all of them do."""
    found = sum(counts)
    if not found:
        return NON_PROSE_WEIGHT if all(marked) else 1.0
    prose = sum(count for count, flag in zip(counts, marked, strict=True) if not flag)
    return NON_PROSE_WEIGHT + (1 - NON_PROSE_WEIGHT) * prose / found


class PassageRows:
    """The rows of one query's candidates, each read once: lengths, rerank features, JSON."""

    def __init__(self, shard_set: SearchableShards, terms: Sequence[str], languages: list[str]) -> None:
        self.shard_set = shard_set
        self.wanted = set(terms)
        self.languages = languages
        self._shards: dict[str, Any] = {}
        self._json: dict[Key, dict[str, Any]] = {}
        self._one_row: dict[str, bool] = {}
        self._words: dict[Key, tuple[Any, int, bool]] = {}
        # shard -> the query's terms as (term id as the bytes of its rows' words, term); None: read text
        self._ids: dict[str, list[tuple[bytes, str]] | None] = {}

    def shard(self, name: str) -> SearchableShard:
        found = self._shards.get(name)
        if found is None:
            found = self._shards[name] = self.shard_set.shard(name)
        return found

    def one_row(self, name: str, filters: Any) -> bool:
        """Whether every hit of shard ``name`` shows its one row (``Hit.row``) for ``filters``: units
        of one row each (``one_row_units``), no row deleted and no filter on rows."""
        found = self._one_row.get(name)
        if found is None:
            shard: Any = self.shard(name)
            found = self._one_row[name] = bool(getattr(shard, "one_row_units", False)) and not shard.deleted
        return found and filters is None

    def json(self, key: Key) -> dict[str, Any]:
        """The row's stored JSON (parsed once)."""
        found = self._json.get(key)
        if found is None:
            found = self._json[key] = self.shard(key[0]).row_json(key[1])
        return found

    def _term_ids(self, name: str) -> list[tuple[bytes, str]] | None:
        """The query's terms that shard ``name``'s vocabulary holds, each with its id as its rows'
        words store it (``row_words``), when those words answer for the query's languages; None
        when the rows' text must be read."""
        if name in self._ids:
            return self._ids[name]
        shard: Any = self.shard(name)
        ids: list[tuple[bytes, str]] | None = None
        if getattr(shard, "words", False) and list(shard.languages) == self.languages:
            ids = []
            for term in sorted(self.wanted):
                tid = shard.known_term(term)
                if tid is not None:
                    ids.append((tid.to_bytes(shard.word_bytes, "little"), term))
        self._ids[name] = ids
        return ids

    def _row_words(self, key: Key) -> tuple[Any, int, bool]:
        found = self._words.get(key)
        if found is None:
            shard: Any = self.shard(key[0])
            found = self._words[key] = shard.row_words(key[1])
        return found

    def size(self, key: Key) -> int:
        """The length of the row's text in characters."""
        if self._term_ids(key[0]) is not None:
            return self._row_words(key)[1]
        return len(self.json(key)["text"])

    def length(self, keys: Sequence[Key]) -> int:
        """The length of a passage's text (its rows' texts joined by a blank line)."""
        return sum(self.size(key) for key in keys) + 2 * (len(keys) - 1)

    def text_of(self, keys: Sequence[Key]) -> str:
        """A passage's text (its rows' texts joined by a blank line), the JSON of rows not read before
        left unkept: what a deep page reads of the passages before it costs no memory per passage."""
        texts = [(self._json.get(key) or self.shard(key[0]).row_json(key[1]))["text"] for key in keys]
        return texts[0] if len(texts) == 1 else "\n\n".join(texts)

    def identity(self, keys: Sequence[Key]) -> tuple[tuple[str, tuple[int, ...]], tuple[bytes, ...]] | None:
        """What tells a passage's text from others without reading it: its class (the shard, each
        row's length) and each row's analysed words (``row_words``: a function of the row's text in
        one shard), so two passages of one class and the same text have the same identity; None for
        a shard whose rows' words are not stored (or are not the query's language)."""
        name = keys[0][0] if keys else ""
        if not keys or any(key[0] != name for key in keys) or self._term_ids(name) is None:
            return None
        rows = [self._row_words(key) for key in keys]
        return (name, tuple(row[1] for row in rows)), tuple(bytes(row[0]) for row in rows)

    def bonus(self, score: float, keys: Sequence[Key]) -> float:
        """What the rerank adds to a passage of ``score`` made of rows ``keys`` (one shard's): the
        proximity bonus of its text, and the change of score of ``prose_share``."""
        patterns = self._term_ids(keys[0][0]) if keys else None
        if patterns is None:
            rows = [self.json(key) for key in keys]
            found = text_bonus("\n\n".join(row["text"] for row in rows), self.wanted, self.languages)
            factor = prose_factor(rows, self.wanted, self.languages)
        else:
            shard: Any = self._shards[keys[0][0]]
            if len(patterns) < 2 and not shard.non_prose_rows:
                return 0.0  # no two query terms to be near, no non-prose row to weigh less
            found, factor = self._bonus_of_words(shard, keys, patterns)
        if factor != 1.0:
            found = (score + found) * factor - score
        return found

    def _bonus_of_words(self, shard: Any, keys: Sequence[Key],
                        patterns: list[tuple[bytes, str]]) -> tuple[float, float]:
        """``bonus`` and ``prose_share`` of a passage from its rows' analysed words (``shard``'s):
        their words are those of the rows' text joined (word numbers run on from row to row)."""
        width = shard.word_bytes
        if len(keys) == 1:  # one chunk: its words are the passage's
            terms, _, flag = shard.row_words(keys[0][1])
            matches = word_matches(terms, width, patterns)
            proximity = bonus(min_distance(matches)) if len(patterns) > 1 else 0.0
            return proximity, prose_share([flag], [len(matches)]) if flag else 1.0
        matches = []
        counts: list[int] = []
        marked: list[bool] = []
        base = 0
        for key in keys:
            terms, _, flag = self._row_words(key)
            marked.append(flag)
            found = word_matches(terms, width, patterns)
            counts.append(len(found))
            matches.extend((base + number, term) for number, term in found)
            base += len(terms) // width
        proximity = bonus(min_distance(matches)) if len(patterns) > 1 else 0.0
        return proximity, prose_share(marked, counts) if any(marked) else 1.0


def word_matches(terms: bytes, width: int, patterns: Sequence[tuple[bytes, str]]) -> list[tuple[int, str]]:
    """``(word number, term)`` of each word of a row whose term is one of the query's: ``terms`` are
    the row's term ids (``width`` little-endian bytes each), ``patterns`` each query term's id as
    those bytes. Found by ``bytes.find`` (a query term is rare in a row), in word order."""
    found: list[tuple[int, str]] = []
    for pattern, term in patterns:
        at = terms.find(pattern)
        while at >= 0:
            if at % width:  # straddles two ids: look again from the next byte
                at = terms.find(pattern, at + 1)
                continue
            found.append((at // width, term))
            at = terms.find(pattern, at + width)
    if len(patterns) > 1:
        found.sort()
    return found


def prose_factor(rows: list[dict[str, Any]], terms: set[str], languages: list[str]) -> float:
    """``prose_share`` of a passage's rows (chunk JSON): which are a book's non-prose parts
    (contents, captions: ``NON_PROSE_KINDS``) and how many of the query's words each holds. Such
    lines hold a chapter's words in few characters, so BM25 alone ranks them above the chapter."""
    from episteme_core.records.trust import NON_PROSE_KINDS

    kinds = [(row.get("attributes") or {}).get("paragraphKind") in NON_PROSE_KINDS for row in rows]
    if not any(kinds):
        return 1.0
    return prose_share(kinds, [len(matched_words(row["text"], terms, languages)) for row in rows])
