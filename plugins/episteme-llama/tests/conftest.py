"""Fixtures: a tiny random GGUF model built here (nothing is downloaded), readers over it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from episteme_core.api import Candidate, ReaderSpec, ReadRequest
from episteme_llama.reader import LlamaReader, open_reader
from episteme_llama.testing import build_tiny_gguf


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("EPISTEME_HOME", str(tmp_path / "default-home"))
    monkeypatch.setenv("EPISTEME_LOAD_PLUGINS", "llama")  # only this plugin, whatever else is installed


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 0.5 MB llama-architecture model with random weights and a ChatML template."""
    return build_tiny_gguf(tmp_path_factory.mktemp("models") / "tiny.gguf")


@pytest.fixture
def open_llama(tiny_model: Path) -> Iterator[Callable[..., LlamaReader]]:
    """Open llama readers over the tiny model (closed after the test): ``open_llama(mode=..., ...)``."""
    opened: list[LlamaReader] = []

    def make(*, slots: int = 1, timeout: float = 30.0, **options: Any) -> LlamaReader:
        spec = ReaderSpec(name="local", kind="llama", slots=slots, timeout=timeout,
                          options={"model": str(tiny_model), "threads": 1, **options})
        reader = open_reader(spec)
        opened.append(reader)
        return reader

    yield make
    for reader in opened:
        reader.close()


WORDS = ("whale", "ship", "sea", "captain", "white", "harpoon", "policy", "browser", "report", "directive",
         "the", "of", "a", "and", "python", "snake", "json", "ids", "yes", "no")


def read_request(question: str, texts: list[str], *, coverage: list[float] | None = None,
                 best_coverage: float = 1.0) -> ReadRequest:
    """A read of ``texts`` (labelled p1.. in the order given, BM25 scores descending)."""
    n = len(texts)
    return ReadRequest(question=question, shard="books-0001", source="books", candidates=tuple(
        Candidate(label=f"p{i + 1}", text=text, score=float(n - i), ref=f"book:b/x#{i + 1}",
                  coverage=(coverage[i] if coverage else 1.0))
        for i, text in enumerate(texts)), best_coverage=best_coverage)
