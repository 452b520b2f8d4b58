"""The public API for plugins: everything a plugin may import from the kernel, in one place.

A plugin imports from ``episteme_core.api`` (and ``episteme_core.testing`` in its tests) and
nothing else of the kernel; an import-linter contract (``pyproject.toml``, ``tox -e lint``) holds the
plugins in this repository to it. Names are loaded on first use (PEP 562), so importing this module
costs nothing at ``episteme --help``. Each group below says what a plugin does with its names.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# public name -> (module, attribute). Grouped by what a plugin does with them.
_EXPORTS: dict[str, tuple[str, str]] = {
    # Hooks and registration.
    "__version__": ("episteme_core", "__version__"),
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
    "Reader": ("episteme_core.kernel.contracts", "Reader"),
    "Exporter": ("episteme_core.kernel.contracts", "Exporter"),
    "ToolLike": ("episteme_core.kernel.contracts", "ToolLike"),
    "DEFAULT_PRIORITY": ("episteme_core.kernel.contracts", "DEFAULT_PRIORITY"),
    # The loaded plugins: the registry a run looks components up in (tests load it with ``load_plugins``).
    "Plugins": ("episteme_core.kernel.registry", "Plugins"),
    "load_plugins": ("episteme_core.kernel.loader", "load_plugins"),
    # Errors and the codes they carry.
    "EpistemeError": ("episteme_core.errors", "EpistemeError"),
    "Cancelled": ("episteme_core.errors", "Cancelled"),
    "accept_stop_signal": ("episteme_core.errors", "accept_stop_signal"),
    "ERROR_CODES": ("episteme_core.errors", "ERROR_CODES"),
    # Canonical JSON, fingerprints, strict and bounded input.
    "canonical_bytes": ("episteme_core.records.canonical", "canonical_bytes"),
    "canonical_text": ("episteme_core.records.canonical", "canonical_text"),
    "fingerprint": ("episteme_core.records.canonical", "fingerprint"),
    "sha256_hex": ("episteme_core.records.canonical", "sha256_hex"),
    "loads_strict": ("episteme_core.records.canonical", "loads_strict"),
    "read_input": ("episteme_core.records.inputs", "read_input"),
    "paused_cycle_gc": ("episteme_core.records.gcpause", "paused_cycle_gc"),
    # Commands, their options, and the context a run gets.
    "Command": ("episteme_core.kernel.contracts", "Command"),
    "Outcome": ("episteme_core.kernel.context", "Outcome"),
    "RunContext": ("episteme_core.kernel.context", "RunContext"),
    "Context": ("episteme_core.kernel.context", "Context"),
    "ProgressSink": ("episteme_core.kernel.context", "ProgressSink"),
    "ArgumentParser": ("episteme_core.cli.parser", "ArgumentParser"),
    "add_int_option": ("episteme_core.cli.parser", "add_int_option"),
    "add_float_option": ("episteme_core.cli.parser", "add_float_option"),
    "float_range": ("episteme_core.cli.parser", "float_range"),
    "add_global_options": ("episteme_core.cli.main", "add_global_options"),
    # The home and the store: read committed stages, write snapshots (inside ``ctx.writing()``), write files.
    "Home": ("episteme_core.store.home", "Home"),
    "read_catalog": ("episteme_core.stages.snapshots", "read_catalog"),
    "SnapshotCatalog": ("episteme_core.stages.snapshots", "SnapshotCatalog"),
    "SnapshotWriter": ("episteme_core.stages.snapshots", "SnapshotWriter"),
    "make_identity": ("episteme_core.stages.snapshots", "make_identity"),
    "read_documents": ("episteme_core.stages.documents", "read_documents"),
    "read_chunks": ("episteme_core.stages.chunks", "read_chunks"),
    "iter_chunk_rows": ("episteme_core.stages.chunks", "iter_chunk_rows"),
    "atomic_write": ("episteme_core.store.atomic", "atomic_write"),
    "crashpoint": ("episteme_core.store.atomic", "crashpoint"),
    "fsync_dir": ("episteme_core.store.atomic", "fsync_dir"),
    "temp_path_for": ("episteme_core.store.atomic", "temp_path_for"),
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
    # Chunks: the records, the base of a row chunker, the one builder, the layout rules the builtins cut with.
    "Chunk": ("episteme_core.records.evidence", "Chunk"),
    "ChunkBlock": ("episteme_core.records.evidence", "ChunkBlock"),
    "ChunkDiagnostic": ("episteme_core.records.evidence", "ChunkDiagnostic"),
    "chunk_from_json": ("episteme_core.records.evidence", "chunk_from_json"),
    "RowChunker": ("episteme_core.chunking.rows", "RowChunker"),
    "Cut": ("episteme_core.chunking.rows", "Cut"),
    "build_chunks": ("episteme_core.chunking.rows", "build_chunks"),
    "cut_rows": ("episteme_core.chunking.rows", "cut_rows"),
    "window_rows": ("episteme_core.chunking.rows", "window_rows"),
    "paragraph_rows": ("episteme_core.chunking.rows", "paragraph_rows"),
    "layout": ("episteme_core.chunking.layout", "layout"),
    "windows": ("episteme_core.chunking.layout", "windows"),
    "Window": ("episteme_core.chunking.layout", "Window"),
    # Search: query a home as ``episteme query`` does, open its index, and what indexers build it with.
    "query": ("episteme_core.search.query", "query"),
    "QueryResult": ("episteme_core.search.query", "QueryResult"),
    "open_index": ("episteme_core.search.indexers", "open_index"),
    "build_index": ("episteme_core.search.indexers", "build_index"),
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
    # Readers for ask: the records of a read, the base class, the protocol's prompt, ask itself.
    "Candidate": ("episteme_core.records.reading", "Candidate"),
    "ReadRequest": ("episteme_core.records.reading", "ReadRequest"),
    "ReadReply": ("episteme_core.records.reading", "ReadReply"),
    "ReadError": ("episteme_core.records.reading", "ReadError"),
    "ReaderSpec": ("episteme_core.records.reading", "ReaderSpec"),
    "BaseReader": ("episteme_core.ask.base_reader", "BaseReader"),
    "check_reader_options": ("episteme_core.ask.options", "check_reader_options"),
    "check_number": ("episteme_core.ask.options", "check_number"),
    "reader_messages": ("episteme_core.ask.protocol", "messages"),
    "extract_ids": ("episteme_core.ask.protocol", "extract_ids"),
    "parse_prompt": ("episteme_core.ask.protocol", "parse_prompt"),
    "reader_prompt_parts": ("episteme_core.ask.protocol", "prompt_parts"),
    "reader_response_format": ("episteme_core.ask.protocol", "response_format"),
    "Bm25Reader": ("episteme_core.ask.bm25_reader", "Bm25Reader"),
    "HttpReader": ("episteme_core.ask.http_reader", "HttpReader"),
    "ReaderPool": ("episteme_core.ask.pool", "Pool"),
    "AskOptions": ("episteme_core.ask.run", "AskOptions"),
    "ask": ("episteme_core.ask.run", "ask"),
    "MemoryShard": ("episteme_core.ask.memory", "MemoryShard"),
    "MemoryChunk": ("episteme_core.ask.memory", "MemoryChunk"),
    # MCP tools for episteme serve, and the one rule for a bearer token file (serve, graph view).
    "Tool": ("episteme_core.serve.tools", "Tool"),
    "ToolCall": ("episteme_core.serve.tools", "ToolCall"),
    "read_token_file": ("episteme_core.serve.guards", "read_token_file"),
}

# Spelled out (not computed) so type checkers see every re-export; a test keeps it equal to _EXPORTS.
__all__ = [
    "ArgumentParser", "AskOptions", "BBox", "BaseFamily", "BaseReader", "Block", "Bm25Reader",
    "CONTENT_TRUST", "Cancelled", "Candidate", "Chunk", "ChunkBlock", "ChunkDiagnostic", "Chunker",
    "Collected", "Command", "Context", "Cut", "DEFAULT_PRIORITY", "Diagnostic", "Document",
    "DocumentBuilder", "ERROR_CODES", "EpistemeError", "Exporter", "ExtractRequest", "Extractor", "Family",
    "Filters", "Hit", "Home", "HttpReader", "IndexBundle", "Indexer", "IngestSource", "MemoryChunk",
    "MemoryShard", "Outcome", "Paragraph", "Plugins", "ProgressSink", "Provenance", "QueryResult",
    "ReadError", "ReadReply", "ReadRequest", "Reader", "ReaderKind", "ReaderPool", "ReaderSpec", "Record",
    "Register", "RowChunker", "RunContext", "SearchableShard", "SearchableShards", "Section", "ShardSet",
    "ShardsWriter", "SnapshotCatalog", "SnapshotWriter", "Source", "Span", "StoredShard", "Tool",
    "ToolCall", "ToolLike", "Window", "__version__", "accept_stop_signal", "add_float_option",
    "add_global_options",
    "add_int_option", "add_pack_option", "ask", "atomic_write", "build_chunks", "build_index",
    "build_record", "canonical_bytes", "canonical_text",
    "check_number", "check_reader_options", "chunk_from_json", "crashpoint", "cut_rows",
    "decode_source", "decode_text", "extract_ids", "fingerprint", "float_range", "from_timestamp",
    "fsync_dir", "hookimpl", "id_segment", "ingest_outcome", "iter_chunk_rows", "known_ids", "layout",
    "load_plugins", "loads_strict", "make_identity", "merge_grown", "open_bundle", "open_committed",
    "open_index", "paragraph_rows", "parse_prompt", "parse_time", "paused_cycle_gc", "query",
    "read_catalog", "read_chunks", "read_documents", "read_input", "read_token_file", "reader_messages",
    "reader_prompt_parts", "reader_response_format", "run_ingest", "safe_name", "sha256_hex",
    "split_paragraphs", "temp_path_for", "utc_iso", "window_rows", "windows"
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
    from episteme_core import __version__ as __version__
    from episteme_core.ask.base_reader import BaseReader as BaseReader
    from episteme_core.ask.bm25_reader import Bm25Reader as Bm25Reader
    from episteme_core.ask.http_reader import HttpReader as HttpReader
    from episteme_core.ask.memory import MemoryChunk as MemoryChunk
    from episteme_core.ask.memory import MemoryShard as MemoryShard
    from episteme_core.ask.options import check_number as check_number
    from episteme_core.ask.options import check_reader_options as check_reader_options
    from episteme_core.ask.pool import Pool as ReaderPool
    from episteme_core.ask.protocol import extract_ids as extract_ids
    from episteme_core.ask.protocol import messages as reader_messages
    from episteme_core.ask.protocol import parse_prompt as parse_prompt
    from episteme_core.ask.protocol import prompt_parts as reader_prompt_parts
    from episteme_core.ask.protocol import response_format as reader_response_format
    from episteme_core.ask.run import AskOptions as AskOptions
    from episteme_core.ask.run import ask as ask
    from episteme_core.builtins.personal import add_pack_option as add_pack_option
    from episteme_core.builtins.personal import ingest_outcome as ingest_outcome
    from episteme_core.chunking.layout import Window as Window
    from episteme_core.chunking.layout import layout as layout
    from episteme_core.chunking.layout import windows as windows
    from episteme_core.chunking.rows import Cut as Cut
    from episteme_core.chunking.rows import RowChunker as RowChunker
    from episteme_core.chunking.rows import build_chunks as build_chunks
    from episteme_core.chunking.rows import cut_rows as cut_rows
    from episteme_core.chunking.rows import paragraph_rows as paragraph_rows
    from episteme_core.chunking.rows import window_rows as window_rows
    from episteme_core.cli.main import add_global_options as add_global_options
    from episteme_core.cli.parser import ArgumentParser as ArgumentParser
    from episteme_core.cli.parser import add_float_option as add_float_option
    from episteme_core.cli.parser import add_int_option as add_int_option
    from episteme_core.cli.parser import float_range as float_range
    from episteme_core.errors import ERROR_CODES as ERROR_CODES
    from episteme_core.errors import Cancelled as Cancelled
    from episteme_core.errors import EpistemeError as EpistemeError
    from episteme_core.errors import accept_stop_signal as accept_stop_signal
    from episteme_core.extract.builder import DocumentBuilder as DocumentBuilder
    from episteme_core.extract.family import Family as BaseFamily
    from episteme_core.hookspecs import Register as Register
    from episteme_core.hookspecs import hookimpl as hookimpl
    from episteme_core.kernel.context import Context as Context
    from episteme_core.kernel.context import Outcome as Outcome
    from episteme_core.kernel.context import ProgressSink as ProgressSink
    from episteme_core.kernel.context import RunContext as RunContext
    from episteme_core.kernel.contracts import DEFAULT_PRIORITY as DEFAULT_PRIORITY
    from episteme_core.kernel.contracts import Chunker as Chunker
    from episteme_core.kernel.contracts import Command as Command
    from episteme_core.kernel.contracts import Exporter as Exporter
    from episteme_core.kernel.contracts import Extractor as Extractor
    from episteme_core.kernel.contracts import Family as Family
    from episteme_core.kernel.contracts import Indexer as Indexer
    from episteme_core.kernel.contracts import IngestSource as IngestSource
    from episteme_core.kernel.contracts import Reader as Reader
    from episteme_core.kernel.contracts import ReaderKind as ReaderKind
    from episteme_core.kernel.contracts import SearchableShard as SearchableShard
    from episteme_core.kernel.contracts import SearchableShards as SearchableShards
    from episteme_core.kernel.contracts import Source as Source
    from episteme_core.kernel.contracts import ToolLike as ToolLike
    from episteme_core.kernel.loader import load_plugins as load_plugins
    from episteme_core.kernel.registry import Plugins as Plugins
    from episteme_core.personal.ingest import Collected as Collected
    from episteme_core.personal.ingest import run_ingest as run_ingest
    from episteme_core.personal.model import Paragraph as Paragraph
    from episteme_core.personal.model import Record as Record
    from episteme_core.personal.model import build_record as build_record
    from episteme_core.personal.model import from_timestamp as from_timestamp
    from episteme_core.personal.model import id_segment as id_segment
    from episteme_core.personal.model import merge_grown as merge_grown
    from episteme_core.personal.model import parse_time as parse_time
    from episteme_core.personal.model import safe_name as safe_name
    from episteme_core.personal.model import utc_iso as utc_iso
    from episteme_core.personal.plaintext import decode_text as decode_text
    from episteme_core.personal.plaintext import split_paragraphs as split_paragraphs
    from episteme_core.personal.stored import known_ids as known_ids
    from episteme_core.records.canonical import canonical_bytes as canonical_bytes
    from episteme_core.records.canonical import canonical_text as canonical_text
    from episteme_core.records.canonical import fingerprint as fingerprint
    from episteme_core.records.canonical import loads_strict as loads_strict
    from episteme_core.records.canonical import sha256_hex as sha256_hex
    from episteme_core.records.evidence import BBox as BBox
    from episteme_core.records.evidence import Block as Block
    from episteme_core.records.evidence import Chunk as Chunk
    from episteme_core.records.evidence import ChunkBlock as ChunkBlock
    from episteme_core.records.evidence import ChunkDiagnostic as ChunkDiagnostic
    from episteme_core.records.evidence import Diagnostic as Diagnostic
    from episteme_core.records.evidence import Document as Document
    from episteme_core.records.evidence import Provenance as Provenance
    from episteme_core.records.evidence import Section as Section
    from episteme_core.records.evidence import Span as Span
    from episteme_core.records.evidence import chunk_from_json as chunk_from_json
    from episteme_core.records.extraction import ExtractRequest as ExtractRequest
    from episteme_core.records.gcpause import paused_cycle_gc as paused_cycle_gc
    from episteme_core.records.hits import Filters as Filters
    from episteme_core.records.hits import Hit as Hit
    from episteme_core.records.inputs import read_input as read_input
    from episteme_core.records.reading import Candidate as Candidate
    from episteme_core.records.reading import ReadError as ReadError
    from episteme_core.records.reading import ReaderSpec as ReaderSpec
    from episteme_core.records.reading import ReadReply as ReadReply
    from episteme_core.records.reading import ReadRequest as ReadRequest
    from episteme_core.records.trust import CONTENT_TRUST as CONTENT_TRUST
    from episteme_core.search.indexers import build_index as build_index
    from episteme_core.search.indexers import open_index as open_index
    from episteme_core.search.opening import open_bundle as open_bundle
    from episteme_core.search.opening import open_committed as open_committed
    from episteme_core.search.query import QueryResult as QueryResult
    from episteme_core.search.query import query as query
    from episteme_core.search.shardset import ShardSet as ShardSet
    from episteme_core.serve.guards import read_token_file as read_token_file
    from episteme_core.serve.tools import Tool as Tool
    from episteme_core.serve.tools import ToolCall as ToolCall
    from episteme_core.stages.bundle import IndexBundle as IndexBundle
    from episteme_core.stages.chunks import iter_chunk_rows as iter_chunk_rows
    from episteme_core.stages.chunks import read_chunks as read_chunks
    from episteme_core.stages.documents import read_documents as read_documents
    from episteme_core.stages.shards import ShardsWriter as ShardsWriter
    from episteme_core.stages.shards import StoredShard as StoredShard
    from episteme_core.stages.snapshots import SnapshotCatalog as SnapshotCatalog
    from episteme_core.stages.snapshots import SnapshotWriter as SnapshotWriter
    from episteme_core.stages.snapshots import make_identity as make_identity
    from episteme_core.stages.snapshots import read_catalog as read_catalog
    from episteme_core.store.atomic import atomic_write as atomic_write
    from episteme_core.store.atomic import crashpoint as crashpoint
    from episteme_core.store.atomic import fsync_dir as fsync_dir
    from episteme_core.store.atomic import temp_path_for as temp_path_for
    from episteme_core.store.home import Home as Home
    from episteme_core.text.decode import decode as decode_source
