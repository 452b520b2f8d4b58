"""The public API for plugins: everything a plugin may import from the kernel, in one place.

A plugin imports from ``episteme_core.api`` (and ``episteme_core.testing`` in its tests) and
nothing else of the kernel; a ruff rule enforces it for the plugins in this repository. Names are
loaded on first use (PEP 562), so importing this module costs nothing at ``episteme --help``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# public name -> (module, attribute). Grouped by what a plugin does with them.
_EXPORTS: dict[str, tuple[str, str]] = {
    # Hooks and registration.
    "hookimpl": ("episteme_core.hookspecs", "hookimpl"),
    "Register": ("episteme_core.hookspecs", "Register"),
    # Errors and the codes they carry.
    "EpistemeError": ("episteme_core.errors", "EpistemeError"),
    "Cancelled": ("episteme_core.errors", "Cancelled"),
    "ERROR_CODES": ("episteme_core.errors", "ERROR_CODES"),
    # Canonical JSON, fingerprints, strict JSON input.
    "canonical_bytes": ("episteme_core.canonical", "canonical_bytes"),
    "canonical_text": ("episteme_core.canonical", "canonical_text"),
    "fingerprint": ("episteme_core.canonical", "fingerprint"),
    "sha256_hex": ("episteme_core.canonical", "sha256_hex"),
    "loads_strict": ("episteme_core.canonical", "loads_strict"),
    "read_input": ("episteme_core.inputs", "read_input"),
    # Commands.
    "Command": ("episteme_core.cli.command", "Command"),
    "Outcome": ("episteme_core.cli.command", "Outcome"),
    "Context": ("episteme_core.cli.context", "Context"),
    "add_int_option": ("episteme_core.cli.parser", "add_int_option"),
    "add_global_options": ("episteme_core.cli.main", "add_global_options"),
    "ArgumentParser": ("episteme_core.cli.parser", "ArgumentParser"),
    # The home and the store.
    "Home": ("episteme_core.store.home", "Home"),
    "read_catalog": ("episteme_core.snapshots", "read_catalog"),
    "SnapshotCatalog": ("episteme_core.snapshots", "SnapshotCatalog"),
    # Extraction: families, extractors, documents.
    "Family": ("episteme_core.extract.api", "Family"),
    "Extractor": ("episteme_core.extract.api", "Extractor"),
    "ExtractRequest": ("episteme_core.extract.api", "ExtractRequest"),
    "Document": ("episteme_core.document", "Document"),
    "Section": ("episteme_core.document", "Section"),
    "Block": ("episteme_core.document", "Block"),
    "Span": ("episteme_core.document", "Span"),
    "BBox": ("episteme_core.document", "BBox"),
    "Provenance": ("episteme_core.document", "Provenance"),
    "Diagnostic": ("episteme_core.document", "Diagnostic"),
    "CONTENT_TRUST": ("episteme_core.document", "CONTENT_TRUST"),
    # Chunks.
    "Chunk": ("episteme_core.chunk", "Chunk"),
    "ChunkBlock": ("episteme_core.chunk", "ChunkBlock"),
    # Personal records (sources of records: books, chats, commits, ...).
    "Record": ("episteme_core.personal.model", "Record"),
    "Paragraph": ("episteme_core.personal.model", "Paragraph"),
    "build_record": ("episteme_core.personal.model", "build_record"),
    "parse_time": ("episteme_core.personal.model", "parse_time"),
    "from_timestamp": ("episteme_core.personal.model", "from_timestamp"),
    "utc_iso": ("episteme_core.personal.model", "utc_iso"),
    "safe_name": ("episteme_core.personal.model", "safe_name"),
    "id_segment": ("episteme_core.personal.model", "id_segment"),
    "merge_grown": ("episteme_core.personal.model", "merge_grown"),
    "decode_text": ("episteme_core.personal.text", "decode_text"),
    "split_paragraphs": ("episteme_core.personal.text", "split_paragraphs"),
    "known_ids": ("episteme_core.personal.store", "known_ids"),
    "Collected": ("episteme_core.personal.ingest", "Collected"),
    "run_ingest": ("episteme_core.personal.ingest", "run_ingest"),
    "ingest_outcome": ("episteme_core.personal.sources", "outcome"),
    # Readers for ask.
    "Candidate": ("episteme_core.ask.reader", "Candidate"),
    "ReadRequest": ("episteme_core.ask.reader", "ReadRequest"),
    "ReadReply": ("episteme_core.ask.reader", "ReadReply"),
    "ReadError": ("episteme_core.ask.reader", "ReadError"),
    "ReaderSpec": ("episteme_core.ask.reader", "ReaderSpec"),
    "Reader": ("episteme_core.ask.reader", "Reader"),
    "ReaderKind": ("episteme_core.ask.reader", "ReaderKind"),
    "BaseReader": ("episteme_core.ask.reader", "BaseReader"),
    "reader_messages": ("episteme_core.ask.protocol", "messages"),
    "extract_ids": ("episteme_core.ask.protocol", "extract_ids"),
    "reader_prompt_parts": ("episteme_core.ask.protocol", "prompt_parts"),
    "reader_response_format": ("episteme_core.ask.protocol", "response_format"),
    "Bm25Reader": ("episteme_core.ask.bm25", "Bm25Reader"),
    "HttpReader": ("episteme_core.ask.http", "HttpReader"),
    "ReaderPool": ("episteme_core.ask.pool", "Pool"),
    "AskOptions": ("episteme_core.ask.run", "AskOptions"),
    "ask": ("episteme_core.ask.run", "ask"),
    "MemoryShard": ("episteme_core.ask.memory", "MemoryShard"),
    "MemoryChunk": ("episteme_core.ask.memory", "MemoryChunk"),
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Load a public name on first use and keep it in the module."""
    try:
        module_name, attribute = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"episteme_core.api has no {name!r}") from None
    value = getattr(importlib.import_module(module_name), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # what type checkers and IDEs see; at run time names load lazily above
    from episteme_core.ask.bm25 import Bm25Reader
    from episteme_core.ask.http import HttpReader
    from episteme_core.ask.memory import MemoryChunk, MemoryShard
    from episteme_core.ask.pool import Pool as ReaderPool
    from episteme_core.ask.protocol import extract_ids
    from episteme_core.ask.protocol import messages as reader_messages
    from episteme_core.ask.protocol import prompt_parts as reader_prompt_parts
    from episteme_core.ask.protocol import response_format as reader_response_format
    from episteme_core.ask.reader import (
        BaseReader,
        Candidate,
        Reader,
        ReaderKind,
        ReadError,
        ReaderSpec,
        ReadReply,
        ReadRequest,
    )
    from episteme_core.ask.run import AskOptions, ask
    from episteme_core.canonical import canonical_bytes, canonical_text, fingerprint, loads_strict, sha256_hex
    from episteme_core.chunk import Chunk, ChunkBlock
    from episteme_core.cli.command import Command, Outcome
    from episteme_core.cli.context import Context
    from episteme_core.cli.main import add_global_options
    from episteme_core.cli.parser import ArgumentParser, add_int_option
    from episteme_core.document import (
        CONTENT_TRUST,
        BBox,
        Block,
        Diagnostic,
        Document,
        Provenance,
        Section,
        Span,
    )
    from episteme_core.errors import ERROR_CODES, Cancelled, EpistemeError
    from episteme_core.extract.api import Extractor, ExtractRequest, Family
    from episteme_core.hookspecs import Register, hookimpl
    from episteme_core.inputs import read_input
    from episteme_core.personal.ingest import Collected, run_ingest
    from episteme_core.personal.model import (
        Paragraph,
        Record,
        build_record,
        from_timestamp,
        id_segment,
        merge_grown,
        parse_time,
        safe_name,
        utc_iso,
    )
    from episteme_core.personal.sources import outcome as ingest_outcome
    from episteme_core.personal.store import known_ids
    from episteme_core.personal.text import decode_text, split_paragraphs
    from episteme_core.snapshots import SnapshotCatalog, read_catalog
    from episteme_core.store.home import Home
