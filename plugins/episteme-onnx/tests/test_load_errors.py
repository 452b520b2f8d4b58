"""Every way a model directory or an entry can be wrong, and the clear message each one gets: options
are refused when the reader opens (INVALID_INPUT); a model that cannot load makes ``health`` (what
``ask``, ``reader check`` and ``doctor`` call) raise ReadError saying which file and why."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from episteme_core.api import EpistemeError, ReadError, ReaderSpec
from episteme_onnx.kind import OnnxKind
from episteme_onnx.reader import open_reader
from episteme_onnx.testing import build_graph, build_tiny_model

from .conftest import read_request


def broken(tmp_path: Path, tiny_model: Path, change: Callable[[Path], Any]) -> Path:
    target = tmp_path / "model"
    shutil.copytree(tiny_model, target)
    change(target)
    return target


def truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


CASES: dict[str, tuple[Callable[[Path], Any], str]] = {
    "missing directory": (lambda d: shutil.rmtree(d), "does not exist"),
    "a file, not a directory": (lambda d: (shutil.rmtree(d), d.write_text("x")), "is not a directory"),
    "no model.onnx": (lambda d: (d / "model.onnx").unlink(), "has no model.onnx"),
    "no tokenizer.json": (lambda d: (d / "tokenizer.json").unlink(), "has no tokenizer.json"),
    "model.onnx is a directory": (lambda d: ((d / "model.onnx").unlink(), (d / "model.onnx").mkdir()),
                                  "is not a regular file"),
    "empty model.onnx": (lambda d: (d / "model.onnx").write_bytes(b""), "could not be loaded by onnxruntime"),
    "model.onnx is text": (lambda d: (d / "model.onnx").write_text("not a model\n"),
                           "could not be loaded by onnxruntime"),
    "truncated model.onnx": (lambda d: truncate(d / "model.onnx"), "could not be loaded by onnxruntime"),
    "tokenizer.json not JSON": (lambda d: (d / "tokenizer.json").write_text("{nope"),
                                "could not be read by tokenizers"),
    "tokenizer.json another JSON": (lambda d: (d / "tokenizer.json").write_text('{"a": 1}'),
                                    "could not be read by tokenizers"),
    "an image model": (lambda d: build_graph(d / "model.onnx", vocab_size=4, inputs=["pixel_values", "mask"]),
                       "takes inputs pixel_values, mask; a sentence-embedding model takes input_ids"),
    "a vocabulary larger than the model's": (lambda d: build_graph(d / "model.onnx", vocab_size=2),
                                             "a trial run failed"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_health_says_what_is_wrong_with_the_model(case: str, tiny_model: Path, tmp_path: Path) -> None:
    change, message = CASES[case]
    directory = broken(tmp_path, tiny_model, change)
    # it opens (the model is not loaded yet), then health says why it cannot serve
    reader = open_reader(ReaderSpec("semantic", "onnx", options={"model": str(directory)}))
    with pytest.raises(ReadError) as caught:
        reader.health()
    text = str(caught.value)
    assert message in text and text.startswith("reader 'semantic' (onnx): ")
    assert str(directory) in text
    with pytest.raises(ReadError, match="reader 'semantic'"):  # a read fails the same way (bm25 answers)
        reader.read(read_request("whale", ["the whale"]))


def test_a_repaired_directory_loads(tmp_path: Path) -> None:
    """A failed load is not remembered: once the files are there, the reader is healthy."""
    directory = tmp_path / "later"
    reader = open_reader(ReaderSpec("semantic", "onnx", options={"model": str(directory)}))
    with pytest.raises(ReadError, match="does not exist"):
        reader.health()
    build_tiny_model(directory)
    reader.health()


def test_a_tilde_is_expanded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    build_tiny_model(tmp_path / "models" / "tiny")
    open_reader(ReaderSpec("semantic", "onnx", options={"model": "~/models/tiny"})).health()


OPTION_CASES: list[tuple[dict[str, Any], str]] = [
    ({}, "model must be the path of a model directory"),
    ({"model": ""}, "model must be the path of a model directory"),
    ({"model": 3}, "model must be the path of a model directory"),
    ({"model": "m", "modle": 1}, "unknown key(s) modle"),
    ({"model": "m", "weight": 1.5}, "weight must be between 0 and 1, got 1.5"),
    ({"model": "m", "weight": "0.3"}, "weight must be a number"),
    ({"model": "m", "rerank_weight": -0.1}, "rerank_weight must be between 0 and 1"),
    ({"model": "m", "threads": 0}, "threads must be between 1 and 64"),
    ({"model": "m", "threads": 1.5}, "threads must be an integer"),
    ({"model": "m", "max_tokens": True}, "max_tokens must be an integer"),
    ({"model": "m", "max_tokens": 4}, "max_tokens must be between 8 and 8192"),
    ({"model": "m", "batch_size": 0}, "batch_size must be between 1 and 256"),
    ({"model": "m", "top": 51}, "top must be between 1 and 50"),
    ({"model": "m", "score_ratio": 1.01}, "score_ratio must be between 0 and 1"),
    ({"model": "m", "query_prefix": 1}, "query_prefix must be a string of at most 64 characters"),
    ({"model": "m", "passage_prefix": "x" * 65}, "passage_prefix must be a string of at most 64"),
    ({"model": "m", "windows": "sentences"}, "windows must be one of passage, paragraphs, not 'sentences'"),
]


@pytest.mark.parametrize(("options", "message"), OPTION_CASES)
def test_bad_options_are_refused_when_the_reader_opens(options: dict[str, Any], message: str) -> None:
    with pytest.raises(EpistemeError) as caught:
        OnnxKind().open(ReaderSpec("semantic", "onnx", options=options))
    assert caught.value.code == "INVALID_INPUT"
    assert caught.value.message.startswith("config.json: reader 'semantic' (onnx): ")
    assert message in caught.value.message


def test_every_option_at_its_limits_is_accepted(tiny_model: Path) -> None:
    for value in ({"threads": 1, "max_tokens": 8, "batch_size": 1, "weight": 0.0, "top": 1, "ratio": 0.0,
                   "windows": "paragraphs", "score_ratio": 0.0,
                   "min_score": 0.0, "query_prefix": "", "passage_prefix": ""},
                  {"threads": 64, "max_tokens": 8192, "batch_size": 256, "weight": 1, "top": 50, "ratio": 1,
                   "min_score": 1e9, "score_ratio": 1, "query_prefix": "q" * 64,
                   "passage_prefix": "passage: ",
                   "windows": "passage"}):
        reader = OnnxKind().open(ReaderSpec("semantic", "onnx", options={"model": str(tiny_model), **value}))
        reader.read(read_request("whale", ["the whale"]))
