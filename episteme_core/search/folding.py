"""Which passages of a page are copies of one above them: the very same text, found without reading
the text of every passage before the page.

A page folds a passage whose text equals that of one ranked above it into that one (``Passage.copies``),
so a page at offset N must know which of the N passages before it are copies of one another, and
whether the passages after it are only copies of what it shows (then there is no next page).
Reading their rows' JSON costs what parsing them does, and keeping it costs memory per passage:
thousands of rows for a deep page. What tells two texts apart is cheaper: a passage's length (no
kept passage of its length: a new text), and, within one shard, its rows' lengths and analysed
words (``PassageRows.identity``, found only where lengths meet), which equal texts split into rows
alike share. Texts are read only where those cannot tell: two passages of one identity (a copy, or
texts that differ only in case or punctuation), or of one length but another class (another shard,
rows split otherwise, a shard without stored words). The passages folded are exactly those whose
texts are equal.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from episteme_core.search.passages import Key, PassageRows

Class = Any  # (shard, rows' lengths), or None where a passage's text must be read to compare it


class KeptTexts:
    """The passages a page has kept so far, best first (each by its place), and which of them holds
    the very text of a passage met next."""

    def __init__(self, read: PassageRows) -> None:
        self.read = read
        self._places: list[tuple[Sequence[Key], int, Class]] = []  # rows, text length, class
        self._texts: dict[str, int] = {}  # each text read -> the place of the kept passage holding it
        self._read: set[int] = set()
        self._unread_count = 0
        self._lengths: dict[int, list[int]] = {}  # length -> places of that length not classed yet
        self._classed: set[int] = set()  # the lengths whose places are all classed
        self._unread: dict[int, dict[Class, list[int]]] = {}  # length -> class -> places not read yet
        self._by_identity: dict[Any, list[int]] = {}  # an identity -> the places having it
        self._read_classes: dict[int, set[Class]] = {}  # length -> the classes of the texts read

    def fold(self, keys: Sequence[Key], text: str | None = None) -> int | None:
        """The place of the kept passage whose text equals that of the passage of rows ``keys``
        (``text``, where already read); None, and the passage kept at the next place, when none does."""
        if text is not None and not self._unread_count:  # every kept text is read: look it up
            twin = self._texts.get(text)
            if twin is None:  # kept (as ``_add`` keeps it), its class found when one of its length comes
                place, length = len(self._places), len(text)
                self._places.append((keys, length, None))
                self._texts[text] = place
                self._read.add(place)
                same_length = self._lengths.get(length)
                if same_length is None:
                    self._lengths[length] = [place]
                else:
                    same_length.append(place)
            return twin
        length = len(text) if text is not None else self.read.length(keys)
        if length not in self._lengths and length not in self._classed:  # none of its length: new
            self._add(keys, length, text)
            return None
        self._classify(length)
        identity = self.read.identity(keys)
        kind = identity[0] if identity is not None else None
        if kind is None and text is None:
            text = self.read.text_of(keys)
        # read the kept texts that could equal this one: of its identity, or of its length and another class
        same = self._by_identity.get(identity, []) if identity is not None else []
        for place in same:
            self._read_text(place)
        for other, places in self._unread.get(length, {}).items():
            if kind is None or other != kind:
                for place in places:
                    self._read_text(place)
                places.clear()
        classes = self._read_classes.get(length, set())
        if same or (classes and (kind is None or classes - {kind})):
            text = text if text is not None else self.read.text_of(keys)
            twin = self._texts.get(text)
            if twin is not None:
                return twin
        place = self._add(keys, length, text)
        self._classify(length, identity)
        return None

    def _add(self, keys: Sequence[Key], length: int, text: str | None) -> int:
        """Keep the passage at the next place, its class found when a passage of its length needs it."""
        place = len(self._places)
        self._places.append((keys, length, None))
        self._lengths.setdefault(length, []).append(place)
        if text is not None:
            self._texts.setdefault(text, place)
            self._read.add(place)
        else:
            self._unread_count += 1
        return place

    def _classify(self, length: int, known: Any = False) -> None:
        """Give the kept passages of ``length`` their class and identity (``known``: the identity of
        the one kept last, found already); a passage of no class has its text read."""
        self._classed.add(length)
        for place in self._lengths.pop(length, ()):
            keys = self._places[place][0]
            identity = self.read.identity(keys) if known is False or place != len(self._places) - 1 else known
            kind = identity[0] if identity is not None else None
            self._places[place] = (keys, length, kind)
            if identity is not None:
                self._by_identity.setdefault(identity, []).append(place)
            if place in self._read:
                self._read_classes.setdefault(length, set()).add(kind)
            elif kind is None:
                self._read_text(place)
            else:
                self._unread.setdefault(length, {}).setdefault(kind, []).append(place)

    def _read_text(self, place: int) -> None:
        if place not in self._read:
            self._unread_count -= 1
            keys, length, kind = self._places[place]
            self._texts.setdefault(self.read.text_of(keys), place)
            self._read.add(place)
            self._read_classes.setdefault(length, set()).add(kind)
