"""llama.cpp's log, kept in memory so that a failure can name its real cause.

llama.cpp reports why a model did not load (an unknown architecture, a tensor of the wrong shape, a
missing key) only in its log, and llama-cpp-python either prints that log or silences it. Once the
plugin loads a model, the log goes to a bounded in-memory buffer instead: nothing is printed, and
errors quote the last lines. ``EPISTEME_LLAMA_LOG=1`` also copies the log to stderr.
"""

from __future__ import annotations

import collections
import ctypes
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

MAX_LINES = 400
_WARN, _ERROR, _CONT = 3, 4, 5  # ggml_log_level: NONE 0, DEBUG 1, INFO 2, WARN 3, ERROR 4, CONT 5
_lock = threading.Lock()
_lines: collections.deque[tuple[int, int, str]] = collections.deque(maxlen=MAX_LINES)
_state = {"serial": 0}
_callback: Any = None


def _record(level: int, text: bytes | None, user_data: Any) -> None:
    message = (text or b"").decode("utf-8", "replace")
    if os.environ.get("EPISTEME_LLAMA_LOG", "") not in ("", "0"):
        sys.stderr.write(message)
    with _lock:
        if level == _CONT and _lines:
            serial, previous_level, previous = _lines.pop()
            _lines.append((serial, previous_level, previous + message))
            return
        _state["serial"] += 1
        _lines.append((_state["serial"], level, message))


def install() -> None:
    """Route llama.cpp's log to the buffer (once per process)."""
    global _callback
    with _lock:
        if _callback is not None:
            return
        import llama_cpp

        _callback = llama_cpp.llama_log_callback(_record)  # kept referenced: C holds the pointer
        llama_cpp.llama_log_set(_callback, ctypes.c_void_p(0))


@contextmanager
def captured() -> Iterator[list[str]]:
    """Collect the warning and error lines logged inside the block into the yielded list."""
    install()
    with _lock:
        start = _state["serial"]
    found: list[str] = []
    try:
        yield found
    finally:
        with _lock:
            for serial, level, message in _lines:
                if serial > start and level in (_ERROR, _WARN) and message.strip():
                    found.append(message.strip())
