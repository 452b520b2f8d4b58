"""Every extension point of episteme, documented in place. Start reading here.

Each hook hands the plugin a ``register`` callback. A plugin calls it once per component it offers;
a component is any object with a ``name`` attribute (a string, unique within its kind). The kernel
owns the registry: it records which plugin registered what, reports two components of one kind with
one name as an error naming both plugins, and lists everything in ``episteme plugins``.

Hooks are called once per process, when the plugin manager loads, before any command runs. A hook
must be cheap: import heavy libraries inside the component's methods, never at module import or in
the hook, so that ``episteme --help`` stays fast. A hook must never write to the home.
"""

from __future__ import annotations

from typing import Any, Protocol

import pluggy

PROJECT_NAME = "episteme"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


class Register(Protocol):
    """The callback a hook receives: ``register(component)`` or ``register(component, kind=...)``."""

    def __call__(self, component: Any, *, kind: str | None = None) -> None: ...


@hookspec
def episteme_sources(register: Register) -> None:
    """Register capture sources (http, file, warc, books, claude, git, honcho, intent, ...).

    A source turns something outside the home (a URL, a file, a transcript, a repository) into
    snapshots in the store. Called at load; the source runs only inside a writing command, under
    the writer lock, and must store bytes only through the kernel's store API.
    """


@hookspec
def episteme_extractors(register: Register) -> None:
    """Register content extractors (``kind="extractor"``: html, pdf, text, xml) and families
    (``kind="family"``: generic, w3c, whatwg, rfc, ...) that tune extraction for a kind of document.

    An extractor turns a snapshot's bytes into a document of sections and blocks, offline. A family
    supplies rules (which sections are informative, how anchors are named); its rules are hashed
    into the document's configuration sha256. Extractors never fetch anything.
    """


@hookspec
def episteme_chunkers(register: Register) -> None:
    """Register chunkers: the window chunker for documents, the paragraph chunker for records.

    A chunker turns committed documents into bounded chunks that keep the citation of every block
    they cover. Its output must depend only on its input, its version and its options.
    """


@hookspec
def episteme_indexers(register: Register) -> None:
    """Register indexers: the BM25 shard indexer, and others that may follow.

    An indexer builds frozen shards from committed chunks and answers ranked lookups over them.
    Shards record the fingerprint of what they were built from, so stale shards are refused.
    """


@hookspec
def episteme_readers(register: Register) -> None:
    """Register readers for ``ask`` (bm25, http, llama, ...).

    A reader receives one shard's labelled paragraphs and a question and returns the labels that bear
    on it. It only names: text it writes is never returned to the user.
    """


@hookspec
def episteme_exporters(register: Register) -> None:
    """Register exporters: graph views and exports, the WARC writer, and so on.

    An exporter reads committed artifacts and writes a derived file; it never changes the stages.
    """


@hookspec
def episteme_commands(register: Register) -> None:
    """Register CLI subcommands as ``episteme_core.cli.Command`` records (e.g. ``graph``).

    A command parses its options in ``configure(parser)`` and does its work in ``run(args, ctx)``,
    calling a library function and returning an ``Outcome``; the kernel renders text or the envelope.
    """


@hookspec
def episteme_tools(register: Register) -> None:
    """Register MCP tools that ``episteme serve`` offers beside query, ask, show, sources and verify.

    A tool (``episteme_core.api.Tool``) has a name, a description, a JSON Schema for its arguments and
    ``run(arguments, call)``, called in a server worker thread with checked arguments; it returns a
    JSON object and refuses by raising ``EpistemeError``. A tool never writes to the home.
    """
