"""Which indexer a home uses, and every call that reaches the index through it.

The indexer is the one named by ``--indexer`` where a command offers it, else by ``config.json``'s
``indexer``, else ``bm25``, resolved among the registered components (``episteme_indexers``).
``index``, ``query``, ``ask``, ``eval``, ``pipeline``, ``ingest`` (packing) and ``serve`` reach the
index only through these functions (build, open, the one-file form): none imports an indexer.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import TYPE_CHECKING, Any

from episteme_core.errors import EpistemeError
from episteme_core.stages.shards import DEFAULT_INDEXER, check_indexer

if TYPE_CHECKING:
    from episteme_core.executor.base import Executor, ExecutorSpec
    from episteme_core.kernel.context import RunContext
    from episteme_core.kernel.contracts import Indexer, SearchableShards
    from episteme_core.kernel.registry import Plugins
    from episteme_core.store.home import Home

CONFIG_KEY = "indexer"
IN_FLIGHT = "INDEX_UPDATING"


def indexer_name(home: Home, given: str | None = None) -> str:
    """``given`` (an ``--indexer`` option), else ``config.json``'s ``indexer``, else ``bm25``."""
    if given:
        return given
    value = home.config().get(CONFIG_KEY, DEFAULT_INDEXER)
    if not isinstance(value, str) or not value:
        raise EpistemeError("INVALID_INPUT", f"{home.config_path}: {CONFIG_KEY} must be an indexer's name",
                            details={"path": str(home.config_path), "key": CONFIG_KEY})
    return value


def get_indexer(plugins: Plugins, home: Home, given: str | None = None) -> Indexer:
    """The registered indexer a home uses (``INVALID_INPUT`` naming the known ones when unknown)."""
    name = indexer_name(home, given)
    try:
        return plugins.get("indexer", name)  # type: ignore[no-any-return]
    except EpistemeError as exc:
        where = "" if given else f" ({CONFIG_KEY} in {home.config_path})"
        raise EpistemeError(exc.code, exc.message + where, details=exc.details,
                            hint="episteme plugins lists the registered indexers") from None


def _checked(shard_set: SearchableShards, name: str) -> SearchableShards:
    """The set an indexer opened, held to its name: shards another indexer built are refused."""
    check_indexer(shard_set.meta, name)
    return shard_set


def open_index(home: Home, plugins: Plugins, given: str | None = None) -> SearchableShards:
    """The home's committed shards, opened by its indexer; ``STALE_INDEX`` when missing, stale, or
    built by another indexer."""
    indexer = get_indexer(plugins, home, given)
    return _checked(indexer.open(home), indexer.name)


def opener(home: Home, plugins: Plugins, given: str | None = None) -> tuple[Callable[[], SearchableShards],
                                                                           Callable[[], Hashable]]:
    """``(open, generation)`` for a server that keeps the shards open: ``generation()`` is a token
    that changes whenever ``open()`` could give another answer."""
    from episteme_core.stages.shards import generation

    indexer = get_indexer(plugins, home, given)
    own = getattr(indexer, "generation", None)

    def current() -> Hashable:
        return own(home) if callable(own) else generation(home)

    return (lambda: _checked(indexer.open(home), indexer.name)), current


def build_index(ctx: RunContext, given: str | None = None, *, reshard: bool = False,
                executor: Executor | None = None, spec: ExecutorSpec | None = None,
                purge: bool = False) -> Any:
    """Bring the shards up to the committed chunks with the home's indexer, under the writer lock;
    the indexer's report. The build runs on ``executor``, else on the one ``spec`` names (opened
    under the lock), when the indexer's ``build`` takes an ``executor``. ``purge`` (``forget``):
    no shard may keep a row of a chunk that is gone; an indexer whose ``build`` takes no ``purge``
    rebuilds every shard instead (``reshard``)."""
    indexer = get_indexer(ctx.plugins, ctx.home, given)
    extra = {"purge": True} if purge and _takes(indexer.build, "purge") else {}
    with ctx.writing():
        return _build(ctx, indexer, reshard or (purge and not extra), executor, spec, **extra)


def _takes(function: Any, name: str) -> bool:
    """Whether ``function`` takes the keyword ``name`` (a plugin indexer's ``build`` may not)."""
    import inspect

    try:
        return name in inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False


def _build(ctx: RunContext, indexer: Indexer, reshard: bool, executor: Executor | None,
           spec: ExecutorSpec | None, **extra: Any) -> Any:
    """``indexer.build``, given an executor when it takes one (a plugin's may not)."""
    from episteme_core.executor import running
    from episteme_core.executor.base import accepts_executor

    build: Any = indexer.build
    if not accepts_executor(build):
        return build(ctx, reshard=reshard, **extra)
    if executor is not None or spec is None:
        return build(ctx, reshard=reshard, executor=executor, **extra)
    with running(spec) as opened:
        return build(ctx, reshard=reshard, executor=opened, **extra)


def report_data(report: Any) -> dict[str, Any]:
    """An indexer's report as JSON data (an attrs record unstructured, a mapping as it is)."""
    if isinstance(report, Mapping):
        return dict(report)
    from episteme_core.records.convert import unstructure

    data: dict[str, Any] = unstructure(report)
    return data


def warn_in_flight(shard_set: Any, warn: Callable[..., None] | None) -> None:
    """Say that an answer comes from the last commit while a writer is at work (``INDEX_UPDATING``)."""
    in_flight = getattr(shard_set, "in_flight", None)
    if in_flight and warn is not None:
        warn(IN_FLIGHT, f"{in_flight['command']} (pid {in_flight['pid']}) is writing the home: answered from "
             f"the shards committed before it ({in_flight['reason']})", writer=in_flight)


# -- The index as one file. ----------------------------------------------------------------------


def _artifact_indexer(indexer: Indexer) -> Any:
    if not callable(getattr(indexer, "open_artifact", None)):
        raise EpistemeError("INVALID_USAGE", f"indexer {indexer.name!r} cannot be read from one file "
                            "(it has no open_artifact), so it is not written as one",
                            details={"indexer": indexer.name})
    return indexer


def export_index(ctx: RunContext, out: str, given: str | None = None, *, reshard: bool = False,
                 spec: ExecutorSpec | None = None) -> tuple[Any, dict[str, Any]]:
    """Build the shards (as ``index`` does), then write the commit as one file to ``out`` (a path,
    atomically, or ``-``: kept for ``data.artifact``), under one hold of the writer lock. Returns the
    indexer's report and what was written (``indexer``, ``fingerprint``, ``shards``, ``chunks``,
    ``bytes``, ``sha256``, ``outputPath``, and ``artifact`` for ``-``)."""
    from episteme_core.stages.bundle import artifact, write_bundle
    from episteme_core.store.output import export_bytes

    indexer = _artifact_indexer(get_indexer(ctx.plugins, ctx.home, given))
    with ctx.writing() as home:
        report = _build(ctx, indexer, reshard, None, spec)
        exported = export_bytes(lambda stream: write_bundle(home, stream), out)
    data: dict[str, Any] = {**exported.summary, "bytes": exported.size, "sha256": exported.sha256,
                            "outputPath": str(exported.path) if exported.path else None}
    if exported.data is not None:
        data["artifact"] = artifact(exported.data, exported.summary)
    return report, data


def open_index_file(plugins: Plugins, source: str, max_bytes: int,
                    given: str | None = None) -> SearchableShards:
    """The shards of an index file or of stdin (``-``): the bundle ``index --out`` writes or its
    artifact JSON, at most ``max_bytes``; opened by the indexer that built it (or ``given``, which
    must be that one)."""
    from episteme_core.stages.bundle import read_bundle

    bundle = read_bundle(source, max_bytes)
    name = given or bundle.indexer
    indexer = _artifact_indexer(plugins.get("indexer", name))
    return _checked(indexer.open_artifact(bundle), name)
