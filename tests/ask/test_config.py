"""config.json's readers section: good entries open, bad ones are clear INVALID_INPUT errors."""

from __future__ import annotations

from typing import Any

import pytest

from episteme_core.ask.config import reader_specs
from episteme_core.errors import EpistemeError
from episteme_core.testing import validate


def test_defaults_and_options() -> None:
    config = {"readers": [
        {"name": "gpu", "url": "http://127.0.0.1:8080/v1", "model": "qwen", "slots": 4, "timeout": 12.5},
        {"name": "cheap", "kind": "bm25", "top": 3},
        {"name": "local", "kind": "llama", "model": "/models/x.gguf", "mode": "fuse"},
    ]}
    validate(config, "reader-config")
    gpu, cheap, local = reader_specs(config)
    assert (gpu.kind, gpu.slots, gpu.timeout) == ("http", 4, 12.5)
    assert gpu.options["max_reply_bytes"] == 1 << 20 and gpu.options["model"] == "qwen"
    # a configured bm25 reader's defaults are the builtin reader's
    assert cheap.options == {"top": 3, "ratio": 0.4, "score_ratio": 0.5, "min_score": 0.0}
    assert local.options == {"model": "/models/x.gguf", "mode": "fuse"} and local.slots == 1
    assert reader_specs({}) == []


@pytest.mark.parametrize(("entry", "words"), [
    ({"name": "x", "url": "ftp://host/"}, "http:// or https://"),
    ({"name": "x", "url": "file:///etc/passwd"}, "http:// or https://"),
    ({"name": "x", "url": "unix:/tmp/s"}, "http:// or https://"),
    ({"name": "x", "url": "http://"}, "no host"),
    ({"name": "x", "url": "http://user:pw@host/"}, "credentials"),
    ({"name": "x"}, "needs a url"),
    ({"name": "x", "url": "http://h", "slots": 0}, "slots must be between 1 and 64"),
    ({"name": "x", "url": "http://h", "slots": 65}, "slots must be between 1 and 64"),
    ({"name": "x", "url": "http://h", "slots": 2.5}, "slots must be an integer"),
    ({"name": "x", "url": "http://h", "timeout": 0}, "timeout must be between"),
    ({"name": "x", "url": "http://h", "timeout": True}, "timeout must be a number"),
    ({"name": "x", "url": "http://h", "max_reply_bytes": 10}, "max_reply_bytes"),
    ({"name": "x", "url": "http://h", "api_key": "sk-1"}, "unknown key(s) api_key"),
    ({"name": "x", "url": "http://h", "api_key_env": "no spaces"}, "api_key_env"),
    ({"name": "../x", "url": "http://h"}, "name must be"),
    ({"url": "http://h"}, "name must be"),
    ({"name": "x", "kind": "bm25", "score_ratio": 1.01}, "score_ratio must be between"),
    ({"name": "x", "kind": "bm25", "score_ratio": -0.01}, "score_ratio must be between"),
])
def test_bad_entries_are_refused_by_code_and_schema(entry: dict[str, Any], words: str) -> None:
    import jsonschema

    with pytest.raises(EpistemeError) as caught:
        reader_specs({"readers": [entry]})
    assert caught.value.code == "INVALID_INPUT"
    assert words in caught.value.message and "config.json: readers[0]" in caught.value.message
    if "credentials" not in words and "no host" not in words:
        with pytest.raises(jsonschema.ValidationError):
            validate({"readers": [entry]}, "reader-config")


def test_slots_and_timeout_at_their_bounds() -> None:
    ok = reader_specs({"readers": [{"name": "a", "url": "http://h", "slots": 64, "timeout": 3600},
                                   {"name": "b", "url": "https://h", "slots": 1, "timeout": 0.05}]})
    assert [s.slots for s in ok] == [64, 1]


def test_duplicate_names_and_non_list() -> None:
    with pytest.raises(EpistemeError, match="two readers have this name"):
        reader_specs({"readers": [{"name": "a", "kind": "bm25"}, {"name": "a", "kind": "bm25"}]})
    with pytest.raises(EpistemeError, match="must be a list"):
        reader_specs({"readers": {"name": "a"}})
