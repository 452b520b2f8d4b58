"""The onnx reader's options: what a ``config.json`` reader entry of kind ``onnx`` may say.

```json
{"name": "semantic", "kind": "onnx", "model": "/models/all-MiniLM-L6-v2", "threads": 1,
 "max_tokens": 256, "batch_size": 4, "windows": "passage", "weight": 0.15, "rerank_weight": 0.2, "top": 10,
 "ratio": 0.4, "score_ratio": 0.5, "min_score": 0, "query_prefix": "", "passage_prefix": ""}
```

Every key is checked (type and range) and an unknown key is refused, so a typo cannot silently fall
back to a default.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import attrs

from episteme_core.api import check_reader_options
from episteme_onnx.defaults import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_MAX_TOKENS,
    DEFAULT_RATIO,
    DEFAULT_RERANK_WEIGHT,
    DEFAULT_SCORE_RATIO,
    DEFAULT_THREADS,
    DEFAULT_TOP,
    DEFAULT_WEIGHT,
    DEFAULT_WINDOWS,
    KEYS,
    MAX_PREFIX,
    PREFIXES,
    RANGES,
    WINDOWS,
)


class OptionError(ValueError):
    """An option that is missing, of the wrong type or out of range; the message names it."""


@attrs.frozen
class OnnxOptions:
    """An onnx reader's settings (see the module docstring and docs/readers.md for each)."""

    model: str
    threads: int = DEFAULT_THREADS
    max_tokens: int = DEFAULT_MAX_TOKENS
    batch_size: int = DEFAULT_BATCH_SIZE
    windows: str = DEFAULT_WINDOWS
    weight: float = DEFAULT_WEIGHT
    rerank_weight: float = DEFAULT_RERANK_WEIGHT
    top: int = DEFAULT_TOP
    ratio: float = DEFAULT_RATIO
    score_ratio: float = DEFAULT_SCORE_RATIO
    min_score: float = 0.0
    query_prefix: str = ""
    passage_prefix: str = ""


def parse_options(raw: Mapping[str, Any]) -> OnnxOptions:
    """Options from a reader entry's extra keys; OptionError naming the first problem."""
    try:
        numbers = check_reader_options(raw, KEYS, RANGES)
    except ValueError as problem:
        raise OptionError(str(problem)) from None
    model = raw.get("model")
    if not isinstance(model, str) or not model.strip():
        raise OptionError("model must be the path of a model directory (model.onnx and tokenizer.json)")
    values: dict[str, Any] = {}
    if "windows" in raw:
        if raw["windows"] not in WINDOWS:
            raise OptionError(f"windows must be one of {', '.join(WINDOWS)}, not {raw['windows']!r}")
        values["windows"] = raw["windows"]
    values.update(numbers)
    for key in PREFIXES:
        if key not in raw:
            continue
        value = raw[key]
        if not isinstance(value, str) or len(value) > MAX_PREFIX:
            raise OptionError(f"{key} must be a string of at most {MAX_PREFIX} characters")
        values[key] = value
    return OnnxOptions(model=os.path.expanduser(model), **values)
