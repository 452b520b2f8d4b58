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
    "Source": ("episteme_core.components", "Source"),
    "IngestSource": ("episteme_core.components", "IngestSource"),
    "Extractor": ("episteme_core.components", "Extractor"),
    "Family": ("episteme_core.components", "Family"),
    "Chunker": ("episteme_core.components", "Chunker"),
    "Indexer": ("episteme_core.components", "Indexer"),
    "SearchableShard": ("episteme_core.components", "SearchableShard"),
    "SearchableShards": ("episteme_core.components", "SearchableShards"),
    "ReaderKind": ("episteme_core.components", "ReaderKind"),
    "Exporter": ("episteme_core.components", "Exporter"),
    "DEFAULT_PRIORITY": ("episteme_core.components", "DEFAULT_PRIORITY"),
    # Errors and the codes they carry.
    "EpistemeError": ("episteme_core.errors", "EpistemeError"),
    "Cancelled": ("episteme_core.errors", "Cancelled"),
    "ERROR_CODES": ("episteme_core.errors", "ERROR_CODES"),
    # Canonical JSON, fingerprints, strict and bounded input.
    "canonical_bytes": ("episteme_core.canonical", "canonical_bytes"),
    "canonical_text": ("episteme_core.canonical", "canonical_text"),
    "fingerprint": ("episteme_core.canonical", "fingerprint"),
    "sha256_hex": ("episteme_core.canonical", "sha256_hex"),
    "loads_strict": ("episteme_core.canonical", "loads_strict"),
    "read_input": ("episteme_core.inputs", "read_input"),
    # Commands and the context a run gets.
    "Command": ("episteme_core.cli.command", "Command"),
    "Outcome": ("episteme_core.cli.command", "Outcome"),
    "Context": ("episteme_core.cli.context", "Context"),
    "RunContext": ("episteme_core.context", "RunContext"),
    "ProgressSink": ("episteme_core.context", "ProgressSink"),
    "add_int_option": ("episteme_core.cli.parser", "add_int_option"),
    # The home and the store: read committed stages, write snapshots (inside ``ctx.writing()``).
    "Home": ("episteme_core.store.home", "Home"),
    "read_catalog": ("episteme_core.snapshots", "read_catalog"),
    "SnapshotCatalog": ("episteme_core.snapshots", "SnapshotCatalog"),
    "SnapshotWriter": ("episteme_core.snapshots", "SnapshotWriter"),
    "make_identity": ("episteme_core.snapshots", "make_identity"),
    "read_documents": ("episteme_core.documents", "read_documents"),
    "read_chunks": ("episteme_core.chunking", "read_chunks"),
    "iter_chunk_rows": ("episteme_core.chunking", "iter_chunk_rows"),
    # Extraction: families, extractors, documents and their builder, decoding.
    "BaseFamily": ("episteme_core.extract.api", "Family"),
    "ExtractRequest": ("episteme_core.extract.api", "ExtractRequest"),
    "DocumentBuilder": ("episteme_core.extract.builder", "DocumentBuilder"),
    "decode_source": ("episteme_core.extract.text", "decode"),
    "Document": ("episteme_core.document", "Document"),
    "Section": ("episteme_core.document", "Section"),
    "Block": ("episteme_core.document", "Block"),
    "Span": ("episteme_core.document", "Span"),
    "BBox": ("episteme_core.document", "BBox"),
    "Provenance": ("episteme_core.document", "Provenance"),
    "Diagnostic": ("episteme_core.document", "Diagnostic"),
    "CONTENT_TRUST": ("episteme_core.trust", "CONTENT_TRUST"),
    # Chunks: the records, the one builder, and the layout rules the builtins cut with.
    "Chunk": ("episteme_core.chunk", "Chunk"),
    "ChunkBlock": ("episteme_core.chunk", "ChunkBlock"),
    "ChunkDiagnostic": ("episteme_core.chunk", "ChunkDiagnostic"),
    "chunk_from_json": ("episteme_core.chunk", "chunk_from_json"),
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
    "Filters": ("episteme_core.search", "Filters"),
    "Hit": ("episteme_core.search", "Hit"),
    "ShardSet": ("episteme_core.search", "ShardSet"),
    "ShardsWriter": ("episteme_core.shardstage", "ShardsWriter"),
    "StoredShard": ("episteme_core.shardstage", "StoredShard"),
    "open_committed": ("episteme_core.shardstage", "open_committed"),
    "open_bundle": ("episteme_core.shardstage", "open_bundle"),
    "IndexBundle": ("episteme_core.indexbundle", "IndexBundle"),
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
    "ingest_outcome": ("episteme_core.builtins.personal", "ingest_outcome"),
    "add_pack_option": ("episteme_core.builtins.personal", "add_pack_option"),
    # Readers for ask.
    "Candidate": ("episteme_core.ask.reader", "Candidate"),
    "ReadRequest": ("episteme_core.ask.reader", "ReadRequest"),
    "ReadReply": ("episteme_core.ask.reader", "ReadReply"),
    "ReadError": ("episteme_core.ask.reader", "ReadError"),
    "ReaderSpec": ("episteme_core.ask.reader", "ReaderSpec"),
    "Reader": ("episteme_core.ask.reader", "Reader"),
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
    # MCP tools for episteme serve.
    "Tool": ("episteme_core.serve.tools", "Tool"),
    "ToolCall": ("episteme_core.serve.tools", "ToolCall"),
    "add_global_options": ("episteme_core.cli.main", "add_global_options"),
    "atomic_write": ("episteme_core.store.atomic", "atomic_write"),
    "crashpoint": ("episteme_core.store.atomic", "crashpoint"),
    "fsync_dir": ("episteme_core.store.atomic", "fsync_dir"),
    "temp_path_for": ("episteme_core.store.atomic", "temp_path_for"),
    "ArgumentParser": ("episteme_core.cli.parser", "ArgumentParser"),
    "paused_cycle_gc": ("episteme_core.gcpause", "paused_cycle_gc"),
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
    from episteme_core import __version__ as __version__
    from episteme_core.ask.bm25 import Bm25Reader as Bm25Reader
    from episteme_core.ask.http import HttpReader as HttpReader
    from episteme_core.ask.memory import MemoryChunk as MemoryChunk
    from episteme_core.ask.memory import MemoryShard as MemoryShard
    from episteme_core.ask.pool import Pool as ReaderPool
    from episteme_core.ask.protocol import extract_ids as extract_ids
    from episteme_core.ask.protocol import messages as reader_messages
    from episteme_core.ask.protocol import prompt_parts as reader_prompt_parts
    from episteme_core.ask.protocol import response_format as reader_response_format
    from episteme_core.ask.reader import BaseReader as BaseReader
    from episteme_core.ask.reader import Candidate as Candidate
    from episteme_core.ask.reader import Reader as Reader
    from episteme_core.ask.reader import ReadError as ReadError
    from episteme_core.ask.reader import ReaderSpec as ReaderSpec
    from episteme_core.ask.reader import ReadReply as ReadReply
    from episteme_core.ask.reader import ReadRequest as ReadRequest
    from episteme_core.ask.run import AskOptions as AskOptions
    from episteme_core.ask.run import ask as ask
    from episteme_core.builtins.personal import add_pack_option as add_pack_option
    from episteme_core.builtins.personal import ingest_outcome as ingest_outcome
    from episteme_core.canonical import canonical_bytes as canonical_bytes
    from episteme_core.canonical import canonical_text as canonical_text
    from episteme_core.canonical import fingerprint as fingerprint
    from episteme_core.canonical import loads_strict as loads_strict
    from episteme_core.canonical import sha256_hex as sha256_hex
    from episteme_core.chunk import Chunk as Chunk
    from episteme_core.chunk import ChunkBlock as ChunkBlock
    from episteme_core.chunk import ChunkDiagnostic as ChunkDiagnostic
    from episteme_core.chunk import chunk_from_json as chunk_from_json
    from episteme_core.chunking import iter_chunk_rows as iter_chunk_rows
    from episteme_core.chunking import read_chunks as read_chunks
    from episteme_core.chunking.layout import Window as Window
    from episteme_core.chunking.layout import layout as layout
    from episteme_core.chunking.layout import windows as windows
    from episteme_core.chunking.rows import Cut as Cut
    from episteme_core.chunking.rows import build_chunks as build_chunks
    from episteme_core.chunking.rows import chunks_from_rows as chunks_from_rows
    from episteme_core.chunking.rows import cut_rows as cut_rows
    from episteme_core.chunking.rows import paragraph_rows as paragraph_rows
    from episteme_core.chunking.rows import window_rows as window_rows
    from episteme_core.cli.command import Command as Command
    from episteme_core.cli.command import Outcome as Outcome
    from episteme_core.cli.context import Context as Context
    from episteme_core.cli.main import add_global_options as add_global_options
    from episteme_core.cli.parser import ArgumentParser as ArgumentParser
    from episteme_core.cli.parser import add_int_option as add_int_option
    from episteme_core.components import DEFAULT_PRIORITY as DEFAULT_PRIORITY
    from episteme_core.components import Chunker as Chunker
    from episteme_core.components import Exporter as Exporter
    from episteme_core.components import Extractor as Extractor
    from episteme_core.components import Family as Family
    from episteme_core.components import Indexer as Indexer
    from episteme_core.components import IngestSource as IngestSource
    from episteme_core.components import ReaderKind as ReaderKind
    from episteme_core.components import SearchableShard as SearchableShard
    from episteme_core.components import SearchableShards as SearchableShards
    from episteme_core.components import Source as Source
    from episteme_core.context import ProgressSink as ProgressSink
    from episteme_core.context import RunContext as RunContext
    from episteme_core.document import BBox as BBox
    from episteme_core.document import Block as Block
    from episteme_core.document import Diagnostic as Diagnostic
    from episteme_core.document import Document as Document
    from episteme_core.document import Provenance as Provenance
    from episteme_core.document import Section as Section
    from episteme_core.document import Span as Span
    from episteme_core.documents import read_documents as read_documents
    from episteme_core.errors import ERROR_CODES as ERROR_CODES
    from episteme_core.errors import Cancelled as Cancelled
    from episteme_core.errors import EpistemeError as EpistemeError
    from episteme_core.extract.api import ExtractRequest as ExtractRequest
    from episteme_core.extract.api import Family as BaseFamily
    from episteme_core.extract.builder import DocumentBuilder as DocumentBuilder
    from episteme_core.extract.text import decode as decode_source
    from episteme_core.gcpause import paused_cycle_gc as paused_cycle_gc
    from episteme_core.hookspecs import Register as Register
    from episteme_core.hookspecs import hookimpl as hookimpl
    from episteme_core.indexbundle import IndexBundle as IndexBundle
    from episteme_core.inputs import read_input as read_input
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
    from episteme_core.personal.store import known_ids as known_ids
    from episteme_core.personal.text import decode_text as decode_text
    from episteme_core.personal.text import split_paragraphs as split_paragraphs
    from episteme_core.search import Filters as Filters
    from episteme_core.search import Hit as Hit
    from episteme_core.search import ShardSet as ShardSet
    from episteme_core.serve.tools import Tool as Tool
    from episteme_core.serve.tools import ToolCall as ToolCall
    from episteme_core.shardstage import ShardsWriter as ShardsWriter
    from episteme_core.shardstage import StoredShard as StoredShard
    from episteme_core.shardstage import open_bundle as open_bundle
    from episteme_core.shardstage import open_committed as open_committed
    from episteme_core.snapshots import SnapshotCatalog as SnapshotCatalog
    from episteme_core.snapshots import SnapshotWriter as SnapshotWriter
    from episteme_core.snapshots import make_identity as make_identity
    from episteme_core.snapshots import read_catalog as read_catalog
    from episteme_core.store.atomic import atomic_write as atomic_write
    from episteme_core.store.atomic import crashpoint as crashpoint
    from episteme_core.store.atomic import fsync_dir as fsync_dir
    from episteme_core.store.atomic import temp_path_for as temp_path_for
    from episteme_core.store.home import Home as Home
    from episteme_core.trust import CONTENT_TRUST as CONTENT_TRUST
