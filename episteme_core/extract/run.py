"""``episteme extract``: every latest snapshot (or those named) to one document each, one commit.

Offline. The extractor is the manifest's choice, else ``--extractor``, else the one of highest
priority registered for the content type, else what the bytes look like; the family is the
manifest's choice, else the matching family (``matches(url)``) of highest priority, else
``generic``. Two of one priority claiming one input is a ``COMPONENT_TIE`` warning naming both.
Everything is resolved before anything is extracted, and nothing is written unless every source
extracted: the previous commit stays.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from episteme_core.errors import Cancelled, EpistemeError, cancel_requested
from episteme_core.records.canonical import sha256_hex
from episteme_core.records.evidence import Document
from episteme_core.records.extraction import ExtractRequest
from episteme_core.records.storage import SnapshotRecord
from episteme_core.store.home import Home

if TYPE_CHECKING:
    from episteme_core.executor.base import Executor
    from episteme_core.stages.snapshots import SnapshotCatalog

GENERIC = "generic"


def media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def sniff(content: bytes) -> str:
    """A content type guessed from the first bytes, for snapshots that declare none."""
    head = content[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if head.startswith(b"%pdf-"):
        return "application/pdf"
    if head.startswith((b"<!doctype html", b"<html")) or b"<html" in head[:512]:
        return "text/html"
    if head.startswith(b"<?xml") or head.startswith(b"<"):
        return "application/xml"
    return "text/plain"


Warn = Callable[..., None]


def _for_type(plugins: Any, mtype: str, warn: Warn | None) -> Any | None:
    """The extractor of highest priority registered for ``mtype`` (``+xml`` types: xml), or None."""
    from episteme_core.kernel.contracts import choose

    if not mtype:
        return None
    claiming = [e for e in plugins.all("extractor") if mtype in getattr(e, "content_types", ())]
    chosen = choose(claiming, kind="extractor", what=f"content type {mtype}", warn=warn)
    if chosen is None and mtype.endswith("+xml"):
        return plugins.get("extractor", "xml")
    return chosen


def choose_extractor(plugins: Any, wanted: str | None, record: SnapshotRecord, content: bytes,
                     warn: Warn | None = None) -> Any:
    """The manifest's extractor, else the one registered for the media type, else by sniffing."""
    if wanted:
        return plugins.get("extractor", wanted)
    for mtype in (media_type(record.content_type), sniff(content)):
        chosen = _for_type(plugins, mtype, warn)
        if chosen is not None:
            return chosen
    return plugins.get("extractor", "text")


def choose_family(plugins: Any, wanted: str | None, url: str, warn: Warn | None = None) -> Any:
    """The manifest's family (unknown: ``INVALID_INPUT``), else the URL match of highest priority,
    else generic."""
    from episteme_core.kernel.contracts import choose

    if wanted:
        return plugins.get("family", wanted)
    matching = [f for f in plugins.all("family") if f.name != GENERIC and f.matches(url)]
    chosen = choose(matching, kind="family", what=f"the URL {url}", warn=warn)
    return chosen if chosen is not None else plugins.get("family", GENERIC)


@attrs.frozen
class Planned:
    source: str
    record: SnapshotRecord
    extractor: Any
    family: Any
    fragment: str | None
    authority: str | None
    unresolved: tuple[str, str] | None = None  # (code, message): no extractor or family can take it


def plan_source(catalog: Any, plugins: Any, source: str, *, extractor: str | None = None,
                warn: Warn | None = None) -> Planned:
    """Resolve one source's latest snapshot, extractor and family (before any work is done).

    ``extractor`` (``--extractor``) is used for a source whose manifest names none. A family or an
    extractor its options name that is not registered (a snapshot an older episteme committed
    without checking them) leaves the source ``unresolved``: it gets a failed document, and every
    other source extracts."""
    record = catalog.latest(source)
    options = catalog.options(source)
    url = record.final_url or record.source
    unresolved: tuple[str, str] | None = None
    try:
        family = choose_family(plugins, options.get("family"), url, warn)
    except EpistemeError as exc:
        family = plugins.get("family", GENERIC)
        unresolved = ("FAMILY_UNKNOWN", f"{source}: the family its manifest named: {exc.message}")
    chosen = None
    if options.get("extractor"):
        try:
            chosen = plugins.get("extractor", options["extractor"])
        except EpistemeError as exc:
            unresolved = unresolved or ("EXTRACTOR_UNKNOWN",
                                        f"{source}: the extractor its manifest named: {exc.message}")
    elif extractor:
        chosen = plugins.get("extractor", extractor)  # --extractor: a mistake of the whole run
    return Planned(source, record, chosen, family, options.get("fragment"), options.get("authority"),
                   unresolved)


UNRESOLVED = "unresolved"  # the extractor a failed document of an unresolved source names


def unresolved_document(item: Planned) -> Document:
    """The failed document of a source no extractor or family can take: its diagnostic says why
    and what to do (register the plugin, or capture it again with a manifest naming a known one)."""
    from episteme_core.extract.builder import DocumentBuilder

    assert item.unresolved is not None
    code, message = item.unresolved
    request = ExtractRequest(record=item.record, content=b"", family=item.family, fragment=item.fragment,
                             authority=item.authority, options={})
    builder = DocumentBuilder(request, extractor=UNRESOLVED, extractor_version="1")
    builder.fail(code, message, detail="install the plugin that registers it (episteme plugins lists "
                 "what is registered), or snapshot the source again with a manifest that names a known one")
    return builder.build()


def _unresolved_task(home: Home, item: Planned, options: dict[str, Any]) -> Extracted:
    """The failed document of an unresolved source, written as any extracted document is."""
    from episteme_core import __version__
    from episteme_core.records.canonical import fingerprint
    from episteme_core.stages.documents import documents_stage

    assert item.unresolved is not None
    document = unresolved_document(item)
    key = {"snapshotId": item.record.id, "producerVersion": __version__,
           "configurationSha256": fingerprint({"unresolved": list(item.unresolved), "options": options})}
    data = document.to_bytes()
    stage = documents_stage(home)
    digest = sha256_hex(data)
    created = not (stage.dir / f"objects/{digest[:2]}/{digest}.json").exists()
    entry = stage.put_bytes(document.source, data, suffix=".json")
    return Extracted(entry, {**key, **summary(document)}, attrs.evolve(document, sections=[]), created)


def signature(plugins: Any, extractor: str | None, options: dict[str, Any]) -> str:
    """The fingerprint of everything besides a source's snapshot and options that decides its
    document: the extractors and families there are to choose from (name, version, priority, what
    each claims; a family's rules), ``--extractor``, the options and this episteme's version."""
    from episteme_core import __version__
    from episteme_core.extract.family import rules_of
    from episteme_core.kernel.contracts import priority
    from episteme_core.records.canonical import fingerprint

    return fingerprint({
        "extractors": [[e.name, str(getattr(e, "version", "")), priority(e),
                        sorted(getattr(e, "content_types", ())), sorted(getattr(e, "option_names", ()))]
                       for e in plugins.all("extractor")],
        "families": [[f.name, str(getattr(f, "version", "")), priority(f), rules_of(f)]
                     for f in plugins.all("family")],
        "extractor": extractor,
        "options": options,
        "producerVersion": __version__,
    })


def _request(item: Planned, extractor: Any, content: bytes, options: dict[str, Any]) -> ExtractRequest:
    wanted = {k: v for k, v in options.items() if k in getattr(extractor, "option_names", ())}
    return ExtractRequest(record=item.record, content=content, family=item.family,
                          fragment=item.fragment, authority=item.authority, options=wanted)


def _run_extractor(extractor: Any, request: ExtractRequest, source: str) -> Document:
    """One extractor on one source; a signal that arrived meanwhile cancels the run even when the
    extractor swallowed the exception it raised (its document is never committed)."""
    try:
        document: Document = extractor.extract(request)
    except EpistemeError:
        raise
    except Exception as exc:
        _check_cancel(exc)
        raise EpistemeError(
            "PROCESSING_FAILED", f"extraction failed for {source}: {type(exc).__name__}: {exc}",
            details={"source": source, "extractor": extractor.name},
        ) from exc
    _check_cancel(None)
    return document


def _check_cancel(cause: BaseException | None) -> None:
    signal_name = cancel_requested()
    if signal_name is not None:
        raise Cancelled(signal_name) from cause


def _extractor_by_type(plugins: Any, record: SnapshotRecord, warn: Warn | None) -> Any | None:
    """The extractor the declared media type selects, or None when only the bytes can tell."""
    return _for_type(plugins, media_type(record.content_type), warn)


# Diagnostics that depend on the machine, not on the inputs: such a document is never reused.
TRANSIENT = frozenset({"TIME_LIMIT"})


def reuse_key(item: Planned, extractor: Any, options: dict[str, Any]) -> dict[str, str]:
    """What must be unchanged for a committed document to be reused: the latest snapshot id, the
    configuration sha256 (extractor id+version, family+version+rules, fragment, authority,
    options) and this episteme's version."""
    from episteme_core import __version__
    from episteme_core.extract.builder import request_configuration

    request = _request(item, extractor, b"", options)
    return {
        "snapshotId": item.record.id,
        "configurationSha256": request_configuration(request, extractor.name,
                                                     str(getattr(extractor, "version", ""))),
        "producerVersion": __version__,
    }


def _reusable(record: dict[str, Any] | None, entry: Any, key: dict[str, str], stage: Any) -> bool:
    if record is None or entry is None:
        return False
    if any(record.get(name) != value for name, value in key.items()):
        return False
    if record.get("objectSha256") != entry.sha256 or not stage.object_path(entry).is_file():
        return False
    return not set(record.get("diagnostics") or ()) & TRANSIENT


@attrs.frozen
class ExtractReport:
    """What ``extract`` did: a row per source (``outcome`` extracted, reused or failed) and the
    documents it extracted afresh (reused ones are not read back)."""

    rows: list[dict[str, Any]]
    documents: list[Document]
    sources: int = 0  # how many sources the run covered (rows may be left out)

    def counts(self) -> dict[str, int]:
        counts = {"extracted": 0, "reused": 0, "failed": 0}
        for row in self.rows:
            counts[row["outcome"]] += 1
        return counts


# Below this many bytes of sources to extract, a default local executor extracts in this process.
PARALLEL_BYTES = 2 * 1024 * 1024


def extract_sources(
    home: Home,
    plugins: Any,
    sources: Sequence[str] | None = None,
    options: dict[str, Any] | None = None,
    progress: Callable[[int, int, str], None] | None = None,
    *,
    force: bool = False,
    extractor: str | None = None,
    warn: Warn | None = None,
    executor: Executor | None = None,
    catalog: SnapshotCatalog | None = None,
    report_rows: bool = True,
    drop: Sequence[str] = (),
) -> ExtractReport:
    """Extract what changed and commit; call under the writer lock.

    A source whose committed document was made from the same latest snapshot, configuration and
    episteme version is reused without reading its bytes (unless ``force``); the committed bytes
    are the same either way. Nothing is committed unless every source extracted.

    What changed is decided from committed fingerprints: when the snapshots commit and the
    extraction signature (components, options, version) are those the documents commit recorded,
    every document stands without a snapshot read; else a source whose latest snapshot and options
    are those its document recorded is reused from the index alone, and only the others are planned
    (snapshot record read, extractor and family chosen) and, unless reusable, extracted.

    Sources are extracted by ``executor`` (default: this process), one task per source: a task reads
    the snapshot's bytes, runs the extractor and writes the document object; the commit is made
    here. ``catalog`` is the committed snapshots stage when the caller has just read it;
    ``report_rows=False`` leaves the report's rows out (a caller that wants only the documents).
    ``drop`` (with ``sources``: ``forget``) names documents the same commit removes.
    Memory: only each document's summary comes back (no sections); read the committed ones
    with ``documents.read_documents``.
    """
    from episteme_core.extract.changed import note_full_run
    from episteme_core.kernel.contracts import warn_once
    from episteme_core.stages.documents import commit_documents, documents_stage, source_records
    from episteme_core.stages.snapshots import latest_of_head, note_latest_of_head, read_catalog
    from episteme_core.store.commits import entry_count, head_meta

    options = dict(options or {})
    tie_warn = warn_once(warn) if warn is not None else None
    catalog = catalog if catalog is not None else read_catalog(home)
    stage = documents_stage(home)
    previous = stage.read_index()
    sig = signature(plugins, extractor, options)
    before = head_meta(previous).get(RUN_META) if previous is not None else None
    same = isinstance(before, dict) and before.get("signature") == sig and not force
    known = (latest_of_head(home, catalog.fingerprint)
             if same and not sources and previous is not None and isinstance(before, dict) else None)
    if (known is not None and previous is not None and isinstance(before, dict)
            and entry_count(previous) == known[1] and _settled(before, known[0], _present(stage))):
        # the snapshots head's latest snapshots as noted when it was last read in full, the last
        # full run's configuration and objects: decided from the two heads, no bucket read
        records = source_records(previous) if report_rows else {}
        rows = [_reused_row(records[source]) for source in catalog.sources()] if report_rows else []
        if progress and known[1]:
            progress(known[1], known[1], "unchanged")
        return ExtractReport(rows=rows, documents=[], sources=known[1])
    if same and not sources and not report_rows and previous is not None and isinstance(before, dict):
        changed = _extract_changed(home, plugins, catalog, stage, previous, before, sig, options, extractor,
                                   tie_warn, executor, progress)
        if changed is not None:  # only the sources of the changed snapshots buckets were looked at
            return changed
    targets = list(dict.fromkeys(sources)) if sources else catalog.sources()
    for source in targets:
        catalog.state(source)  # an unknown source fails before any work
    latest = latest_fingerprint(catalog)
    note_latest_of_head(home, catalog.fingerprint, latest, len(catalog.sources()))
    present = _present(stage) if same else None
    if (same and not sources and previous is not None and isinstance(before, dict)
            and _settled(before, latest, present) and entry_count(previous) == len(targets)):
        # the last full run's snapshots, configuration and objects, from the head alone: no commit
        records = source_records(previous) if report_rows else {}
        rows = [_reused_row(records[source]) for source in targets] if report_rows else []
        if progress and targets:
            progress(len(targets), len(targets), "unchanged")
        return ExtractReport(rows=rows, documents=[], sources=len(targets))
    entries = {entry.key: entry for entry in previous.entries} if previous else {}
    records = source_records(previous)
    if (same and not sources and before is not None and before.get("snapshots") == latest
            and "objects" in before  # else a commit records what the head-only decision above needs
            and set(records) == set(targets) and not any(_transient(r) for r in records.values())
            and all(_stored(present, entry) for entry in entries.values())):
        # nothing changed: no commit
        if previous is not None:
            note_full_run(home, previous.fingerprint, catalog)
        rows = [_reused_row(records[source]) for source in targets] if report_rows else []
        if progress and targets:
            progress(len(targets), len(targets), "unchanged")
        return ExtractReport(rows=rows, documents=[], sources=len(targets))
    rows_at: dict[int, dict[str, Any]] = {}
    kept: list[tuple[Any, dict[str, Any]]] = []
    tasks: list[ExtractTask] = []
    fresh_failed: list[Document] = []  # the failed documents of sources nothing can take
    unresolved_created: list[Any] = []
    done = 0
    for number, source in enumerate(targets):
        old, entry = records.get(source), entries.get(source)
        state = catalog.state(source)
        if same and old is not None and entry is not None and old.get("snapshotId") == state.latest and (
                old.get("sourceOptions") == state.options and old.get("objectSha256") == entry.sha256
                and not _transient(old) and _stored(present, entry)):
            kept.append((entry, old))  # the same snapshot, options and signature: its document stands
            rows_at[number] = _reused_row(old) if report_rows else _UNREPORTED
            done += 1
            if progress:
                progress(done, len(targets), source)
            continue
        item = plan_source(catalog, plugins, source, extractor=extractor, warn=tie_warn)
        if item.unresolved is not None:
            failed = _unresolved_task(home, item, options)
            if failed.created:
                unresolved_created.append(stage.dir / failed.entry.path)
            kept.append((failed.entry, {**failed.record, "sourceOptions": state.options}))
            fresh_failed.append(failed.document)
            rows_at[number] = {**_row(failed.record), "outcome": "failed"}
            done += 1
            if warn is not None:
                warn("EXTRACTION_FAILED", item.unresolved[1], source=source, diagnostic=item.unresolved[0])
            if progress:
                progress(done, len(targets), source)
            continue
        chosen = item.extractor or _extractor_by_type(plugins, item.record, tie_warn)
        if chosen is None:
            chosen = choose_extractor(plugins, None, item.record, catalog.content(item.record), tie_warn)
        key = reuse_key(item, chosen, options)
        if not force and _reusable(old, entry, key, stage):
            assert old is not None
            kept.append((entry, {**old, "sourceOptions": state.options}))
            rows_at[number] = _reused_row(old)
            done += 1
            if progress:
                progress(done, len(targets), source)
        else:
            tasks.append(ExtractTask(number, item, chosen, {**key, "sourceOptions": state.options}))
    fresh: list[Document] = []

    def extracted(task: ExtractTask, result: Extracted) -> None:
        nonlocal done
        kept.append((result.entry, result.record))
        fresh.append(result.document)
        outcome = "failed" if result.document.status == "failed" else "extracted"
        rows_at[task.number] = {**_row(result.record), "outcome": outcome}
        done += 1
        if progress:
            progress(done, len(targets), task.item.source)

    try:
        _run_tasks(home, stage, executor, options, tasks, extracted)
    except BaseException:
        for path in unresolved_created:
            path.unlink(missing_ok=True)
        raise
    fresh = fresh_failed + fresh
    rows = [rows_at[number] for number in range(len(targets))]
    if rows or not sources:
        run = {"signature": sig, "snapshots": latest, **_settled_record(kept)} if not sources else (
            {"signature": sig, "snapshots": None} if same else None)
        index = commit_documents(home, [], kept, replace=not sources, meta={RUN_META: run} if run else None,
                                 drop=drop)
        if not sources:
            note_full_run(home, index.fingerprint, catalog)
    return ExtractReport(rows=rows if report_rows else [], documents=fresh, sources=len(targets))


def _run_tasks(home: Home, stage: Any, executor: Executor | None, options: dict[str, Any],
               tasks: list[ExtractTask], each: Callable[[ExtractTask, Extracted], None]) -> None:
    """Extract ``tasks`` on ``executor`` (default: this process), ``each`` told of every result in
    task order; an object a failed run wrote afresh is removed."""
    from episteme_core.executor.base import SERIAL, cleaning_up

    created: list[Any] = []  # objects this run wrote that did not exist: removed if it fails
    runner = executor or SERIAL
    try:
        with cleaning_up(home, runner):
            results = runner.map(functools.partial(extract_one, ExtractJob(home, options)), tasks,
                                 work=lambda task: task.item.record.byte_length, min_work=PARALLEL_BYTES)
            for task, result in zip(tasks, results, strict=True):
                if result.created:
                    created.append(stage.dir / result.entry.path)
                each(task, result)
    except BaseException:
        for path in created:
            path.unlink(missing_ok=True)
        raise
    if tasks and runner is not SERIAL:
        from episteme_core.store.atomic import sync_after_rename

        sync_after_rename(stage.dir)  # what workers wrote, durable before the commit names it


def _extract_changed(home: Home, plugins: Any, catalog: SnapshotCatalog, stage: Any, previous: Any,
                     before: dict[str, Any], sig: str, options: dict[str, Any], extractor: str | None,
                     warn: Warn | None, executor: Executor | None,
                     progress: Callable[[int, int, str], None] | None) -> ExtractReport | None:
    """Extract the sources of the snapshots buckets changed since the last full run (see
    ``extract.changed``) and commit only their documents buckets; the commit and the run record a
    full run would leave. None when the note, the record or the layout does not allow it."""
    from episteme_core.extract import changed as delta
    from episteme_core.stages.snapshots import note_latest_of_head
    from episteme_core.store.commits import LazyStageIndex, bucket_of

    if (not isinstance(previous, LazyStageIndex) or previous.keyed != ("sources",)
            or previous.keyed_counts is None or before.get("transient") != 0):
        return None
    found = delta.changed_buckets(home, catalog, previous.fingerprint)
    latest_sum, objects_sum = delta.from_hex(before.get("snapshots")), delta.from_hex(before.get("objects"))
    object_count = before.get("objectCount")
    if found is None or latest_sum is None or objects_sum is None or type(object_count) is not int:
        return None
    note, changed = found
    count = len(note["buckets"])
    states: dict[str, Any] = {}
    for number in changed:
        states.update(catalog.bucket_states(number))
    entries, values = stage.lookup(previous, states, [SOURCES_FIELD])
    records = values[SOURCES_FIELD]
    names: dict[int, list[str]] = {number: [] for number in changed}
    for source in states:
        names[bucket_of(source, count)].append(source)
    if any(delta.names_digest(s for s in names[n] if s in records) != note["buckets"][n][1] for n in changed):
        return None  # a source is gone: the full way
    if set(records) != set(entries) or not _objects_stand(before, _present(stage)):
        return None
    work: list[str] = []
    for source in sorted(states):
        old, entry, state = records.get(source), entries.get(source), states[source]
        if old is not None and (not isinstance(old.get("snapshotId"), str)
                                or not isinstance(old.get("sourceOptions"), dict)):
            return None  # a record from before options were kept: the full way
        if (old is None or entry is None or old.get("snapshotId") != state.latest
                or old.get("sourceOptions") != state.options or old.get("objectSha256") != entry.sha256):
            work.append(source)
    kept: list[tuple[Any, dict[str, Any]]] = []
    tasks: list[ExtractTask] = []
    unresolved_fresh: list[Document] = []
    for number, source in enumerate(work):
        old, entry = records.get(source), entries.get(source)
        state = catalog.state(source)  # its history checked against the stage's entries
        item = plan_source(catalog, plugins, source, extractor=extractor, warn=warn)
        if item.unresolved is not None:
            failed = _unresolved_task(home, item, options)
            kept.append((failed.entry, {**failed.record, "sourceOptions": state.options}))
            unresolved_fresh.append(failed.document)
            if warn is not None:
                warn("EXTRACTION_FAILED", item.unresolved[1], source=source, diagnostic=item.unresolved[0])
            continue
        chosen = item.extractor or _extractor_by_type(plugins, item.record, warn)
        if chosen is None:
            chosen = choose_extractor(plugins, None, item.record, catalog.content(item.record), warn)
        key = reuse_key(item, chosen, options)
        if _reusable(old, entry, key, stage):
            assert old is not None
            kept.append((entry, {**old, "sourceOptions": state.options}))
        else:
            tasks.append(ExtractTask(number, item, chosen, {**key, "sourceOptions": state.options}))
    fresh: list[Document] = []

    def extracted(task: ExtractTask, result: Extracted) -> None:
        kept.append((result.entry, result.record))
        fresh.append(result.document)
        if progress:
            progress(len(fresh), len(tasks), task.item.source)

    _run_tasks(home, stage, executor, options, tasks, extracted)
    fresh = unresolved_fresh + fresh
    old_paths = {entries[source].path for source in work if source in entries}
    new_paths = {entry.path for entry, _ in kept}
    for source in work:
        old = records.get(source)
        if old is not None:
            latest_sum -= delta.state_term(source, old["snapshotId"], old["sourceOptions"])
        latest_sum += delta.state_term(source, states[source].latest, states[source].options)
    objects_sum += sum(delta.path_term(p) for p in new_paths - old_paths)
    objects_sum -= sum(delta.path_term(p) for p in old_paths - new_paths)
    total = previous.count + sum(1 for source in work if source not in entries)
    run: dict[str, Any] = {"signature": sig, "snapshots": delta.as_hex(latest_sum),
           "transient": sum(1 for _, record in kept if _transient(record)),
           "objectCount": object_count + len(new_paths - old_paths) - len(old_paths - new_paths),
           "objects": delta.as_hex(objects_sum)}
    committed = {entry.key: {**record, "objectSha256": entry.sha256} for entry, record in kept}
    index = stage.commit_changes(previous, head={"documents": total, RUN_META: run}, fields=[SOURCES_FIELD],
                                 put=[entry for entry, _ in kept], values={SOURCES_FIELD: committed})
    stage.prune(index)
    note_latest_of_head(home, catalog.fingerprint, run["snapshots"], total)
    assert isinstance(catalog.index, LazyStageIndex) and catalog.fingerprint is not None
    buckets = [list(pair) for pair in note["buckets"]]
    for number in changed:
        buckets[number] = [catalog.index.buckets[number]["sha256"], delta.names_digest(names[number])]
    delta.write_base(home, index.fingerprint, catalog.fingerprint, buckets)
    if progress and not tasks:
        progress(total, total, "unchanged")
    return ExtractReport(rows=[], documents=fresh, sources=total)


SOURCES_FIELD = "sources"  # documents index meta: per source, what made its document
_UNREPORTED: dict[str, Any] = {"outcome": "reused"}  # a reused source's row when rows are left out
RUN_META = "extraction"  # documents index meta: the signature and snapshots of the last full run


def latest_fingerprint(catalog: Any) -> str:
    """The fingerprint of what extraction reads of the snapshots stage: each source's latest snapshot
    id and options (ids hash content, never the clock: equal captures give equal fingerprints), as a
    sum of a term per source (``changed.state_term``), so a run that changed a few sources updates it
    from those alone."""
    from episteme_core.extract.changed import state_term, sum_of

    states = ((source, catalog.state(source)) for source in catalog.sources())
    return sum_of(state_term(source, state.latest, state.options) for source, state in states)


def _settled_record(kept: list[tuple[Any, dict[str, Any]]]) -> dict[str, Any]:
    """What a full run records so the next one can conclude "unchanged" from the head alone: how
    many of its documents hold a transient diagnostic, and the digest and count of the object
    files its entries name."""
    from episteme_core.extract.changed import path_term, sum_of

    paths = {entry.path for entry, _ in kept}
    return {"transient": sum(1 for _, record in kept if _transient(record)), "objectCount": len(paths),
            "objects": sum_of(path_term(path) for path in paths)}


def _settled(before: dict[str, Any], latest: str, present: set[str] | None) -> bool:
    """Whether the last full run read these snapshots, left no transient diagnostic, and the
    objects on disk are exactly those it named (else the per-source comparison decides)."""
    if before.get("snapshots") != latest or before.get("transient") != 0 or present is None:
        return False
    return _objects_stand(before, present)


def _objects_stand(before: dict[str, Any], present: set[str]) -> bool:
    """Whether the objects on disk are exactly those the last run's record sums."""
    from episteme_core.extract.changed import path_term, sum_of

    if len(present) != before.get("objectCount"):
        return False
    return sum_of(path_term(path) for path in present) == before.get("objects")


def _present(stage: Any) -> set[str]:
    """The stage objects on disk, as the relative paths entries name (one directory listing per
    fan-out folder: cheaper than a stat per object)."""
    import os

    found: set[str] = set()
    try:
        folders = list(os.scandir(stage.objects_dir))
    except OSError:
        return found
    for folder in folders:
        if folder.is_dir(follow_symlinks=False):
            with os.scandir(folder.path) as files:
                found.update(f"objects/{folder.name}/{f.name}"
                             for f in files if f.is_file(follow_symlinks=False))
    return found


def _stored(present: set[str] | None, entry: Any) -> bool:
    """Whether the object a committed entry names is on disk (``present``: ``_present``'s listing)."""
    return present is not None and entry.path in present


def _transient(record: dict[str, Any]) -> bool:
    return bool(set(record.get("diagnostics") or ()) & TRANSIENT)


def _reused_row(record: dict[str, Any]) -> dict[str, Any]:
    return {**_row(record), "outcome": "failed" if record.get("status") == "failed" else "reused"}


@attrs.frozen
class ExtractJob:
    """What every extraction task shares: the home and the options."""

    home: Home
    options: dict[str, Any]


@attrs.frozen
class ExtractTask:
    """One source to extract: its place in the report, its plan, its extractor and reuse key."""

    number: int
    item: Planned
    extractor: Any
    key: dict[str, Any]


@attrs.frozen
class Extracted:
    """A task's answer: the document object's entry (``created``: this run wrote it), its
    ``meta.sources`` record, and the document without its sections (its summary)."""

    entry: Any
    record: dict[str, Any]
    document: Document
    created: bool


def snapshot_bytes(home: Home, record: SnapshotRecord) -> bytes:
    """A snapshot's captured bytes, verified by sha256 and length (what ``SnapshotCatalog.content``
    checks), read without the snapshots index: a task needs only its record."""
    from episteme_core.store.blobs import BlobStore

    blobs = BlobStore(home.blobs_dir)
    data = blobs.get(record.content_sha256)
    if len(data) != record.byte_length:
        path = blobs.path_for(record.content_sha256)
        raise EpistemeError("INVALID_INPUT", f"{path}: length differs from snapshot {record.id}",
                            details={"path": str(path)})
    return data


def extract_one(job: ExtractJob, task: ExtractTask) -> Extracted:
    """Read one snapshot's bytes (verified), extract it and write the document object."""
    from episteme_core.stages.documents import documents_stage

    item, chosen = task.item, task.extractor
    content = snapshot_bytes(job.home, item.record)
    document = _run_extractor(chosen, _request(item, chosen, content, job.options), item.source)
    del content
    record = {**task.key, **summary(document)}
    data = document.to_bytes()
    stage = documents_stage(job.home)
    digest = sha256_hex(data)
    created = not (stage.dir / f"objects/{digest[:2]}/{digest}.json").exists()
    entry = stage.put_bytes(document.source, data, suffix=".json")
    return Extracted(entry, record, attrs.evolve(document, sections=[]), created)


def _row(record: dict[str, Any]) -> dict[str, Any]:
    return {name: record.get(name) for name in SUMMARY_FIELDS}


def extract_documents(
    home: Home,
    plugins: Any,
    sources: Sequence[str] | None = None,
    options: dict[str, Any] | None = None,
    progress: Callable[[int, int, str], None] | None = None,
    warn: Warn | None = None,
    executor: Executor | None = None,
    catalog: SnapshotCatalog | None = None,
) -> list[Document]:
    """Extract what changed and commit (see ``extract_sources``); returns the documents extracted
    afresh. Sources whose committed document was reused are not among them."""
    return extract_sources(home, plugins, sources, options, progress, warn=warn, executor=executor,
                           catalog=catalog, report_rows=False).documents


SUMMARY_FIELDS = ("source", "documentId", "snapshotId", "extractor", "family", "status", "title",
                  "sections", "blocks", "warnings", "diagnostics")


def summary(document: Document) -> dict[str, Any]:
    """What the envelope reports per document."""
    return {
        "source": document.source,
        "documentId": document.id,
        "snapshotId": document.snapshot_id,
        "extractor": document.provenance.extractor,
        "family": document.family,
        "status": document.status,
        "title": document.title,
        "sections": len(document.sections),
        "blocks": sum(len(s.blocks) for s in document.sections),
        "warnings": list(document.warnings),
        "diagnostics": [d.code for d in document.diagnostics],
    }
