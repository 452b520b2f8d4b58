"""Builtin chunkers (``window``, ``paragraph``) and the ``episteme chunk`` command."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from episteme_core.hookspecs import Register, hookimpl
from episteme_core.kernel.context import Outcome
from episteme_core.kernel.contracts import Command

if TYPE_CHECKING:
    from episteme_core.executor.base import ExecutorSpec
    from episteme_core.kernel.context import Context

def add_chunk_options(parser: argparse.ArgumentParser) -> None:
    """``--max-chars``, ``--overlap-chars`` and ``--chunker`` (shared with ``pipeline``)."""
    from episteme_core.cli.parser import add_int_option
    from episteme_core.kernel.defaults import (
        DEFAULT_MAX_CHARS,
        DEFAULT_OVERLAP_CHARS,
        MAX_MAX_CHARS,
        MAX_OVERLAP_CHARS,
        MIN_MAX_CHARS,
    )

    add_int_option(parser, "--max-chars", default=DEFAULT_MAX_CHARS, low=MIN_MAX_CHARS, high=MAX_MAX_CHARS,
                   help="longest chunk in characters")
    add_int_option(parser, "--overlap-chars", default=DEFAULT_OVERLAP_CHARS, low=0, high=MAX_OVERLAP_CHARS,
                   help="characters a window repeats from the one before when it cuts a block; "
                        "less than --max-chars")
    parser.add_argument("--chunker", metavar="NAME", default=None,
                        help="use this chunker for every document it accepts (default: for each "
                             "document, the accepting chunker of highest priority)")


def stage_override(ctx: Context, stage: str, value: str | None) -> None:
    if value:
        ctx.home.stage_overrides[stage] = Path(value).expanduser().absolute()


def run_chunk(ctx: Context, max_chars: int, overlap_chars: int, chunker: str | None = None,
              spec: ExecutorSpec | None = None) -> Any:
    """Chunk under the writer lock with progress, on the executor ``spec`` names (default: this
    process); returns the ``ChunkReport``."""
    from episteme_core.chunking.run import check_options, chunk_home
    from episteme_core.executor import running

    check_options(max_chars, overlap_chars)

    def progress(current: int, total: int, key: str) -> None:
        ctx.progress.update("chunk", current, total, "completed" if current == total else "started", key)

    with ctx.writing(), running(spec) as executor:
        return chunk_home(ctx.home, ctx.plugins.all("chunker"), max_chars=max_chars,
                          overlap_chars=overlap_chars, progress=progress, prefer=chunker, warn=ctx.warn,
                          executor=executor)


def _configure(parser: argparse.ArgumentParser) -> None:
    from episteme_core.cli.executor_options import add_executor_options

    add_chunk_options(parser)
    parser.add_argument("--documents", metavar="DIR", help="read documents from DIR (default HOME/documents)")
    parser.add_argument("--chunks", metavar="DIR", help="write chunks to DIR (default HOME/chunks)")
    add_executor_options(parser)


def _run(args: argparse.Namespace, ctx: Context) -> Outcome:
    from episteme_core.cli.executor_options import executor_spec_of
    from episteme_core.records.convert import unstructure

    stage_override(ctx, "documents", args.documents)
    stage_override(ctx, "chunks", args.chunks)
    report = run_chunk(ctx, args.max_chars, args.overlap_chars, args.chunker, executor_spec_of(args))
    text = (
        f"Created {report.chunks} chunk(s) from {report.documents} document(s) "
        f"({report.chunked} chunked, {report.reused} unchanged, {report.removed} removed).\n"
        f"Next: episteme index"
    )
    return Outcome(data=unstructure(report), text=text)


class LazyChunker:
    """A chunker whose module is imported on first use (loading plugins stays cheap); every method
    is the implementation's."""

    def __init__(self, name: str, version: str, help: str, target: str) -> None:
        self.name = name
        self.version = version
        self.help = help
        self.priority = 0
        self._target = target
        self._impl: Any = None

    def _load(self) -> Any:
        if self._impl is None:
            import importlib

            module, cls = self._target.split(":")
            self._impl = getattr(importlib.import_module(module), cls)()
            assert (self._impl.name, self._impl.version) == (self.name, self.version), self._target
        return self._impl

    def accepts(self, document: Any) -> bool:
        return bool(self._load().accepts(document))

    def accepts_json(self, data: dict[str, Any]) -> bool:
        """``accepts`` for a document given as its stored JSON (the chunks stage's fast path)."""
        return bool(self._load().accepts_json(data))

    def chunk(self, document: Any, *, max_chars: int, overlap_chars: int,
              verbatim: frozenset[str] = frozenset()) -> Any:
        return self._load().chunk(document, max_chars=max_chars, overlap_chars=overlap_chars,
                                  verbatim=verbatim)

    def chunk_rows(self, data: dict[str, Any], *, max_chars: int, overlap_chars: int,
                   verbatim: frozenset[str] = frozenset()) -> list[str]:
        """Sealed canonical chunk texts from the document's stored JSON (see ``chunking.rows``)."""
        rows: list[str] = self._load().chunk_rows(data, max_chars=max_chars, overlap_chars=overlap_chars,
                                                  verbatim=verbatim)
        return rows


@hookimpl
def episteme_chunkers(register: Register) -> None:
    register(LazyChunker("window", "3", "bounded, overlapping windows over each section's blocks",
                         "episteme_core.chunking.window:WindowChunker"))
    register(LazyChunker("paragraph", "3", "one chunk per paragraph of a personal record, keeping its "
                         "time and number", "episteme_core.chunking.paragraph:ParagraphChunker"))


@hookimpl
def episteme_commands(register: Register) -> None:
    register(Command(
        name="chunk",
        help="cut committed documents into bounded, overlapping, cited chunks",
        description=(
            "Cut every committed document into chunks: windows of at most --max-chars within a "
            "section (records: one chunk per paragraph). Unchanged documents are reused."
        ),
        configure=_configure,
        run=_run,
    ))
