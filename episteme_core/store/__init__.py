"""The home and its store: content-addressed blobs, stage commits, the log, the writer lock."""

from episteme_core.store.blobs import BlobStore
from episteme_core.store.home import STAGES, Home, resolve_home
from episteme_core.store.lock import WriterLock
from episteme_core.store.log import Log
from episteme_core.store.stage import Stage

__all__ = ["STAGES", "BlobStore", "Home", "Log", "Stage", "WriterLock", "resolve_home"]
