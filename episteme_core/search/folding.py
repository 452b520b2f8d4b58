"""Which passages of a page are copies of one above them: the very same text, found without reading
the text of every passage before the page.

A page folds a passage whose text equals that of one ranked above it into that one (``Passage.copies``),
so a page at offset N must know which of the N passages before it are copies of one another. Reading
their rows' JSON costs what parsing them does, and keeping it costs memory per passage: thousands of
rows for a deep page. What tells two texts apart is cheaper: a passage's length, and, within one
shard, its rows' lengths and analysed words (``PassageRows.identity``), which equal texts split into
rows alike share. Texts are read only where those cannot tell: two passages of one identity (a copy,
or texts that differ only in case or punctuation), or of one length but another class (another
shard, rows split otherwise, a shard without stored words). The passages folded are exactly those
whose texts are equal.
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
        self._unread: dict[int, dict[Class, list[int]]] = {}  # length -> class -> places not read yet
        self._unread_count = 0
        self._by_identity: dict[Any, list[int]] = {}  # an identity -> the places having it
        self._read_classes: dict[int, set[Class]] = {}  # length -> the classes of the texts read
        self._unsorted: dict[int, list[int]] = {}  # length -> places read by the quick path, no class yet

    def fold(self, keys: Sequence[Key], text: str | None = None) -> int | None:
        """The place of the kept passage whose text equals that of the passage of rows ``keys``
        (``text``, where already read); None, and the passage kept at the next place, when none does."""
        if text is not None and not self._unread_count:  # every kept text is read: look it up
            twin = self._texts.get(text)
            if twin is None:  # its class and identity are found when a passage of its length needs them
                place = len(self._places)
                self._places.append((keys, len(text), None))
                self._texts[text] = place
                self._read.add(place)
                self._unsorted.setdefault(len(text), []).append(place)
            return twin
        identity = self.read.identity(keys)
        kind = identity[0] if identity is not None else None
        if identity is not None:
            length = sum(identity[0][1]) + 2 * (len(keys) - 1)
        else:
            text = text if text is not None else self.read.text_of(keys)
            length = len(text)
        for place in self._unsorted.pop(length, ()):  # kept with their text read, of no class yet
            self._sort(place)
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
        self._keep(keys, length, kind, identity, text)
        return None

    def _keep(self, keys: Sequence[Key], length: int, kind: Class, identity: Any, text: str | None) -> None:
        place = len(self._places)
        self._places.append((keys, length, kind))
        if identity is not None:
            self._by_identity.setdefault(identity, []).append(place)
        if text is not None:
            self._remember(place, text)
        else:
            self._unread.setdefault(length, {}).setdefault(kind, []).append(place)
            self._unread_count += 1

    def _sort(self, place: int) -> None:
        """Give a kept passage whose text was read its class and identity (``fold``'s quick path)."""
        keys, length, _ = self._places[place]
        identity = self.read.identity(keys)
        kind = identity[0] if identity is not None else None
        self._places[place] = (keys, length, kind)
        if identity is not None:
            self._by_identity.setdefault(identity, []).append(place)
        self._read_classes.setdefault(length, set()).add(kind)

    def _read_text(self, place: int) -> None:
        if place not in self._read:
            self._unread_count -= 1
            self._remember(place, self.read.text_of(self._places[place][0]))

    def _remember(self, place: int, text: str) -> None:
        _, length, kind = self._places[place]
        self._texts.setdefault(text, place)
        self._read.add(place)
        self._read_classes.setdefault(length, set()).add(kind)
