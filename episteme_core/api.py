"""The public API for plugins: everything a plugin may import from the kernel, in one place.

A plugin imports from ``episteme_core.api`` (and ``episteme_core.testing`` in its tests) and
nothing else of the kernel; a ruff rule (``plugins/ruff.toml``) enforces it for the plugins in
this repository. Names are loaded on first use (PEP 562), so importing this module costs nothing
at ``episteme --help``. Each group below says what a plugin does with its names.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# public name -> (module, attribute). Grouped by what a plugin does with them.
_EXPORTS: dict[str, tuple[str, str]] = {
    "__version__": ("episteme_core", "__version__"),
    # Hooks and registration.
    "hookimpl": ("episteme_core.hookspecs", "hookimpl"),
    "Register": ("episteme_core.hookspecs", "Register"),
    # The contract of each component kind (checked when it registers) and selection by priority.
    "Source": ("episteme_core.kernel.contracts", "Source"),
    "IngestSource": ("episteme_core.kernel.contracts", "IngestSource"),
    "Extractor": ("episteme_core.kernel.contracts", "Extractor"),
    "Family": ("episteme_core.kernel.contracts", "Family"),
    "Chunker": ("episteme_core.kernel.contracts", "Chunker"),
    "Indexer": ("episteme_core.kernel.contracts", "Indexer"),
    "SearchableShard": ("episteme_core.kernel.contracts", "SearchableShard"),
    "SearchableShards": ("episteme_core.kernel.contracts", "SearchableShards"),
    "ReaderKind": ("episteme_core.kernel.contracts", "ReaderKind"),
    "Exporter": ("episteme_core.kernel.contracts", "Exporter"),
    "DEFAULT_PRIORITY": ("episteme_core.kernel.contracts", "DEFAULT_PRIORITY"),
    # Errors and the codes they carry.
    "EpistemeError": ("episteme_core.errors", "EpistemeError"),
    "Cancelled": ("episteme_core.errors", "Cancelled"),
    "ERROR_CODES": ("episteme_core.errors", "ERROR_CODES"),
    # Canonical JSON, fingerprints, strict and bounded input.
    "canonical_bytes": ("episteme_core.records.canonical", "canonical_bytes"),
    "canonical_text": ("episteme_core.records.canonical", "canonical_text"),
    "fingerprint": ("episteme_core.records.canonical", "fingerprint"),
    "sha256_hex": ("episteme_core.records.canonical", "sha256_hex"),
    "loads_strict": ("episteme_core.records.canonical", "loads_strict"),
    "read_input": ("episteme_core.records.inputs", "read_input"),
    # Commands and the context a run gets.
    "Command": ("episteme_core.kernel.contracts", "Command"),
    "Outcome": ("episteme_core.kernel.context", "Outcome"),
    "Context": ("episteme_core.kernel.context", "Context"),
    "RunContext": ("episteme_core.kernel.context", "RunContext"),
    "ProgressSink": ("episteme_core.kernel.context", "ProgressSink"),
    "add_int_option": ("episteme_core.cli.parser", "add_int_option"),
    # The home and the store: read committed stages, write snapshots (inside ``ctx.writing()``).
    "Home": ("episteme_core.store.home", "Home"),
    "read_catalog": ("episteme_core.stages.snapshots", "read_catalog"),
    "SnapshotCatalog": ("episteme_core.stages.snapshots", "SnapshotCatalog"),
    "SnapshotWriter": ("episteme_core.stages.snapshots", "SnapshotWriter"),
    "make_identity": ("episteme_core.stages.snapshots", "make_identity"),
    "read_documents": ("episteme_core.stages.documents", "read_documents"),
    "read_chunks": ("episteme_core.stages.chunks", "read_chunks"),
    "iter_chunk_rows": ("episteme_core.stages.chunks", "iter_chunk_rows"),
    # Extraction: families, extractors, documents and their builder, decoding.
    "BaseFamily": ("episteme_core.extract.family", "Family"),
    "ExtractRequest": ("episteme_core.records.extraction", "ExtractRequest"),
    "DocumentBuilder": ("episteme_core.extract.builder", "DocumentBuilder"),
    "decode_source": ("episteme_core.text.decode", "decode"),
    "Document": ("episteme_core.records.evidence", "Document"),
    "Section": ("episteme_core.records.evidence", "Section"),
    "Block": ("episteme_core.records.evidence", "Block"),
    "Span": ("episteme_core.records.evidence", "Span"),
    "BBox": ("episteme_core.records.evidence", "BBox"),
    "Provenance": ("episteme_core.records.evidence", "Provenance"),
    "Diagnostic": ("episteme_core.records.evidence", "Diagnostic"),
    "CONTENT_TRUST": ("episteme_core.records.trust", "CONTENT_TRUST"),
    # Chunks: the records, the one builder, and the layout rules the builtins cut with.
    "Chunk": ("episteme_core.records.evidence", "Chunk"),
    "ChunkBlock": ("episteme_core.records.evidence", "ChunkBlock"),
    "ChunkDiagnostic": ("episteme_core.records.evidence", "ChunkDiagnostic"),
    "chunk_from_json": ("episteme_core.records.evidence", "chunk_from_json"),
    "Cut": ("episteme_core.chunking.rows", "Cut"),
    "build_chunks": ("episteme_core.chunking.rows", "build_chunks"),
    "cut_rows": ("episteme_core.chunking.rows", "cut_rows"),
    "chunks_from_rows": ("episteme_core.chunking.rows", "chunks_from_rows"),
    "window_rows": ("episteme_core.chunking.rows", "window_rows"),
    "paragraph_rows": ("episteme_core.chunking.rows", "paragraph_rows"),
    "layout": ("episteme_core.chunking.layout", "layout"),
    "windows": ("episteme_core.chunking.layout", "windows"),
    "Window": ("episteme_core.chunking.layout", "Window"),
    # Indexers: search over shards, the shards stage's commit, opening it fresh, the one-file form.
    "Filters": ("episteme_core.records.hits", "Filters"),
    "Hit": ("episteme_core.records.hits", "Hit"),
    "ShardSet": ("episteme_core.search.shardset", "ShardSet"),
    "ShardsWriter": ("episteme_core.stages.shards", "ShardsWriter"),
    "StoredShard": ("episteme_core.stages.shards", "StoredShard"),
    "open_committed": ("episteme_core.search.opening", "open_committed"),
    "open_bundle": ("episteme_core.search.opening", "open_bundle"),
    "IndexBundle": ("episteme_core.stages.bundle", "IndexBundle"),
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
    "decode_text": ("episteme_core.personal.plaintext", "decode_text"),
    "split_paragraphs": ("episteme_core.personal.plaintext", "split_paragraphs"),
    "known_ids": ("episteme_core.personal.stored", "known_ids"),
    "Collected": ("episteme_core.personal.ingest", "Collected"),
    "run_ingest": ("episteme_core.personal.ingest", "run_ingest"),
    "ingest_outcome": ("episteme_core.builtins.personal", "ingest_outcome"),
    "add_pack_option": ("episteme_core.builtins.personal", "add_pack_option"),
    # Readers for ask.
    "Candidate": ("episteme_core.records.reading", "Candidate"),
    "ReadRequest": ("episteme_core.records.reading", "ReadRequest"),
    "ReadReply": ("episteme_core.records.reading", "ReadReply"),
    "ReadError": ("episteme_core.records.reading", "ReadError"),
    "ReaderSpec": ("episteme_core.records.reading", "ReaderSpec"),
    "Reader": ("episteme_core.kernel.contracts", "Reader"),
    "BaseReader": ("episteme_core.ask.base_reader", "BaseReader"),
    "reader_messages": ("episteme_core.ask.protocol", "messages"),
    "extract_ids": ("episteme_core.ask.protocol", "extract_ids"),
    "reader_prompt_parts": ("episteme_core.ask.protocol", "prompt_parts"),
    "reader_response_format": ("episteme_core.ask.protocol", "response_format"),
    "Bm25Reader": ("episteme_core.ask.bm25_reader", "Bm25Reader"),
    "HttpReader": ("episteme_core.ask.http_reader", "HttpReader"),
    "ReaderPool": ("episteme_core.ask.pool", "Pool"),
    "AskOptions": ("episteme_core.ask.run", "AskOptions"),
    "ask": ("episteme_core.ask.run", "ask"),
    "MemoryShard": ("episteme_core.ask.memory", "MemoryShard"),
    "MemoryChunk": ("episteme_core.ask.memory", "MemoryChunk"),
    # MCP tools for episteme serve.
    "Tool": ("episteme_core.serve.tools", "Tool"),
    "ToolCall": ("episteme_core.serve.tools", "ToolCall"),
    "add_global_options": ("episteme_core.cli.main", "add_global_options"),
    "atomic_write": ("episteme_core.store.atomic", "atomic_write"),
    "crashpoint": ("episteme_core.store.atomic", "crashpoint"),
    "fsync_dir": ("episteme_core.store.atomic", "fsync_dir"),
    "temp_path_for": ("episteme_core.store.atomic", "temp_path_for"),
    "ArgumentParser": ("episteme_core.cli.parser", "ArgumentParser"),
    "paused_cycle_gc": ("episteme_core.records.gcpause", "paused_cycle_gc"),
}

# Spelled out (not computed) so type checkers see every re-export; a test keeps it equal to _EXPORTS.
__all__ = [
    "ArgumentParser", "AskOptions", "BBox", "BaseFamily", "BaseReader", "Block", "Bm25Reader",
    "CONTENT_TRUST", "Cancelled", "Candidate", "Chunk", "ChunkBlock", "ChunkDiagnostic", "Chunker",
    "Collected", "Command", "Context", "Cut", "DEFAULT_PRIORITY", "Diagnostic", "Document",
    "DocumentBuilder", "ERROR_CODES", "EpistemeError", "Exporter", "ExtractRequest", "Extractor",
    "Family", "Filters", "Hit", "Home", "HttpReader", "IndexBundle", "Indexer", "IngestSource",
    "MemoryChunk", "MemoryShard", "Outcome", "Paragraph", "ProgressSink", "Provenance", "ReadError",
    "ReadReply", "ReadRequest", "Reader", "ReaderKind", "ReaderPool", "ReaderSpec", "Record", "Register",
    "RunContext", "SearchableShard", "SearchableShards", "Section", "ShardSet", "ShardsWriter",
    "SnapshotCatalog", "SnapshotWriter", "Source", "Span", "StoredShard", "Tool", "ToolCall", "Window",
    "__version__", "add_global_options", "add_int_option", "add_pack_option", "ask", "atomic_write",
    "build_chunks", "build_record", "canonical_bytes", "canonical_text", "chunk_from_json",
    "chunks_from_rows", "crashpoint", "cut_rows", "decode_source", "decode_text", "extract_ids",
    "fingerprint", "from_timestamp", "fsync_dir", "hookimpl", "id_segment", "ingest_outcome",
    "iter_chunk_rows", "known_ids", "layout", "loads_strict", "make_identity", "merge_grown",
    "open_bundle", "open_committed", "paragraph_rows", "parse_time", "paused_cycle_gc", "read_catalog",
    "read_chunks", "read_documents", "read_input", "reader_messages", "reader_prompt_parts",
    "reader_response_format", "run_ingest", "safe_name", "sha256_hex", "split_paragraphs",
    "temp_path_for", "utc_iso", "window_rows", "windows",
]


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


# What type checkers see (``X as X``: an explicit re-export); at run time names load lazily above.
if TYPE_CHECKING:
    from episteme_core import __version__
    from episteme_core.ask.base_reader import BaseReader
    from episteme_core.ask.bm25_reader import Bm25Reader
    from episteme_core.ask.http_reader import HttpReader
    from episteme_core.ask.memory import MemoryChunk, MemoryShard
    from episteme_core.ask.pool import Pool as ReaderPool
    from episteme_core.ask.protocol import extract_ids
    from episteme_core.ask.protocol import messages as reader_messages
    from episteme_core.ask.protocol import prompt_parts as reader_prompt_parts
    from episteme_core.ask.protocol import response_format as reader_response_format
    from episteme_core.ask.run import AskOptions, ask
    from episteme_core.builtins.personal import add_pack_option, ingest_outcome
    from episteme_core.chunking.layout import Window, layout, windows
    from episteme_core.chunking.rows import (
        Cut,
        build_chunks,
        chunks_from_rows,
        cut_rows,
        paragraph_rows,
        window_rows,
    )
    from episteme_core.cli.main import add_global_options
    from episteme_core.cli.parser import ArgumentParser, add_int_option
    from episteme_core.errors import ERROR_CODES, Cancelled, EpistemeError
    from episteme_core.extract.builder import DocumentBuilder
    from episteme_core.extract.family import Family as BaseFamily
    from episteme_core.hookspecs import Register, hookimpl
    from episteme_core.kernel.context import Context, Outcome, ProgressSink, RunContext
    from episteme_core.kernel.contracts import (
        DEFAULT_PRIORITY,
        Chunker,
        Command,
        Exporter,
        Extractor,
        Family,
        Indexer,
        IngestSource,
        Reader,
        ReaderKind,
        SearchableShard,
        SearchableShards,
        Source,
    )
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
    from episteme_core.personal.plaintext import decode_text, split_paragraphs
    from episteme_core.personal.stored import known_ids
    from episteme_core.records.canonical import (
        canonical_bytes,
        canonical_text,
        fingerprint,
        loads_strict,
        sha256_hex,
    )
    from episteme_core.records.evidence import (
        BBox,
        Block,
        Chunk,
        ChunkBlock,
        ChunkDiagnostic,
        Diagnostic,
        Document,
        Provenance,
        Section,
        Span,
        chunk_from_json,
    )
    from episteme_core.records.extraction import ExtractRequest
    from episteme_core.records.gcpause import paused_cycle_gc
    from episteme_core.records.hits import Filters, Hit
    from episteme_core.records.inputs import read_input
    from episteme_core.records.reading import Candidate, ReadError, ReaderSpec, ReadReply, ReadRequest
    from episteme_core.records.trust import CONTENT_TRUST
    from episteme_core.search.opening import open_bundle, open_committed
    from episteme_core.search.shardset import ShardSet
    from episteme_core.serve.tools import Tool, ToolCall
    from episteme_core.stages.bundle import IndexBundle
    from episteme_core.stages.chunks import iter_chunk_rows, read_chunks
    from episteme_core.stages.documents import read_documents
    from episteme_core.stages.shards import ShardsWriter, StoredShard
    from episteme_core.stages.snapshots import SnapshotCatalog, SnapshotWriter, make_identity, read_catalog
    from episteme_core.store.atomic import atomic_write, crashpoint, fsync_dir, temp_path_for
    from episteme_core.store.home import Home
    from episteme_core.text.decode import decode as decode_source
