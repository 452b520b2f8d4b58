"""The llama reader's options: what a ``config.json`` reader entry of kind ``llama`` may say.

```json
{"name": "local", "kind": "llama", "model": "/models/smollm2.gguf", "mode": "fuse",
 "slots": 1, "timeout": 60, "n_ctx": 4096, "threads": 2, "n_gpu_layers": -1, "seed": 0,
 "batch_size": 8, "top": 10, "weight": 0.1, "ratio": 0.4, "score_ratio": 0.5, "min_score": 0,
 "max_candidate_tokens": 512}
```

Every key is checked (type and range) and an unknown key is refused, so a typo cannot silently fall
back to a default. ``reader serve`` takes the same options as flags.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import attrs

from episteme_core.api import check_reader_options
from episteme_llama.defaults import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_MAX_CANDIDATE_TOKENS,
    DEFAULT_MODE,
    DEFAULT_N_CTX,
    DEFAULT_RATIO,
    DEFAULT_SCORE_RATIO,
    DEFAULT_TOP,
    DEFAULT_WEIGHT,
    KEYS,
    MODES,
    RANGES,
)


class OptionError(ValueError):
    """An option that is missing, of the wrong type or out of range; the message names it."""


@attrs.frozen
class LlamaOptions:
    """A llama reader's settings (see the module docstring for the meaning of each)."""

    model: str
    mode: str = DEFAULT_MODE
    n_ctx: int = DEFAULT_N_CTX
    threads: int | None = None  # None: the machine's cores shared among the slots
    n_gpu_layers: int = -1  # -1: every layer on the GPU when llama.cpp has one, else CPU
    seed: int = 0
    batch_size: int = DEFAULT_BATCH_SIZE
    top: int = DEFAULT_TOP
    weight: float = DEFAULT_WEIGHT
    ratio: float = DEFAULT_RATIO
    score_ratio: float = DEFAULT_SCORE_RATIO
    min_score: float = 0.0
    max_candidate_tokens: int = DEFAULT_MAX_CANDIDATE_TOKENS

    def threads_for(self, slots: int) -> int:
        """Decode threads per slot: as given, else the cores divided among the slots (at least 1)."""
        if self.threads is not None:
            return self.threads
        return max(1, (os.cpu_count() or 1) // max(1, slots))


def parse_options(raw: Mapping[str, Any]) -> LlamaOptions:
    """Options from a reader entry's extra keys; OptionError naming the first problem."""
    try:
        values: dict[str, Any] = check_reader_options(raw, KEYS, RANGES, none_is_default=("threads",))
    except ValueError as problem:
        raise OptionError(str(problem)) from None
    model = raw.get("model")
    if not isinstance(model, str) or not model.strip():
        raise OptionError("model must be the path of a GGUF file")
    mode = raw.get("mode", DEFAULT_MODE)
    if mode not in MODES:
        raise OptionError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    return LlamaOptions(model=os.path.expanduser(model), mode=mode, **values)
