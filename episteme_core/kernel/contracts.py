"""One contract per component kind: what a plugin registers, checked when it registers.

Each kind has a ``Protocol`` (for type checkers and for plugin authors to read) and a ``Contract``
(what the registry checks at load: required attributes with their types, required methods, and
the optional members the kernel looks for, with the default it assumes). A component missing a
required member is refused at registration, with a message naming the plugin and what is
missing; ``episteme plugins`` lists it and the other plugins keep working.

Selection: where several components could take one input (extractors of one media type,
families matching one URL, chunkers accepting one document), the highest ``priority`` wins
(default 0; the builtins use 0 too). Two at the same priority is a ``COMPONENT_TIE`` warning
naming both; the one registered first (builtins, then plugins in entry-point order) is used.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Mapping, Sequence
from io import BufferedIOBase
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import attrs

if TYPE_CHECKING:
    from episteme_core.kernel.context import Outcome, RunContext
    from episteme_core.records.evidence import Chunk, Document
    from episteme_core.records.extraction import ExtractRequest
    from episteme_core.records.hits import Filters, Hit
    from episteme_core.records.reading import ReaderSpec, ReadReply, ReadRequest
    from episteme_core.store.home import Home

DEFAULT_PRIORITY = 0

# -- The Protocols: what each kind looks like. ---------------------------------------------------


@runtime_checkable
class Source(Protocol):
    """A capture source (``episteme_sources``): ``name`` is also the ``capture_kind`` of its snapshots.

    Optional: ``configure(parser)`` and ``ingest(args, ctx) -> Outcome`` together make it
    ``episteme ingest <name>``; ``ingest_all(ctx) -> Outcome | None`` runs it under ``ingest --all``
    (None: not configured); ``description`` is its ``--help`` text; ``block_kind`` is the block kind
    its records' paragraphs get when extracted (default ``paragraph``).
    """

    name: str
    help: str


@runtime_checkable
class IngestSource(Source, Protocol):
    """A source that ``episteme ingest <name>`` runs: it adds its options and does the ingest."""

    def configure(self, parser: argparse.ArgumentParser) -> None: ...

    def ingest(self, args: argparse.Namespace, ctx: RunContext) -> Outcome: ...


@runtime_checkable
class Extractor(Protocol):
    """Turns a snapshot's bytes into a document, offline (``episteme_extractors``, kind ``extractor``).

    Never raises for bad content: a damaged source gives a document with status ``partial`` or
    ``failed`` and a diagnostic. Optional: ``option_names`` (the run options it reads, hashed into
    the configuration), ``priority``.
    """

    name: str
    version: str
    content_types: tuple[str, ...]
    limits: tuple[str, ...]

    def extract(self, request: ExtractRequest) -> Document: ...


@runtime_checkable
class Family(Protocol):
    """Rules for one kind of document (``episteme_extractors``, kind ``family``).

    ``matches(url)`` chooses it when the manifest names no family. Optional, with the defaults of
    ``episteme_core.api.Family`` (subclass it): ``authority``, ``document_type``, ``rules`` (hashed
    into every document's configuration), ``structure_text``/``structure_xml``/``structure_html``,
    ``refine_block(block, section) -> Block``, ``priority``.
    """

    name: str
    version: str

    def matches(self, url: str) -> bool: ...

    def section_number(self, heading: str, element_id: str | None) -> str | None: ...


@runtime_checkable
class Chunker(Protocol):
    """Cuts committed documents into chunks (``episteme_chunkers``).

    ``accepts(document)`` says which documents it takes; the chunks of a document depend only on
    it, the chunker's version and the options. Build chunks with ``episteme_core.api.build_chunks``
    (or ``chunk_rows``) so every field and the id are as the kernel writes them. Optional:
    ``priority``; ``accepts_json(data)`` and ``chunk_rows(data, ...) -> list[str]`` (the fast path
    over a document's stored JSON, returning each chunk's canonical JSON text).
    """

    name: str
    version: str

    def accepts(self, document: Document) -> bool: ...

    def chunk(
        self, document: Document, *, max_chars: int, overlap_chars: int, verbatim: frozenset[str] = ...
    ) -> list[Chunk]: ...


@runtime_checkable
class SearchableShard(Protocol):
    """One shard an indexer opened: its scored units ranked for analyzed terms, and its chunks.

    A unit is a chunk or a run of consecutive chunks; ``Hit.chunk_id`` and ``Hit.row`` name its first
    chunk. ``ranked`` returns the best ``k`` units sorted by (-score, chunk id) and how many matched in
    all; it applies ``filters`` (``Filters.accepts`` tests one chunk's JSON; a unit matches when one of
    its chunks does) and, when given, rescales each term's scores to ``idf`` (term -> idf over all the
    shards a query reads) so that shards compare. ``required`` terms must all be in a unit.
    ``document_frequency`` and ``units`` count for that idf. ``languages`` are the stemming languages
    its chunks were analyzed in (a query is analyzed in each).
    """

    name: str
    source: str
    units: int

    @property
    def languages(self) -> Sequence[str]: ...

    def document_frequency(self, term: str) -> int: ...

    def ranked(
        self, terms: Sequence[str], k: int, filters: Filters | None = None, *,
        required: Sequence[str] = (), idf: Mapping[str, float] | None = None,
    ) -> tuple[list[Hit], int]: ...

    def shown_rows(self, hit: Hit, filters: Filters | None = None) -> list[int]: ...

    def row_json(self, row: int) -> dict[str, Any]: ...

    def chunk(self, chunk_id: str) -> Chunk: ...


@runtime_checkable
class SearchableShards(Protocol):
    """What an indexer's ``open(home)`` returns: the committed shards, fresh, searched as one.

    Build it as ``episteme_core.api.ShardSet(home=, shards=, meta=, indexer=, in_flight=)`` (what
    ``open_committed`` does): ``search`` searches each shard on its own (``ranked``) and merges by
    (-score, chunk id) with one idf over all. ``meta`` is the commit's (``meta["indexer"]`` names its
    indexer); ``in_flight`` names the writer at work when the shards were opened behind the chunks.

    A set may also offer ``keep_warm()``, which a holder that keeps it open for many queries (the
    MCP server) calls once after opening it: the place to pay a one-off cost that makes each later
    query cheaper (the bm25 set imports numpy there). A one-query process never calls it.
    """

    meta: dict[str, Any]
    indexer: str
    in_flight: dict[str, Any] | None

    @property
    def shards(self) -> Sequence[Any]: ...  # SearchableShard

    @property
    def sources(self) -> list[str]: ...

    @property
    def languages(self) -> list[str]: ...

    def shard(self, name: str) -> SearchableShard: ...

    def terms(self, text: str) -> list[str]: ...

    def search(self, query: str | Sequence[str], k: int, filters: Filters | None = None, *,
               required: Sequence[str] = (),
               weights: Mapping[str, float] | None = None) -> tuple[list[Hit], int]: ...

    def idf(self, terms: Sequence[str], shards: Sequence[Any] | None = None) -> dict[str, float]: ...


@runtime_checkable
class Indexer(Protocol):
    """Builds shards from committed chunks and opens them for search (``episteme_indexers``).

    ``build(ctx, reshard=)`` runs under the writer lock (``episteme index``, ``pipeline``, ``ingest``)
    and returns a report (an attrs record or a mapping: the command's JSON data); it reports progress
    as ``ctx.progress.update("index", current, total, status, message)`` and commits to the shards
    stage with the indexer's name (``ShardsWriter``). ``open(home)`` returns the committed shards
    (``SearchableShards``) and refuses, with ``STALE_INDEX``, shards of another indexer and shards
    behind the chunks or the log (``open_committed`` does both). ``query``, ``ask`` and ``serve``
    reach the index only through these. Optional: ``open_artifact(bundle)`` (``query --index FILE``;
    ``index --out`` needs it too), ``generation(home)`` (a token that changes when ``open`` could
    give another answer; the server reopens then).
    """

    name: str
    help: str

    def build(self, ctx: RunContext, *, reshard: bool = False) -> Any: ...

    def open(self, home: Home) -> SearchableShards: ...


@runtime_checkable
class ReaderKind(Protocol):
    """A factory of readers for ``ask`` (``episteme_readers``): ``open(spec) -> Reader``.

    Optional: ``rerank(spec, question, passages, bm25_scores) -> list[float]``, a second stage for
    ``query --rerank NAME``: one score per passage (its text; ``bm25_scores`` are query's, best
    first), higher better, in the order given; ``spec`` is the config entry (or a bare spec of the
    kind). Query sorts by it, ties in its own order; it must not store anything.
    """

    name: str
    description: str

    def open(self, spec: ReaderSpec) -> Reader: ...


class Reader(Protocol):
    """An opened reader. ``read`` may be called from several threads, at most ``slots`` at once."""

    name: str
    kind: str
    slots: int
    timeout: float

    def health(self) -> None:
        """Raise ``ReadError`` if the reader cannot serve reads now."""

    def begin_run(self, question: str, shards: Sequence[str]) -> None:
        """Told once per question, before its reads, which shards will be read (may be ignored)."""

    def read(self, request: ReadRequest) -> ReadReply:
        """Name the labels of ``request`` that bear on its question, or raise ``ReadError``."""

    def close(self) -> None:
        """Release connections, models, threads."""


@runtime_checkable
class Exporter(Protocol):
    """Writes a derived file from committed artifacts (``episteme_exporters``); ``episteme export NAME``.

    The export command owns ``--out`` (a file, written atomically, or ``-`` with ``--json``: the
    bytes come back in ``data.artifact``). ``configure(parser)`` adds the exporter's own options;
    ``export(args, ctx, out)`` writes the bytes to ``out`` (an ``io.BufferedIOBase``: wrap it in
    ``io.TextIOWrapper`` for text or ``csv``, and flush or detach the wrapper before returning) and
    returns a summary (JSON data). It never changes the stages. ``media_type`` names what it writes.
    """

    name: str
    help: str
    media_type: str

    def configure(self, parser: argparse.ArgumentParser) -> None: ...

    def export(self, args: argparse.Namespace, ctx: RunContext, out: BufferedIOBase) -> Mapping[str, Any]: ...


@attrs.frozen
class Command:
    """A CLI subcommand. ``configure`` adds options; ``run`` does the work and returns an Outcome."""

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, RunContext], Outcome]
    description: str | None = None


@runtime_checkable
class CommandLike(Protocol):
    """A CLI subcommand (``episteme_commands``): build it as ``episteme_core.api.Command``."""

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, RunContext], Outcome]


@runtime_checkable
class ToolLike(Protocol):
    """An MCP tool for ``episteme serve`` (``episteme_tools``): build it as ``episteme_core.api.Tool``.

    ``run(arguments, call)`` gets arguments already checked against ``input_schema`` (a JSON Schema
    2020-12 object schema) and a ``ToolCall`` (the home, the plugins, the server's shards), returns
    the JSON object of the result, refuses by raising ``EpistemeError``, and never writes to the home.
    """

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def input_schema(self) -> Mapping[str, Any]: ...

    @property
    def run(self) -> Callable[..., Mapping[str, Any]]: ...


# -- The contracts the registry checks. ----------------------------------------------------------


@attrs.frozen
class Contract:
    """What a kind requires (attributes by type, methods by name) and may have (with defaults)."""

    kind: str
    protocol: type
    attributes: Mapping[str, type | tuple[type, ...]]
    methods: tuple[str, ...]
    optional: Mapping[str, str] = attrs.field(factory=dict)  # member -> what it defaults to

    def missing(self, component: Any) -> list[str]:
        """What ``component`` lacks, each as ``name (what it must be)``; empty when it conforms.

        A member its class defines as a property is taken as present without being read: a
        component may load what it holds lazily (the builtin tools do), and reading it here would
        import it at every start."""
        problems: list[str] = []
        for name, kind in self.attributes.items():
            if _lazy(component, name):
                continue
            value = getattr(component, name, None)
            if not isinstance(value, kind) or (isinstance(value, str) and not value):
                problems.append(f"{name} ({_type_name(kind)})")
        for name in self.methods:
            if not _lazy(component, name) and not callable(getattr(component, name, None)):
                problems.append(f"{name}() (a method)")
        return problems


def _lazy(component: Any, name: str) -> bool:
    """Whether ``name`` is a property of ``component``'s class (read only when used)."""
    import inspect

    return isinstance(inspect.getattr_static(type(component), name, None), property)


def _type_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names: dict[type, str] = {str: "a non-empty string", tuple: "a tuple", list: "a list",
                              Mapping: "a mapping"}
    return " or ".join(names.get(k, k.__name__) for k in kinds)


_SEQUENCE = (tuple, list)

CONTRACTS: dict[str, Contract] = {
    "source": Contract(
        "source", Source, {"name": str, "help": str}, (),
        {"configure": "with ingest(): episteme ingest NAME",
         "ingest": "with configure(): episteme ingest NAME", "ingest_all": "ingest --all skips it",
         "description": "the help line", "block_kind": "paragraph"},
    ),
    "extractor": Contract(
        "extractor", Extractor,
        {"name": str, "version": str, "content_types": _SEQUENCE, "limits": _SEQUENCE}, ("extract",),
        {"option_names": "reads no run option", "priority": str(DEFAULT_PRIORITY)},
    ),
    "family": Contract(
        "family", Family, {"name": str, "version": str}, ("matches", "section_number"),
        {"refine_block": "blocks unchanged", "authority": "informative", "document_type": "none",
         "rules": "none", "structure_text": "the extractor lays out", "structure_xml": "the extractor "
         "lays out", "structure_html": "the extractor lays out", "priority": str(DEFAULT_PRIORITY)},
    ),
    "chunker": Contract(
        "chunker", Chunker, {"name": str, "version": str}, ("accepts", "chunk"),
        {"accepts_json": "accepts() on the record", "chunk_rows": "chunk() on the record",
         "priority": str(DEFAULT_PRIORITY), "help": "none"},
    ),
    "indexer": Contract(
        "indexer", Indexer, {"name": str, "help": str}, ("build", "open"),
        {"open_artifact": "index --out and query --index FILE refuse it",
         "generation": "the shards stage, chunk index, log and writer lock files"},
    ),
    "reader": Contract("reader", ReaderKind, {"name": str, "description": str}, ("open",),
                       {"rerank": "query --rerank refuses the kind"}),
    "exporter": Contract(
        "exporter", Exporter, {"name": str, "help": str, "media_type": str}, ("configure", "export"),
        {"description": "the help line"},
    ),
    "command": Contract(
        "command", CommandLike, {"name": str, "help": str}, ("configure", "run"),
        {"description": "the help line"},
    ),
    "tool": Contract(
        "tool", ToolLike, {"name": str, "description": str, "input_schema": Mapping}, ("run",),
        {"title": "the name"},
    ),
}


# A kind without a contract here (a hook added before its contract) is held to a name only.
_NAME_ONLY = Contract("component", object, {"name": str}, ())


def missing_members(component: Any, kind: str) -> list[str]:
    """What ``component`` lacks to be a ``kind`` component (empty when it conforms). A ``priority``
    that is there must be an integer: ``"high"`` is refused, never taken as 0 without a word."""
    problems = CONTRACTS.get(kind, _NAME_ONLY).missing(component)
    value = getattr(component, "priority", DEFAULT_PRIORITY)
    if not isinstance(value, int) or isinstance(value, bool):
        problems.append("priority (an integer)")
    if kind == "source" and not problems:
        has_configure = callable(getattr(component, "configure", None))
        has_ingest = callable(getattr(component, "ingest", None))
        if has_configure != has_ingest:  # half an ingest source would crash ``episteme ingest``
            problems.append("ingest() (a method)" if has_configure else "configure() (a method)")
    return problems


def priority(component: Any) -> int:
    """A component's selection priority: its ``priority`` (an integer, checked at registration), else
    ``DEFAULT_PRIORITY``."""
    value = getattr(component, "priority", DEFAULT_PRIORITY)
    return value if isinstance(value, int) and not isinstance(value, bool) else DEFAULT_PRIORITY


def choose(
    candidates: Iterable[Any], *, kind: str, what: str, warn: Callable[..., None] | None = None
) -> Any | None:
    """The candidate with the highest priority (first registered among equals), or None.

    ``candidates`` come in registration order. A tie at the top is reported through ``warn`` as
    ``COMPONENT_TIE`` naming both components and ``what`` they both claim.
    """
    best: Any | None = None
    tied: list[Any] = []
    for component in candidates:
        if best is None or priority(component) > priority(best):
            best, tied = component, []
        elif priority(component) == priority(best):
            tied.append(component)
    if best is not None and tied and warn is not None:
        names = [best.name, *(c.name for c in tied)]
        warn(
            "COMPONENT_TIE",
            f"{kind}s {', '.join(repr(n) for n in names)} both take {what} at priority {priority(best)}; "
            f"using {best.name!r} (registered first). Give one a higher priority, or name one explicitly.",
            kind=kind, components=names, input=what,
        )
    return best


def warn_once(warn: Callable[..., None]) -> Callable[..., None]:
    """``warn`` that reports each distinct tie (kind and components) once per run."""
    seen: set[tuple[str, tuple[str, ...]]] = set()

    def report(code: str, message: str, **extra: Any) -> None:
        key = (str(extra.get("kind")), tuple(extra.get("components") or ()))
        if key in seen:
            return
        seen.add(key)
        warn(code, message, **extra)

    return report


def contract_table() -> str:
    """The contracts as the Markdown table ``docs/plugins.md`` shows (a test keeps the two equal)."""
    lines = ["| kind | required | optional (what the kernel assumes without it) |", "|---|---|---|"]
    for kind, contract in CONTRACTS.items():
        required = [f"`{name}`" for name in contract.attributes]
        required += [f"`{name}()`" for name in contract.methods]
        optional = [f"`{name}` ({default})" for name, default in contract.optional.items()]
        lines.append(f"| {kind} | {', '.join(required)} | {', '.join(optional) or '–'} |")
    return "\n".join(lines) + "\n"
