"""JSON paths as people read them: ``$.nodes[2].citations[0].n``, ``$['odd key']``."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from functools import lru_cache

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@lru_cache(maxsize=4096)
def _member(key: str) -> str:
    return f".{key}" if _NAME.match(key) else f"[{json.dumps(key, ensure_ascii=True)}]"


def step(path: str, key: str | int) -> str:
    """``path`` extended by one object key or array index."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return path + _member(key)


def join(parts: Iterable[str | int]) -> str:
    path = "$"
    for part in parts:
        path = step(path, part)
    return path
