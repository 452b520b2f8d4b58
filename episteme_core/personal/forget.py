"""``episteme forget``: a source, a record or a paragraph removed from every stage, every blob and
the log, leaving a tombstone (what, by hash; when; why) so the history stays honest.

A forget runs under the writer lock in this order, each step a commit of its own:

1. the journal: the tombstone-to-be (hashes only) written to ``HOME/forgetting.json``;
2. the log: the lines of what is forgotten redacted (a paragraph's lines re-pointed at the version
   that replaces theirs) and the tombstone appended, in one atomic replace;
3. the snapshots stage: the forgotten sources and snapshots dropped (a record that loses a
   paragraph gets a redacted version in place of every version that held it);
4. the blobs nothing names any more deleted; 5. the documents dropped (or re-extracted); 6. the
   chunks cut again from the documents; 7. the shards rebuilt where they held a forgotten row
   (``purge``); 8. the stat cache (paths and source names) dropped; 9. what no commit names
   removed (``gc``: a bucket or object a killed step left, a blob a killed capture wrote); 10. the
   journal removed.

A forget killed at any step leaves a home every reader and ``verify`` accept (the journal is a
note); the next ``forget`` (or ``gc``) finishes it from the journal first, each step finding by hash
what is still to do, so the home ends as an uninterrupted forget leaves it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from episteme_core.errors import EpistemeError
from episteme_core.records.storage import (
    ForgottenItem,
    ForgottenParagraph,
    LogEntry,
    SnapshotRecord,
    Tombstone,
)

if TYPE_CHECKING:
    from episteme_core.kernel.context import RunContext
    from episteme_core.stages.snapshots import SnapshotCatalog
    from episteme_core.store.home import Home

STAT_CACHE = "stat-cache.json"  # capture.statcache's file: paths and source names, rebuilt by the next run


@attrs.frozen
class ForgetRequest:
    """What to forget: sources (URLs or record ids) with their whole history, every source whose key
    starts with a prefix, and paragraphs ``(record id, n)``; why; and whether only to list it."""

    sources: tuple[str, ...] = ()
    prefixes: tuple[str, ...] = ()
    paragraphs: tuple[tuple[str, int], ...] = ()
    reason: str | None = None
    dry_run: bool = False


@attrs.frozen
class Version:
    """A redacted version of a record: the snapshot it replaces, its record and bytes."""

    old: str
    record: SnapshotRecord
    data: bytes


@attrs.define
class Plan:
    """What a forget removes, resolved against the home: the tombstone (hashes only) and, for people
    and the dry run, what each item names there."""

    items: list[ForgottenItem] = attrs.field(factory=list)
    listing: list[dict[str, Any]] = attrs.field(factory=list)
    already: list[str] = attrs.field(factory=list)


def source_key(value: str) -> str:
    """A ``--source`` value as the store keys it: an http(s) URL normalised without its fragment,
    anything else (a record id) as given."""
    if value.startswith(("http://", "https://", "HTTP://", "HTTPS://")):
        from episteme_core.capture.urls import UrlError, normalise_url

        try:
            return normalise_url(value)[0]
        except UrlError as exc:
            raise EpistemeError("INVALID_USAGE", f"--source {value[:200]!r}: {exc}",
                                details={"source": value[:200]}) from None
    return value


# -- What the home holds of a key. ---------------------------------------------------------------


@attrs.define
class Holdings:
    """Where each source key is in the home: the catalog's sources, the documents' and chunks' keys,
    the log lines naming each record id (and each snapshot id)."""

    catalog: SnapshotCatalog
    documents: set[str]
    chunks: set[str]
    lines_of: dict[str, list[int]]
    lines_of_snapshot: dict[str, list[int]]
    entries: dict[int, LogEntry]

    def keys(self) -> set[str]:
        return set(self.catalog.sources()) | self.documents | self.chunks | set(self.lines_of)

    def by_hash(self) -> dict[str, str]:
        from episteme_core.store.tombstones import key_sha256

        return {key_sha256(key): key for key in self.keys()}


def holdings(home: Home) -> Holdings:
    from episteme_core.stages.chunks import chunks_stage
    from episteme_core.stages.documents import documents_stage
    from episteme_core.stages.snapshots import read_catalog
    from episteme_core.store.tombstones import iter_log

    lines_of: dict[str, list[int]] = {}
    lines_of_snapshot: dict[str, list[int]] = {}
    entries: dict[int, LogEntry] = {}
    for number, entry in iter_log(home.log_path):
        if isinstance(entry, LogEntry):
            entries[number] = entry
            if entry.record_id is not None:
                lines_of.setdefault(entry.record_id, []).append(number)
            if entry.snapshot_id is not None:
                lines_of_snapshot.setdefault(entry.snapshot_id, []).append(number)
    keys = []
    for stage in (documents_stage(home), chunks_stage(home)):
        index = stage.read_index()
        keys.append({entry.key for entry in index.entries} if index is not None else set())
    return Holdings(read_catalog(home), keys[0], keys[1], lines_of, lines_of_snapshot, entries)


def blob_names(catalog: SnapshotCatalog, leaving: Iterable[str] = ()) -> set[str]:
    """The blobs the catalog's snapshots name, those in ``leaving`` left out (every snapshot record is
    read: a blob two sources share stays while one of them names it)."""
    skip = set(leaving)
    return {catalog.record(snapshot).content_sha256 for snapshot in catalog.snapshot_ids()
            if snapshot not in skip}


# -- Planning. -------------------------------------------------------------------------------------


def redacted_versions(catalog: SnapshotCatalog, key: str, texts: set[str]) -> list[Version]:
    """Every version of record ``key`` that holds a paragraph whose text hashes to one of ``texts``,
    redacted (``model.redact_record``): the same observation, new bytes, a new snapshot id."""
    from episteme_core.personal.model import redact_record
    from episteme_core.personal.stored import is_record, load_record, summary_attributes
    from episteme_core.records.storage import SnapshotIdentity

    versions: list[Version] = []
    state = catalog.state_of(key)
    for snapshot in state.history if state is not None else ():
        old = catalog.record(snapshot)
        if not is_record(old):
            continue
        record = load_record(catalog, old)
        cleaned = redact_record(record, texts)
        if cleaned is record:
            continue
        data = cleaned.to_bytes()
        identity = SnapshotIdentity(capture_kind=old.capture_kind, source=old.source, final_url=old.final_url,
                                    content_type=old.content_type, charset=old.charset, byte_length=len(data),
                                    content_sha256=_sha(data))
        new = attrs.evolve(old, id=identity.snapshot_id, byte_length=len(data), content_sha256=_sha(data),
                           attributes={**old.attributes, **summary_attributes(cleaned)})
        versions.append(Version(snapshot, new, data))
    return versions


def _sha(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def plan(home: Home, request: ForgetRequest) -> Plan:
    """Resolve ``request`` against the home (read only): an item per source and per record that
    loses paragraphs; a name that is nowhere is ``INVALID_INPUT``, unless a tombstone already holds it."""
    from episteme_core.personal.model import FORGOTTEN_KIND
    from episteme_core.personal.stored import is_record, load_record
    from episteme_core.store.tombstones import key_sha256, read_forgotten

    found = holdings(home)
    catalog = found.catalog
    forgotten = read_forgotten(home.log_path)
    result = Plan()
    keys = found.keys()
    wanted: list[str] = []
    for value in request.sources:
        key = source_key(value)
        if key in keys:
            wanted.append(key)
        elif key_sha256(key) in forgotten.sources():
            result.already.append(key)
        else:
            raise EpistemeError("INVALID_INPUT", f"nothing named {key[:300]!r} in the home",
                                details={"source": key[:300]},
                                hint="episteme sources lists what the home holds")
    for prefix in request.prefixes:
        matching = sorted(k for k in keys if k.startswith(prefix))
        if not matching:
            raise EpistemeError("INVALID_INPUT", f"no source in the home starts with {prefix[:300]!r}",
                                details={"prefix": prefix[:300]})
        wanted.extend(matching)
    wanted = sorted(set(wanted))
    leaving: set[str] = set()
    for key in wanted:
        state = catalog.state_of(key)
        history = list(state.history) if state is not None else []
        leaving.update(history)
    texts_of: dict[str, dict[int, str]] = {}
    for record_id, n in request.paragraphs:
        if record_id in wanted:
            continue  # forgotten whole
        state = catalog.state_of(record_id)
        snapshot = catalog.record(state.latest) if state is not None else None
        if snapshot is None or not is_record(snapshot):
            raise EpistemeError("INVALID_INPUT", f"no record {record_id[:300]!r} in the store",
                                details={"id": record_id[:300]},
                                hint="episteme sources lists what the store holds")
        paragraph = load_record(catalog, snapshot).paragraph(n)
        if paragraph.kind == FORGOTTEN_KIND:
            result.already.append(f"{record_id}#{n}")
            continue
        texts_of.setdefault(record_id, {})[n] = key_sha256(paragraph.text)
    versions_of = {key: redacted_versions(catalog, key, set(texts.values()))
                   for key, texts in texts_of.items()}
    for versions in versions_of.values():
        leaving.update(v.old for v in versions)
    named = blob_names(catalog, leaving) | {v.record.content_sha256
                                            for vs in versions_of.values() for v in vs}
    for key in wanted:
        state = catalog.state_of(key)
        history = list(state.history) if state is not None else []
        blobs = sorted({catalog.record(s).content_sha256 for s in history})
        lines = sorted(found.lines_of.get(key, []))
        result.items.append(ForgottenItem(kind="source", source_sha256=key_sha256(key),
                                          snapshots=sorted(history),
                                          blobs=[b for b in blobs if b not in named], lines=lines))
        result.listing.append({
            "kind": "source", "source": key, "snapshots": sorted(history),
            "blobs": [b for b in blobs if b not in named], "keptBlobs": [b for b in blobs if b in named],
            "document": key in found.documents, "chunks": key in found.chunks, "logLines": lines,
        })
    for key in sorted(versions_of):
        versions = versions_of[key]
        old_blobs = sorted({catalog.record(v.old).content_sha256 for v in versions})
        lines = sorted({n for v in versions for n in found.lines_of_snapshot.get(v.old, [])})
        paragraphs = [ForgottenParagraph(n, text) for n, text in sorted(texts_of[key].items())]
        result.items.append(ForgottenItem(
            kind="paragraphs", source_sha256=key_sha256(key), snapshots=[v.old for v in versions],
            blobs=[b for b in old_blobs if b not in named], lines=lines, paragraphs=paragraphs,
            replaced_by=[v.record.id for v in versions]))
        result.listing.append({
            "kind": "paragraphs", "source": key, "paragraphs": [p.n for p in paragraphs],
            "snapshots": [v.old for v in versions], "replacedBy": [v.record.id for v in versions],
            "blobs": [b for b in old_blobs if b not in named],
            "keptBlobs": [b for b in old_blobs if b in named],
            "document": key in found.documents, "chunks": key in found.chunks, "logLines": lines,
        })
    return result


def tombstone_of(items: list[ForgottenItem], reason: str | None, command: str, time: str) -> Tombstone:
    """The tombstone of ``items``: its id the fingerprint of the items and the reason (not the time)."""
    from episteme_core.records.canonical import fingerprint
    from episteme_core.records.convert import unstructure

    ordered = sorted(items, key=lambda item: (item.kind, item.source_sha256))
    digest = fingerprint({"items": unstructure(ordered), "reason": reason})
    return Tombstone(time=time, command=command, id=digest, items=ordered, reason=reason)


# -- Doing it. ------------------------------------------------------------------------------------


def forget(ctx: RunContext, request: ForgetRequest) -> dict[str, Any]:
    """Under the writer lock: finish an interrupted forget, then forget what ``request`` names (or,
    with ``dry_run``, list it and change nothing). The report as JSON data."""
    from episteme_core.stages.snapshots import utc_now

    with ctx.writing() as home:
        finished = None if request.dry_run else finish_pending(ctx)
        if not (request.sources or request.prefixes or request.paragraphs):
            if finished is None:
                raise EpistemeError("INVALID_USAGE", "name what to forget: --source, --prefix or RECORD[#N]",
                                    hint="episteme forget --help")
            return {"dryRun": False, "finished": finished, "forgotten": [], "alreadyForgotten": [],
                    "tombstone": None}
        found = plan(home, request)
        data: dict[str, Any] = {"dryRun": request.dry_run, "finished": finished, "forgotten": found.listing,
                                "alreadyForgotten": sorted(found.already), "tombstone": None}
        if request.dry_run:
            from episteme_core.store.gc import find_garbage

            data["garbage"] = find_garbage(home).paths() if found.items else []
            return data
        if not found.items:
            return data
        tombstone = tombstone_of(found.items, request.reason, ctx.command, utc_now())
        data["tombstone"] = tombstone.id
        data["pack"] = _carry_out(ctx, tombstone)
    return data


def finish_pending(ctx: RunContext) -> dict[str, Any] | None:
    """Finish a forget that was interrupted (its journal in the home); None when there is none.
    Call under the writer lock."""
    from episteme_core.store.tombstones import read_pending

    pending = read_pending(ctx.home.root)
    if pending is None:
        return None
    pack = _carry_out(ctx, pending, journal=False)
    return {"tombstone": pending.id, "time": pending.time, "pack": pack}


def _carry_out(ctx: RunContext, tombstone: Tombstone, *, journal: bool = True) -> dict[str, Any]:
    """Every step of a forget, each finding by hash what is still to do (so a step a killed run
    already took is not taken twice)."""
    from episteme_core.records.canonical import canonical_bytes
    from episteme_core.records.convert import unstructure
    from episteme_core.store.atomic import atomic_write, fsync_dir
    from episteme_core.store.tombstones import pending_path

    home = ctx.home
    path = pending_path(home.root)
    if journal:
        atomic_write(path, canonical_bytes(unstructure(tombstone)))
    _redact_log(home, tombstone)
    paragraphs = _commit_snapshots(home, tombstone)
    _delete_blobs(home, tombstone)
    pack = _commit_documents(ctx, tombstone, paragraphs)
    pack.update(_repack(ctx))
    if any(item.kind == "source" for item in tombstone.items):
        with contextlib.suppress(FileNotFoundError):
            (home.root / STAT_CACHE).unlink()
    from episteme_core.store.gc import collect_garbage

    # whatever no commit names (a bucket or an object a killed step left, a blob a killed capture
    # wrote): it may hold what was forgotten, so it goes too
    pack["collected"] = collect_garbage(home)["removed"]
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    fsync_dir(home.root)
    return pack


def _redact_log(home: Home, tombstone: Tombstone) -> None:
    """Rewrite the tombstone's lines and append it, unless the log holds it already."""
    from episteme_core.store.log import Log
    from episteme_core.store.tombstones import iter_log, key_sha256

    lines: dict[int, LogEntry] = {}
    entries = {number: entry for number, entry in iter_log(home.log_path)}
    if any(isinstance(e, Tombstone) and e.id == tombstone.id for e in entries.values()):
        return
    for item in tombstone.items:
        replaced = dict(zip(item.snapshots, item.replaced_by, strict=False))
        for number in item.lines:
            entry = entries.get(number)
            if not isinstance(entry, LogEntry):
                continue
            if item.kind == "source" and entry.record_id is not None and (
                    key_sha256(entry.record_id) == item.source_sha256):
                lines[number] = LogEntry(time=entry.time, command=entry.command, source=entry.source,
                                         status="redacted")
            elif item.kind == "paragraphs" and entry.snapshot_id in replaced:
                lines[number] = attrs.evolve(entry, snapshot_id=replaced[entry.snapshot_id])
    Log(home.log_path).redact(lines, tombstone)


def _commit_snapshots(home: Home, tombstone: Tombstone) -> set[str]:
    """Drop the forgotten sources and snapshots, and put each record's redacted versions in place of
    those they replace; the records that lost paragraphs (to extract again)."""
    from episteme_core.stages.snapshots import read_catalog
    from episteme_core.store.blobs import BlobStore
    from episteme_core.store.commits import head_meta
    from episteme_core.store.tombstones import key_sha256

    catalog = read_catalog(home)
    if catalog.index is None:
        return set()
    by_hash = {key_sha256(source): source for source in catalog.sources()}
    drop: set[str] = set()
    put = []
    changed: dict[str, Any] = {}
    records: set[str] = set()
    blobs = BlobStore(home.blobs_dir)
    for item in tombstone.items:
        key = by_hash.get(item.source_sha256)
        if key is None:
            continue
        state = catalog.state(key)
        if item.kind == "source":
            drop.add(key)
            drop.update(state.history)
            continue
        records.add(key)
        texts = {p.text_sha256 for p in item.paragraphs}
        versions = {v.old: v for v in redacted_versions(catalog, key, texts)}
        if not versions:
            continue
        for version in versions.values():
            blobs.put(version.data)
            from episteme_core.records.canonical import canonical_bytes
            from episteme_core.records.convert import unstructure

            payload = canonical_bytes(unstructure(version.record))
            put.append(catalog.stage.put_bytes(version.record.id, payload, suffix=".json"))
        history = list(dict.fromkeys(versions[s].record.id if s in versions else s for s in state.history))
        latest = versions[state.latest].record.id if state.latest in versions else state.latest
        kept = set(history)
        drop.update(s for s in versions if s not in kept)
        changed[key] = {"latest": latest, "history": history, **state.options}
    if not drop and not put:
        return records
    put = list({entry.key: entry for entry in put if not catalog.has_snapshot(entry.key)}.values())
    index = catalog.index
    head = {k: v for k, v in head_meta(index).items() if k != "sources"}
    stage = catalog.stage
    committed = stage.commit_changes(index, head=head, fields=["sources"], put=put, drop=sorted(drop),
                                     values={"sources": changed})
    stage.prune(committed)
    return records


def _delete_blobs(home: Home, tombstone: Tombstone) -> None:
    """Delete the tombstone's blobs that no snapshot names (each one a single unlink)."""
    from episteme_core.stages.snapshots import read_catalog
    from episteme_core.store.blobs import BlobStore
    from episteme_core.store.faults import fault

    store = BlobStore(home.blobs_dir)
    listed = sorted({sha for item in tombstone.items for sha in item.blobs})
    present = [sha for sha in listed if store.has(sha)]
    if not present:
        return
    named = blob_names(read_catalog(home))
    removed = 0
    for sha in present:
        if sha in named:
            continue
        with contextlib.suppress(FileNotFoundError):
            store.path_for(sha).unlink()
            removed += 1
            if removed == 1:
                fault("after-blob-delete-one")


def _commit_documents(ctx: RunContext, tombstone: Tombstone, records: set[str]) -> dict[str, Any]:
    """One commit of the documents stage: the forgotten sources' documents dropped and the records
    that lost paragraphs extracted again. Dropping alone keeps the record of the last full
    extraction true (its sums lose those sources' terms), so the next run still decides "unchanged"
    cheaply."""
    from episteme_core.stages.documents import SOURCES_META, documents_stage, source_records
    from episteme_core.store.commits import head_meta
    from episteme_core.store.tombstones import key_sha256

    home = ctx.home
    digests = {item.source_sha256 for item in tombstone.items if item.kind == "source"}
    stage = documents_stage(home)
    previous = stage.read_index()
    if previous is None:
        return {}
    gone = sorted(entry.key for entry in previous.entries if key_sha256(entry.key) in digests)
    if records:
        from episteme_core.extract.run import extract_sources

        extracted = extract_sources(home, ctx.plugins, sorted(records), warn=ctx.warn, drop=gone)
        return {"extracted": extracted.counts()["extracted"], "droppedDocuments": len(gone)}
    if not gone:
        return {}
    entries = {entry.key: entry for entry in previous.entries}
    head = {k: v for k, v in head_meta(previous).items() if k != SOURCES_META}
    head["documents"] = len(entries) - len(gone)
    head = _less_run(head, source_records(previous), entries, gone)
    index = stage.commit_changes(previous, head=head, fields=[SOURCES_META], drop=gone)
    stage.prune(index)
    return {"droppedDocuments": len(gone)}


def _less_run(head: dict[str, Any], records: dict[str, dict[str, Any]], entries: dict[str, Any],
              gone: Sequence[str]) -> dict[str, Any]:
    """The documents head with the run record (``extract.run.RUN_META``) less the ``gone`` sources'
    terms; without it when it is not one this can keep true."""
    from episteme_core.extract import changed as delta
    from episteme_core.extract.run import RUN_META

    run = head.get(RUN_META)
    if not isinstance(run, dict):
        return head
    latest, objects, count = (delta.from_hex(run.get("snapshots")), delta.from_hex(run.get("objects")),
                              run.get("objectCount"))
    left = {entries[key].path for key in entries if key not in gone}
    if latest is None or objects is None or type(count) is not int:
        return {k: v for k, v in head.items() if k != RUN_META}
    for key in gone:
        record = records.get(key) or {}
        if not isinstance(record.get("snapshotId"), str) or not isinstance(record.get("sourceOptions"), dict):
            return {k: v for k, v in head.items() if k != RUN_META}
        latest -= delta.state_term(key, record["snapshotId"], record["sourceOptions"])
    paths = {entries[key].path for key in gone} - left
    objects -= sum(delta.path_term(path) for path in paths)
    return {**head, RUN_META: {**run, "snapshots": delta.as_hex(latest), "objects": delta.as_hex(objects),
                               "objectCount": count - len(paths)}}


def _repack(ctx: RunContext) -> dict[str, Any]:
    """Cut the chunks again from the documents and rebuild the shards that held a forgotten row;
    each only when its stage was ever committed."""
    from episteme_core.chunking.run import chunk_home
    from episteme_core.personal.pack import chunk_options
    from episteme_core.search.indexers import build_index, report_data
    from episteme_core.stages.chunks import chunks_stage
    from episteme_core.stages.shards import STAGE as SHARDS
    from episteme_core.store.commits import Stage

    home = ctx.home
    report: dict[str, Any] = {}
    chunks = chunks_stage(home).read_index()
    if chunks is None:
        return report
    selection = chunks.meta.get("selection")
    prefer = selection.get("prefer") if isinstance(selection, dict) else None
    max_chars, overlap = chunk_options(home)
    cut = chunk_home(home, ctx.plugins.all("chunker"), max_chars=max_chars, overlap_chars=overlap,
                     prefer=prefer if isinstance(prefer, str) else None, warn=ctx.warn)
    report["chunks"] = cut.chunks
    if Stage(home, SHARDS).read_index() is not None:
        shards = report_data(build_index(ctx, purge=True))
        report["shards"] = shards.get("shards")
        report["shardsBuilt"] = len(shards.get("built") or ())
    return report


def describe(data: dict[str, Any]) -> str:
    """People's lines: what went (or would go), and the tombstone."""
    lines: list[str] = []
    if data.get("finished"):
        lines.append(f"finished the interrupted forget {data['finished']['tombstone'][:12]}")
    verb = "would forget" if data["dryRun"] else "forgot"
    for row in data["forgotten"]:
        what = row["source"] if row["kind"] == "source" else (
            row["source"] + " " + ", ".join(f"#{n}" for n in row["paragraphs"]))
        parts = [f"{len(row['snapshots'])} snapshot(s)" + (" replaced" if row["kind"] != "source" else ""),
                 f"{len(row['blobs'])} blob(s)"]
        if row["keptBlobs"]:
            parts.append(f"{len(row['keptBlobs'])} blob(s) kept (another source holds the same bytes)")
        if row["document"]:
            parts.append("its document" if row["kind"] == "source" else "its document extracted again")
        parts.append(f"{len(row['logLines'])} log line(s) " + ("redacted" if row["kind"] == "source"
                                                              else "re-pointed"))
        lines.append(f"{verb} {what}: " + ", ".join(parts))
    for name in data.get("alreadyForgotten") or ():
        lines.append(f"already forgotten: {name}")
    if data.get("tombstone"):
        lines.append(f"tombstone {data['tombstone'][:12]} appended to the log")
    if data.get("garbage"):
        lines.append(f"and {len(data['garbage'])} file(s) nothing names (as gc removes them)")
    if data["dryRun"] and data["forgotten"]:
        lines.append("nothing was changed (--dry-run)")
    if not lines:
        lines.append("nothing to forget")
    return "\n".join(lines)


__all__ = ["ForgetRequest", "Plan", "describe", "finish_pending", "forget", "plan", "source_key"]
