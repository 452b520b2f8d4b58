"""Fixtures for ask: a real reference reader server on 127.0.0.1, in-memory shards, a home."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from episteme_core.ask.memory import MemoryChunk, MemoryShard
from episteme_core.ask.reference_server import ReferenceServer


@pytest.fixture
def reference() -> Iterator[ReferenceServer]:
    """The reference reader server, answering by keyword rules until told otherwise."""
    with ReferenceServer() as server:
        yield server


def chunk(record: str, n: int, text: str, time: str | None, source: str = "books") -> MemoryChunk:
    return MemoryChunk(id=f"{record}#{n}", text=text, record_id=record, paragraph=n, time=time, source=source)


@pytest.fixture
def shards() -> list[MemoryShard]:
    """Two sources, three shards; whale paragraphs spread over time and shards."""
    books_a = MemoryShard("books-0001", "books", [
        chunk("book:sea/moby", 1, "Call me Ishmael. The whale was white.", "2020-01-01T00:00:00Z"),
        chunk("book:sea/moby", 2, "The sea was calm and the ship was still.", "2020-01-01T00:00:00Z"),
        chunk("book:sea/moby", 3, "Ahab hunted the white whale across the sea.", "2020-01-01T00:00:00Z"),
    ])
    books_b = MemoryShard("books-0002", "books", [
        chunk("book:land/pride", 1, "It is a truth universally acknowledged.", "2019-06-01T00:00:00Z"),
        chunk("book:land/pride", 2, "Elizabeth had never seen a whale.", "2019-06-01T00:00:00Z"),
    ])
    chats = MemoryShard("claude-0001", "claude", [
        chunk("chat:claude/p/s1", 1, "How big is a blue whale?", "2024-03-01T10:00:00Z", "claude"),
        chunk("chat:claude/p/s1", 2, "A blue whale can reach thirty metres.", "2024-03-01T10:00:05Z",
              "claude"),
        chunk("chat:claude/p/s1", 3, "Unrelated talk about tests.", "2024-03-01T10:00:09Z", "claude"),
    ])
    return [books_a, books_b, chats]


class Warnings(list[tuple[str, str]]):
    def __call__(self, code: str, message: str, **extra: Any) -> None:
        self.append((code, message))

    def codes(self) -> list[str]:
        return [code for code, _ in self]


@pytest.fixture
def warnings() -> Warnings:
    return Warnings()


def write_config(home: Path, readers: list[dict[str, Any]]) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps({"readers": readers}), "utf-8")
