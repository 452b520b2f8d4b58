"""``episteme doctor`` with an onnx reader in config.json: a model that loads passes (its dimension and
files reported); a model directory that is missing or broken fails its check with the reason."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from episteme_core.testing import invoke, validate

from .conftest import BOOKS


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    result = invoke("--home", str(home), "ingest", "books", str(BOOKS), env={"EPISTEME_TELEMETRY": "off"})
    assert result.exit_code == 0, result.stderr
    return home


def reader_check(home: Path, model: Path) -> tuple[int, dict[str, Any]]:
    entry = {"name": "semantic", "kind": "onnx", "model": str(model), "threads": 1}
    (home / "config.json").write_text(json.dumps({"readers": [entry]}))
    result = invoke("--home", str(home), "doctor", "--json")
    envelope = result.envelope
    data = envelope["data"] if envelope["ok"] else envelope["error"]["details"]
    validate(data, "doctor-report")
    return result.exit_code, next(c for c in data["checks"] if c["name"] == "reader semantic")


def test_a_model_that_loads_passes(home: Path, tiny_model: Path) -> None:
    status, check = reader_check(home, tiny_model)
    assert status == 0 and check["status"] == "ok", check
    assert check["summary"].startswith("onnx: healthy in ")
    assert f"model {tiny_model} loaded" in check["summary"]
    described = check["details"]["describe"]
    assert described["modelFile"] == str(tiny_model / "model.onnx") and described["dimension"] > 0


@pytest.mark.parametrize(("change", "words"), [
    (lambda d: shutil.rmtree(d), "does not exist"),
    (lambda d: (d / "model.onnx").write_bytes(b"not a model"), "could not be loaded by onnxruntime"),
])
def test_a_model_that_does_not_load_fails(home: Path, tiny_model: Path, tmp_path: Path, change: Any,
                                          words: str) -> None:
    model = tmp_path / "model"
    shutil.copytree(tiny_model, model)
    change(model)
    status, check = reader_check(home, model)
    assert status == 3 and check["status"] == "fail", check
    assert "onnx: its model did not load" in check["summary"] and words in check["summary"]
    assert check["hint"]
