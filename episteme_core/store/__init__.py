"""The home and its store: content-addressed blobs, stage commits, the log, the writer lock.

Names are imported on first use, so a reader that needs only ``Home`` does not pay for the lock's
or the stage's imports (``episteme query`` starts in a new process every time).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from episteme_core.store.blobs import BlobStore
    from episteme_core.store.home import STAGES, Home, resolve_home
    from episteme_core.store.lock import WriterLock
    from episteme_core.store.log import Log
    from episteme_core.store.stage import Stage

__all__ = ["STAGES", "BlobStore", "Home", "Log", "Stage", "WriterLock", "resolve_home"]

_WHERE = {
    "BlobStore": "blobs",
    "STAGES": "home",
    "Home": "home",
    "resolve_home": "home",
    "WriterLock": "lock",
    "Log": "log",
    "Stage": "stage",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(name)
    return getattr(importlib.import_module(f"episteme_core.store.{module}"), name)
