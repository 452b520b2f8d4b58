"""The reader kind ``llama`` as registered at startup: a name, a description, and ``open``, which
loads the reader (and llama.cpp) only when a question needs it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from episteme_core.api import ReaderSpec
    from episteme_llama.reader import LlamaReader


class LlamaKind:
    """Factory registered as the reader kind ``llama``."""

    name = "llama"
    description = ("a local GGUF model (llama.cpp): generate names labels under a grammar; "
                   "fuse mixes its relevance with BM25")

    def open(self, spec: ReaderSpec) -> LlamaReader:
        from episteme_llama.reader import open_reader

        return open_reader(spec)
