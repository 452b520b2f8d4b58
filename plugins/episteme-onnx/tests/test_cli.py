"""The plugin through the real CLI: ``episteme ask`` with an onnx reader from config.json over shards
built from a real book, the same answer in new processes under other hash seeds, and the refusals."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from episteme_core.testing import CliResult, invoke, run_cli, validate

from .conftest import BOOKS

QUESTION = "Ishmael whale sea voyage"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("onnx") / "home"
    result = invoke("--home", str(home), "ingest", "books", str(BOOKS), env={"EPISTEME_TELEMETRY": "off"})
    assert result.exit_code == 0, result.stderr
    return home


@pytest.fixture
def home(built: Path, tmp_path: Path) -> Path:
    target = tmp_path / "home"
    shutil.copytree(built, target)
    return target


def configure(home: Path, **entry: object) -> None:
    entries = [{"name": "semantic", "kind": "onnx", **entry}]
    (home / "config.json").write_text(json.dumps({"readers": entries}))


def ask(home: Path, *args: str) -> CliResult:
    return invoke("--home", str(home), "ask", "--json", *args, env={"EPISTEME_TELEMETRY": "off"})


def test_ask_with_a_configured_onnx_reader(home: Path, tiny_model: Path) -> None:
    configure(home, model=str(tiny_model), threads=1, max_tokens=128, weight=0.3, timeout=60)
    result = ask(home, "--reader", "semantic", QUESTION)
    assert result.exit_code == 0, result.stderr
    data = result.envelope["data"]
    validate(data, "ask-result")
    assert data["readers"] == [{"name": "semantic", "kind": "onnx", "slots": 1, "healthy": True}]
    assert data["shards"] and all(s["reader"] == "semantic" and not s["fallback"] for s in data["shards"])
    assert result.envelope["warnings"] == []
    assert data["paragraphs"], "the onnx reader names BM25's eligible candidates, reordered"
    for paragraph in data["paragraphs"]:
        shown = invoke("--home", str(home), "show", paragraph["ref"], "--json")
        stored = shown.envelope["data"]["paragraph"]["text"]
        part = paragraph["excerpt"]  # a long paragraph is shown as its best window, a verbatim slice
        assert (stored[part["start"] : part["end"]] if part else stored) == paragraph["text"]
        assert paragraph["reader"] == "semantic"


def test_query_rerank_through_the_registered_kind(home: Path, tiny_model: Path) -> None:
    """``query --rerank semantic``: the kernel finds the kind in the registry and orders query's first
    results by its fused scores (rerank_weight 1: the model's cosine alone), ties in query's order."""
    configure(home, model=str(tiny_model), max_tokens=128, rerank_weight=1.0)
    plain = invoke("--home", str(home), "query", "--term", QUESTION, "--json").envelope["data"]
    result = invoke("--home", str(home), "query", "--term", QUESTION, "--rerank", "semantic", "--json",
                    env={"EPISTEME_TELEMETRY": "off"})
    assert result.exit_code == 0, result.stderr
    data = result.envelope["data"]
    validate(data, "query-result")
    assert data["rerank"] == "semantic" and plain["rerank"] is None
    scores = [r["rerankScore"] for r in data["results"]]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) > 1
    first = invoke("--home", str(home), "query", "--term", QUESTION, "--limit", "20", "--json")
    pool = {r["chunkId"] for r in first.envelope["data"]["results"]}
    assert {r["chunkId"] for r in data["results"]} <= pool


def test_a_constant_model_answers_as_bm25_does(home: Path, constant_model: Path) -> None:
    configure(home, model=str(constant_model), weight=1.0)
    ours, bm25 = ask(home, QUESTION), ask(home, "--reader", "bm25", QUESTION)
    assert ours.exit_code == bm25.exit_code == 0
    assert ours.envelope["data"]["shards"][0]["reader"] == "semantic"
    assert ours.envelope["data"]["ranked"] == bm25.envelope["data"]["ranked"] != []


def test_the_answer_is_the_same_in_new_processes_and_hash_seeds(home: Path, tiny_model: Path) -> None:
    configure(home, model=str(tiny_model), weight=1.0)
    answers = []
    for seed in ("0", "977"):
        result = run_cli(["--home", str(home), "ask", "--json", QUESTION],
                         env={"PYTHONHASHSEED": seed, "EPISTEME_TELEMETRY": "off"})
        assert result.exit_code == 0, result.stderr
        answers.append(result.envelope["data"]["ranked"])
    assert answers[0] == answers[1] == ask(home, QUESTION).envelope["data"]["ranked"] != []


def test_a_missing_model_leaves_the_question_to_bm25_with_the_reason(home: Path, tmp_path: Path) -> None:
    configure(home, model=str(tmp_path / "nowhere"))
    result = ask(home, QUESTION)
    assert result.exit_code == 0, result.stderr
    data = result.envelope["data"]
    assert data["readers"] == [{"name": "semantic", "kind": "onnx", "slots": 1, "healthy": False}]
    assert all(s["fallback"] for s in data["shards"]) and data["paragraphs"]
    (warning,) = [w for w in result.envelope["warnings"] if w["code"] == "READER_UNHEALTHY"]
    assert f"model directory {tmp_path / 'nowhere'} does not exist" in warning["message"]


def test_the_onnx_kind_without_a_config_entry_says_what_is_missing(home: Path) -> None:
    result = ask(home, "--reader", "onnx", "whale")
    assert result.exit_code == 3
    error = result.envelope["error"]
    assert error["code"] == "INVALID_INPUT"
    assert "model must be the path of a model directory" in error["message"]


def test_an_unknown_key_in_config_fails_the_question_clearly(home: Path, tiny_model: Path) -> None:
    configure(home, model=str(tiny_model), wieght=0.5)
    result = ask(home, "whale")
    assert result.exit_code == 3
    assert "reader 'semantic' (onnx): unknown key(s) wieght" in result.envelope["error"]["message"]
