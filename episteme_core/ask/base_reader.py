"""``BaseReader``: the defaults of a reader's optional parts, for reader kinds to subclass.

A reader *kind* is registered through ``episteme_readers`` as a factory with a ``name`` (the kind:
``bm25``, ``http``, ``llama``) and ``open(spec) -> Reader`` (``kernel.contracts``); what a read is
handed and hands back is in ``records.reading``.
"""

from __future__ import annotations

from collections.abc import Sequence

from episteme_core.records.reading import ReaderSpec, ReadReply, ReadRequest


class BaseReader:
    """Defaults for the optional parts of ``kernel.contracts.Reader``; subclass and implement ``read``."""

    kind = "base"

    def __init__(self, spec: ReaderSpec) -> None:
        self.spec = spec
        self.name = spec.name
        self.slots = spec.slots
        self.timeout = spec.timeout

    def health(self) -> None:
        return None

    def begin_run(self, question: str, shards: Sequence[str]) -> None:
        return None

    def read(self, request: ReadRequest) -> ReadReply:
        raise NotImplementedError

    def close(self) -> None:
        return None
