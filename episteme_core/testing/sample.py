"""Homes for tests: a stored snapshot, the committed documents and chunks, a sample home built whole."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs


def _home(root: Any) -> Any:
    from episteme_core.store.home import Home

    return root if isinstance(root, Home) else Home(Path(root))


def store_snapshot(
    home: Any, url: str, content: bytes, *, content_type: str = "text/plain", capture_kind: str = "http",
    options: Mapping[str, Any] | None = None,
) -> str:
    """Commit one snapshot of ``content`` for ``url`` to ``home`` (a path or ``Home``); its id."""
    from episteme_core.stages.snapshots import SnapshotWriter, make_identity

    home = _home(home)
    home.root.mkdir(parents=True, exist_ok=True)
    with SnapshotWriter(home, "test") as writer:
        identity = make_identity(capture_kind, url, content, final_url=url, content_type=content_type)
        observed = writer.observe(identity, content, options=dict(options or {}))
        writer.commit()
    return observed.record.id


def read_documents(home: Any) -> list[Any]:
    """Every committed document of ``home`` (a path or ``Home``)."""
    from episteme_core.stages.documents import read_documents as read

    return read(_home(home))


def read_chunks(home: Any) -> list[Any]:
    """Every committed chunk of ``home`` (a path or ``Home``)."""
    from episteme_core.stages.chunks import read_chunks as read

    return read(_home(home))


def text_in_order(text: str, source: str, start: int, end: int) -> bool:
    """True when every non-space character of ``text`` occurs in ``source[start:end]`` in order
    (how a family's test checks that a block's span holds its text through markup)."""
    from episteme_core.extract.html import in_order

    return in_order(text, source, start, end)


SAMPLE_TEXT = (
    b"A sample document\n\nIts first paragraph says what it is about.\n\n"
    b"Its second paragraph MUST be found by a query for these words.\n"
)


@attrs.frozen
class SampleHome:
    """A home with one committed snapshot, its extracted document and the document's chunks."""

    home: Any  # episteme_core.api.Home
    snapshot_id: str
    document: Any
    chunks: list[Any]

    @property
    def root(self) -> Path:
        return Path(self.home.root)


def make_sample_home(root: Any, *, url: str = "https://sample.example/doc", content: bytes = SAMPLE_TEXT,
                     content_type: str = "text/plain") -> SampleHome:
    """Capture ``content`` as a snapshot of ``url``, extract and chunk it with the loaded plugins."""
    from episteme_core.chunking.run import chunk_home
    from episteme_core.extract.run import extract_documents
    from episteme_core.kernel.context import RunContext
    from episteme_core.kernel.loader import load_plugins

    home = _home(root)
    snapshot_id = store_snapshot(home, url, content, content_type=content_type)
    ctx = RunContext(command="test", home=home, plugins=load_plugins())
    with ctx.writing():
        extract_documents(home, ctx.plugins, warn=ctx.warn)
        chunk_home(home, ctx.plugins.all("chunker"), max_chars=6000, overlap_chars=400, warn=ctx.warn)
    documents = read_documents(home)
    document = next(d for d in documents if d.source == url)
    chunks = [c for c in read_chunks(home) if c.document_id == document.id]
    return SampleHome(home=home, snapshot_id=snapshot_id, document=document, chunks=chunks)
