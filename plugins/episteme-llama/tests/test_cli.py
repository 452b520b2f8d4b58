"""The plugin through the real CLI: ``episteme ask`` with a llama reader from config.json over shards
built from a real book, ``episteme reader check``, and the refusals."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from episteme_core.testing import CliResult, invoke, validate

BOOKS = Path(__file__).parent / "fixtures" / "books"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("llama") / "home"
    result = invoke("--home", str(home), "ingest", "books", str(BOOKS), env={"EPISTEME_TELEMETRY": "off"})
    assert result.exit_code == 0, result.stderr
    return home


@pytest.fixture
def home(built: Path, tmp_path: Path) -> Path:
    target = tmp_path / "home"
    shutil.copytree(built, target)
    return target


def configure(home: Path, **entry: object) -> None:
    (home / "config.json").write_text(json.dumps({"readers": [{"name": "local", "kind": "llama", **entry}]}))


def ask(home: Path, *args: str) -> CliResult:
    return invoke("--home", str(home), "ask", "--json", *args, env={"EPISTEME_TELEMETRY": "off"})


@pytest.mark.parametrize("mode", ["fuse", "generate"])
def test_ask_with_a_configured_llama_reader(home: Path, tiny_model: Path, mode: str) -> None:
    configure(home, model=str(tiny_model), mode=mode, threads=1, timeout=60)
    result = ask(home, "Ishmael whale sea voyage")
    assert result.exit_code == 0, result.stderr
    data = result.envelope["data"]
    validate(data, "ask-result")
    assert data["readers"] == [{"name": "local", "kind": "llama", "slots": 1, "healthy": True}]
    assert data["shards"] and all(s["reader"] == "local" and not s["fallback"] for s in data["shards"])
    assert result.envelope["warnings"] == []
    if mode == "fuse":
        assert data["paragraphs"], "fuse names BM25's eligible candidates, reordered"
    for paragraph in data["paragraphs"]:
        shown = invoke("--home", str(home), "show", paragraph["ref"], "--json")
        stored = shown.envelope["data"]["paragraph"]["text"]
        part = paragraph["excerpt"]  # a long paragraph is shown as its best window, a verbatim slice
        assert (stored[part["start"] : part["end"]] if part else stored) == paragraph["text"]
        assert paragraph["reader"] == "local"


def test_ask_twice_gives_the_same_answer(home: Path, tiny_model: Path) -> None:
    configure(home, model=str(tiny_model), mode="generate", threads=1)
    first, second = ask(home, "whale ship"), ask(home, "whale ship")
    assert first.exit_code == 0 and first.envelope["data"]["ranked"] == second.envelope["data"]["ranked"]


def test_a_bad_model_in_config_fails_the_question_clearly(home: Path, tmp_path: Path) -> None:
    not_a_model = tmp_path / "model.gguf"
    not_a_model.write_text("this is not a model\n")
    configure(home, model=str(not_a_model))
    result = ask(home, "whale")
    assert result.exit_code == 3
    error = result.envelope["error"]
    assert error["code"] == "INVALID_INPUT" and "not a GGUF file" in error["message"]


def test_the_llama_kind_without_a_config_entry_says_what_is_missing(home: Path) -> None:
    result = ask(home, "--reader", "llama", "whale")
    assert result.exit_code == 3
    assert "model must be the path of a GGUF file" in result.envelope["error"]["message"]


def test_reader_check_reports_device_and_speed(tiny_model: Path) -> None:
    result = invoke("reader", "check", "--model", str(tiny_model), "--threads", "1", "--json")
    assert result.exit_code == 0, result.stderr
    data = result.envelope["data"]
    assert data["device"] in ("cpu", "gpu") and data["gpuOffloadSupported"] in (True, False)
    assert data["tokens"] > 0 and data["tokensPerSecond"] > 0 and data["labels"]
    human = invoke("reader", "check", "--model", str(tiny_model), "--mode", "generate", "--threads", "1")
    assert human.exit_code == 0 and "runs on the" in human.stdout and "tokens/s" in human.stdout


def test_reader_usage_errors(tiny_model: Path, tmp_path: Path) -> None:
    assert invoke("reader", "--json").exit_code == 2
    assert invoke("reader", "serve", "--json").exit_code == 2  # --model is required
    result = invoke("reader", "check", "--model", str(tiny_model), "--top", "51", "--json")
    assert result.exit_code == 2 and result.envelope["error"]["code"] == "INVALID_USAGE"
    result = invoke("reader", "check", "--model", str(tmp_path / "none.gguf"), "--json")
    assert result.exit_code == 3 and "does not exist" in result.envelope["error"]["message"]
    helped = invoke("reader", "--help")
    assert helped.exit_code == 0 and "serve" in helped.stdout and "check" in helped.stdout
