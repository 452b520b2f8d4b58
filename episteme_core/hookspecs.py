"""Every extension point of episteme, documented in place. Start reading here.

Each hook hands the plugin a ``register`` callback. A plugin calls it once per component it offers.
Each kind of component has a contract (``episteme_core.kernel.contracts``: a Protocol, and the
members the registry checks); a component is checked as it registers, and one that lacks a required member is
refused there, named with its plugin on ``episteme plugins``, while everything else keeps working.
The kernel owns the registry: it records which plugin registered what, refuses a name two plugins
claim (naming both; a builtin keeps its own names), and lists everything in ``episteme plugins``. A
plugin's mistake stays its own: a plugin whose hook raises is refused whole, everything else loads.
Where several components could take one input, the highest ``priority`` wins (default 0); a tie
is a ``COMPONENT_TIE`` warning naming both.

A plugin imports only ``episteme_core.api`` (its tests also ``episteme_core.testing``).

Hooks are called at most once per process, when a command first needs a component of their kind
(``episteme query`` calls the builtins' command and indexer hooks only; ``episteme plugins``,
``--help`` and library code that lists a kind call every hook of it). A hook must be cheap: import
heavy libraries inside the component's methods, never at module import or in the hook, so that
``episteme --help`` stays fast. A hook must never write to the home.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

PROJECT_NAME = "episteme"

F = TypeVar("F", bound=Callable[..., Any])


class _SpecMarker:
    """``pluggy.HookspecMarker(PROJECT_NAME)``: marks a hook specification as pluggy reads it (the
    ``episteme_spec`` options), without importing pluggy: a command that needs only the builtins
    never loads the plugin manager (``tests/kernel/test_plugin_loading.py`` holds it to pluggy's)."""

    def __call__(self, function: F) -> F:
        setattr(function, PROJECT_NAME + "_spec", {
            "firstresult": False, "historic": False, "warn_on_impl": None, "warn_on_impl_args": None})
        return function


class _ImplMarker:
    """``pluggy.HookimplMarker(PROJECT_NAME)``: marks a hook implementation (``@hookimpl``, or
    ``@hookimpl(tryfirst=True)``) with the ``episteme_impl`` options pluggy reads, without pluggy."""

    def __call__(self, function: F | None = None, *, hookwrapper: bool = False, optionalhook: bool = False,
                 tryfirst: bool = False, trylast: bool = False, specname: str | None = None,
                 wrapper: bool = False) -> Any:
        def mark(func: F) -> F:
            setattr(func, PROJECT_NAME + "_impl", {
                "wrapper": wrapper, "hookwrapper": hookwrapper, "optionalhook": optionalhook,
                "tryfirst": tryfirst, "trylast": trylast, "specname": specname})
            return func

        return mark if function is None else mark(function)


hookspec = _SpecMarker()
hookimpl = _ImplMarker()


class Register(Protocol):
    """The callback a hook receives: ``register(component)`` or ``register(component, kind=...)``."""

    def __call__(self, component: Any, *, kind: str | None = None) -> None: ...


@hookspec
def episteme_sources(register: Register) -> None:
    """Register capture sources (builtins: http, file, warc, books, claude, intent).

    A source turns something outside the home (a URL, a file, a transcript, a repository) into
    snapshots in the store. Contract: ``contracts.Source`` (``name``, ``help``); with
    ``configure(parser)`` and ``ingest(args, ctx)`` it is ``episteme ingest NAME``. Called at load;
    the source runs only inside ``ctx.writing()`` (re-entrant, so it may take it itself) and stores
    bytes only through the snapshots writer (``SnapshotWriter``, ``run_ingest``).
    """


@hookspec
def episteme_extractors(register: Register) -> None:
    """Register content extractors (``kind="extractor"``; builtins html, pdf, text, xml, record) and
    families (``kind="family"``; builtin generic) that tune extraction for a kind of document.

    An extractor (``contracts.Extractor``) turns a snapshot's bytes into a document of sections and
    blocks, offline; the one of highest priority for the content type is used. A family
    (``contracts.Family``) supplies rules (which sections are informative, how anchors are named),
    hashed into the document's configuration sha256. Extractors never fetch anything.
    """


@hookspec
def episteme_chunkers(register: Register) -> None:
    """Register chunkers (builtins: window for documents, paragraph for records).

    A chunker (``contracts.Chunker``) turns the committed documents it ``accepts`` into bounded
    chunks that keep the citation of every block they cover, built with ``build_chunks`` or
    ``cut_rows``. Each document goes to the accepting chunker of highest priority. Its output must
    depend only on its input, its version and its options.
    """


@hookspec
def episteme_indexers(register: Register) -> None:
    """Register indexers (builtin: bm25); a home uses the one ``--indexer`` or config ``indexer`` names.

    An indexer (``contracts.Indexer``) builds shards from committed chunks under the writer lock
    (``build(ctx, reshard=)``, a report) and opens them for search (``open(home)``, a
    ``SearchableShards``); ``query``, ``ask``, ``pipeline``, ``ingest`` and ``serve`` reach the index
    only through it. Its commit names the indexer and what the shards were built from, so shards of
    another indexer, and stale shards, are refused. It never changes the other stages.
    """


@hookspec
def episteme_readers(register: Register) -> None:
    """Register reader kinds for ``ask`` (builtins: bm25, http).

    A reader kind (``contracts.ReaderKind``) opens readers from ``config.json`` entries; a reader
    receives one shard's labelled paragraphs and a question and returns the labels that bear on it.
    It only names: text it writes is never returned to the user.
    """


@hookspec
def episteme_exporters(register: Register) -> None:
    """Register exporters (builtin: warc), each ``episteme export NAME --out FILE|-``.

    An exporter (``contracts.Exporter``) reads committed artifacts and writes the bytes of a derived
    file to the stream it is given; the export command owns ``--out``, atomic writes and
    ``data.artifact``. It never changes the stages.
    """


@hookspec
def episteme_commands(register: Register) -> None:
    """Register CLI subcommands as ``episteme_core.api.Command`` records.

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
