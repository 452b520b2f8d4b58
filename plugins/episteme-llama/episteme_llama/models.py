"""Loaded models, kept for the life of the process so that many questions pay one load.

``ask`` opens its readers for every question; ``eval``, the MCP server and ``reader serve`` ask many.
A model is kept by its real path, size, modification time and GPU layers (a replaced file is loaded
afresh); at most ``MAX_KEPT`` stay loaded, the least recently used is let go first (it is freed once
no reader holds it).
"""

from __future__ import annotations

import collections
import os
import threading

from episteme_llama.engine import Model, check_file

MAX_KEPT = 2
_lock = threading.Lock()
_kept: collections.OrderedDict[tuple[str, int, int, int], Model] = collections.OrderedDict()


def shared_model(path: str, n_gpu_layers: int) -> Model:
    """The loaded model of ``path``: from the cache, else loaded now (LoadError when it cannot be)."""
    check_file(path)
    real = os.path.realpath(path)
    status = os.stat(real)
    key = (real, status.st_size, status.st_mtime_ns, n_gpu_layers)
    with _lock:
        model = _kept.get(key)
        if model is not None:
            _kept.move_to_end(key)
            return model
        model = Model(real, n_gpu_layers=n_gpu_layers)
        _kept[key] = model
        while len(_kept) > MAX_KEPT:
            _kept.popitem(last=False)
        return model


def release_all() -> None:
    """Let go of every kept model (each is freed once no reader holds it)."""
    with _lock:
        _kept.clear()
