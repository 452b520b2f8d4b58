"""Fixtures: tiny random-weight model directories built here (nothing is downloaded), readers over them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from episteme_core.api import Candidate, ReaderSpec, ReadRequest
from episteme_onnx.reader import OnnxReader, open_reader
from episteme_onnx.testing import WORDS, build_tiny_model, words_of

BOOKS = Path(__file__).parent / "fixtures" / "books"


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("EPISTEME_HOME", str(tmp_path / "default-home"))
    monkeypatch.setenv("EPISTEME_LOAD_PLUGINS", "onnx")  # only this plugin, whatever else is installed


def book_words() -> list[str]:
    return [*WORDS, *words_of([p.read_text("utf-8") for p in sorted(BOOKS.glob("*.md"))])]


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Inputs input_ids, attention_mask and token_type_ids; a vocabulary holding the fixture book's words."""
    return build_tiny_model(tmp_path_factory.mktemp("models") / "tiny", vocabulary=book_words())


@pytest.fixture(scope="session")
def untyped_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """As ``tiny_model`` without the token_type_ids input (as many exports are)."""
    return build_tiny_model(tmp_path_factory.mktemp("models") / "untyped", vocabulary=book_words(),
                            token_type_ids=False)


@pytest.fixture(scope="session")
def constant_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every text embeds to the same vector: a model that knows nothing."""
    return build_tiny_model(tmp_path_factory.mktemp("models") / "constant", vocabulary=book_words(),
                            constant=True)


@pytest.fixture
def open_onnx(tiny_model: Path) -> Iterator[Callable[..., OnnxReader]]:
    """Open onnx readers (closed after the test): ``open_onnx(model=..., timeout=..., **options)``."""
    opened: list[OnnxReader] = []

    def make(*, model: Path | None = None, slots: int = 1, timeout: float = 30.0,
             **options: Any) -> OnnxReader:
        spec = ReaderSpec(name="semantic", kind="onnx", slots=slots, timeout=timeout,
                          options={"model": str(model or tiny_model), **options})
        reader = open_reader(spec)
        opened.append(reader)
        return reader

    yield make
    for reader in opened:
        reader.close()


def read_request(question: str, texts: list[str], *, scores: list[float] | None = None,
                 coverage: list[float] | None = None, refs: list[str] | None = None,
                 best_coverage: float = 1.0) -> ReadRequest:
    """A read of ``texts`` labelled p1.. in the order given (BM25 scores descending unless given)."""
    n = len(texts)
    return ReadRequest(question=question, shard="books-0001", source="books", candidates=tuple(
        Candidate(label=f"p{i + 1}", text=text, score=scores[i] if scores else float(n - i),
                  ref=refs[i] if refs else f"book:b/x#{i + 1}", coverage=(coverage[i] if coverage else 1.0))
        for i, text in enumerate(texts)), best_coverage=best_coverage)
