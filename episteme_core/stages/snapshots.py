"""The ``snapshots`` stage: what every source writes and what extraction reads.

One stage entry per snapshot (key = snapshot id, object = canonical JSON of ``SnapshotRecord``);
the captured bytes are blobs in the home's ``BlobStore``. The index's ``meta.sources`` maps each
source (a normalised URL without fragment, or a record id such as ``book:corpus/name``) to its
``latest`` snapshot id, its ``history`` (every snapshot id it ever had, oldest first, never
pruned) and its options (``family``, ``authority``, ``extractor``, ``fragment``; absent ones are
omitted). See ``docs/capture.md``.

Read with ``read_catalog(home)``; write with ``SnapshotWriter`` inside ``with ctx.writing():``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs

from episteme_core.errors import EpistemeError, raise_if_cancelled
from episteme_core.records.canonical import canonical_bytes, loads_strict
from episteme_core.records.convert import structure, unstructure
from episteme_core.records.stage_index import StageEntry, StageIndex
from episteme_core.records.storage import LogEntry, SnapshotIdentity, SnapshotRecord
from episteme_core.store.atomic import sync_after_rename, sync_file, temp_path_for
from episteme_core.store.blobs import BlobStore
from episteme_core.store.commits import Stage
from episteme_core.store.faults import fault
from episteme_core.store.home import Home
from episteme_core.store.log import Log, append_line

STAGE_NAME = "snapshots"
OPTION_KEYS = ("family", "authority", "extractor", "fragment")
STATUSES = ("captured", "unchanged")
_CHUNK = 1 << 20


def utc_now() -> str:
    """Observation time: UTC, second precision, ``Z`` suffix."""
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def clean_options(options: Mapping[str, Any] | None) -> dict[str, Any]:
    """Only the known option keys, and only those with a value (absent ones are omitted)."""
    if not options:
        return {}
    unknown = sorted(set(options) - set(OPTION_KEYS))
    if unknown:
        raise EpistemeError(
            "INTERNAL_ERROR", f"unknown snapshot source option(s): {', '.join(unknown)}"
        )
    return {key: options[key] for key in OPTION_KEYS if options.get(key) is not None}


def make_identity(
    capture_kind: str,
    source: str,
    data: bytes,
    *,
    final_url: str | None = None,
    content_type: str | None = None,
    charset: str | None = None,
) -> SnapshotIdentity:
    """The identity of ``data`` captured from ``source``: what the snapshot id hashes."""
    return SnapshotIdentity(
        capture_kind=capture_kind,
        source=source,
        final_url=final_url,
        content_type=content_type,
        charset=charset,
        byte_length=len(data),
        content_sha256=hashlib.sha256(data).hexdigest(),
    )


def file_digest(path: Path | str, max_bytes: int | None = None) -> tuple[str, int]:
    """Stream ``path`` once: its sha256 and length (``LIMIT_EXCEEDED`` past ``max_bytes``)."""
    from episteme_core.records.inputs import open_regular

    digest = hashlib.sha256()
    total = 0
    with open(open_regular(path, follow_symlinks=False), "rb") as handle:
        while chunk := handle.read(_CHUNK):
            total += len(chunk)
            if max_bytes is not None and total > max_bytes:
                raise EpistemeError(
                    "LIMIT_EXCEEDED",
                    f"{path}: larger than {max_bytes} bytes",
                    details={"path": str(path), "bytes": total, "limit": max_bytes},
                    hint="raise --max-bytes if this file is expected",
                )
            digest.update(chunk)
    return digest.hexdigest(), total


@attrs.frozen
class SourceState:
    """One source in the index meta: its latest snapshot, its history, its options."""

    latest: str
    history: tuple[str, ...]
    options: dict[str, Any]

    def to_meta(self) -> dict[str, Any]:
        return {"latest": self.latest, "history": list(self.history), **self.options}


def _parse_sources(index: StageIndex | None, where: str) -> dict[str, SourceState]:
    if index is None:
        return {}
    raw = index.meta.get("sources", {})
    if not isinstance(raw, dict):
        raise EpistemeError("INVALID_INPUT", f"{where}: meta.sources is not an object",
                            details={"path": where})
    return _parse_states(raw, {entry.key for entry in index.entries}, where)


def _parse_states(raw: dict[str, Any], known: set[str] | None, where: str) -> dict[str, SourceState]:
    """Source states from ``meta.sources`` values; every snapshot a history names must be in ``known``
    (unless None: the caller checks the histories it uses)."""
    allowed = {"latest", "history", *OPTION_KEYS}
    states: dict[str, SourceState] = {}
    for source, value in raw.items():
        if (
            not isinstance(value, dict)
            or not isinstance(value.get("latest"), str)
            or not isinstance(value.get("history"), list)
            or not all(isinstance(h, str) for h in value["history"])
            or not value.keys() <= allowed
        ):
            raise EpistemeError("INVALID_INPUT", f"{where}: meta.sources[{source!r}] is malformed",
                                details={"path": where, "source": source})
        history = tuple(value["history"])
        if value["latest"] not in history or (known is not None and not known.issuperset(history)):
            raise EpistemeError(
                "INVALID_INPUT",
                f"{where}: meta.sources[{source!r}] names snapshots the index lacks",
                details={"path": where, "source": source},
            )
        options = {k: value[k] for k in OPTION_KEYS if value.get(k) is not None} if len(value) > 2 else {}
        states[source] = SourceState(value["latest"], history, options)
    return states


_PARSED: dict[tuple[str, str], dict[str, SourceState]] = {}
ONE_BY_ONE = 512  # past this many single lookups a catalog reads every bucket once instead


def _sources_of(index: StageIndex | None, where: str) -> dict[str, SourceState]:
    """``_parse_sources``, once per committed index in this process (a pipeline reads the catalog
    in capture and again in extract); the states are shared read-only, the dict is a copy."""
    if index is None or not index.fingerprint:
        return _parse_sources(index, where)
    key = (index.fingerprint, where)
    states = _PARSED.get(key)
    if states is None:
        states = _parse_sources(index, where)
        _PARSED.clear()  # the latest commit only
        _PARSED[key] = states
    return dict(states)


class SnapshotCatalog:
    """A committed ``snapshots`` stage, read-only: sources, their histories, records and bytes."""

    def __init__(self, home: Home, stage: Stage, index: StageIndex | None) -> None:
        self.home = home
        self.stage = stage
        self.index = index
        self.blobs = BlobStore(home.blobs_dir)
        self._loaded: tuple[dict[str, StageEntry], dict[str, SourceState]] | None = None
        self._records: dict[str, SnapshotRecord] = {}
        self._one: dict[str, SourceState | None] = {}  # sources looked up one by one
        self._one_entries: dict[str, StageEntry | None] = {}  # snapshots looked up one by one

    @property
    def _entries(self) -> dict[str, StageEntry]:
        return self._load()[0]

    @property
    def _states(self) -> dict[str, SourceState]:
        return self._load()[1]

    def _load(self) -> tuple[dict[str, StageEntry], dict[str, SourceState]]:
        """The entries and source states, read (every bucket of a large stage) on first use: a
        caller that needs only the fingerprint reads the head alone."""
        if self._loaded is None:
            index = self.index
            self._loaded = ({e.key: e for e in (index.entries if index else [])},
                            _sources_of(index, str(self.stage.index_path)))
        return self._loaded

    def _by_bucket(self) -> bool:
        """Whether single lookups read one bucket (a bucketed stage not read in full yet)."""
        from episteme_core.store.commits import LazyStageIndex

        return (self._loaded is None and isinstance(self.index, LazyStageIndex)
                and self.index._entries is None and "sources" in self.index.keyed
                and len(self._one) + len(self._one_entries) < ONE_BY_ONE)

    def _entry(self, snapshot_id: str) -> StageEntry | None:
        if not self._by_bucket():
            return self._entries.get(snapshot_id)
        if snapshot_id not in self._one_entries:
            assert self.index is not None
            found, _ = self.stage.lookup(self.index, [snapshot_id])
            self._one_entries[snapshot_id] = found.get(snapshot_id)
        return self._one_entries[snapshot_id]

    def state_of(self, source: str) -> SourceState | None:
        """The state of ``source``, or None when it has none; of a bucketed stage only the buckets
        of the source and of its history's snapshots are read (verified as a full read does)."""
        if not self._by_bucket():
            return self._states.get(source)
        if source not in self._one:
            assert self.index is not None
            _, values = self.stage.lookup(self.index, [source], ["sources"])
            raw = values["sources"]
            if not raw:
                self._one[source] = None
            else:
                where = str(self.stage.index_path)
                history = raw[source].get("history") if isinstance(raw[source], dict) else None
                found, _ = self.stage.lookup(self.index, history if isinstance(history, list) else [])
                self._one[source] = _parse_states(raw, set(found), where)[source]
        return self._one[source]

    def bucket_states(self, number: int) -> dict[str, SourceState]:
        """The states of the sources in bucket ``number`` of a bucketed stage, that bucket alone read
        (a history is checked against the entries by ``state``, not here)."""
        from episteme_core.store.commits import LazyStageIndex

        assert isinstance(self.index, LazyStageIndex) and "sources" in self.index.keyed
        _, values = self.stage.bucket(self.index, number)
        raw = values["sources"]
        return _parse_states(raw, None, str(self.stage.index_path))

    @property
    def fingerprint(self) -> str | None:
        """The committed index fingerprint (``None`` for a stage never committed); reads no bucket."""
        return self.index.fingerprint if self.index else None

    def __len__(self) -> int:
        return len(self._entries)

    def sources(self) -> list[str]:
        return sorted(self._states)

    def has_source(self, source: str) -> bool:
        return self.state_of(source) is not None

    def has_snapshot(self, snapshot_id: str) -> bool:
        return self._entry(snapshot_id) is not None

    def snapshot_ids(self) -> list[str]:
        return sorted(self._entries)

    def state(self, source: str) -> SourceState:
        found = self.state_of(source)
        if found is None:
            raise EpistemeError(
                "INVALID_INPUT", f"no snapshot of {source!r} in {self.stage.dir}",
                details={"source": source}, hint="capture it first (episteme snapshot / ingest)",
            )
        return found

    def latest(self, source: str) -> SnapshotRecord:
        return self.record(self.state(source).latest)

    def history(self, source: str) -> list[SnapshotRecord]:
        return [self.record(snapshot_id) for snapshot_id in self.state(source).history]

    def options(self, source: str) -> dict[str, Any]:
        return dict(self.state(source).options)

    def record(self, snapshot_id: str) -> SnapshotRecord:
        """The record named ``snapshot_id``, verified (object hash, key and id match the identity)."""
        cached = self._records.get(snapshot_id)
        if cached is not None:
            return cached
        entry = self._entry(snapshot_id)
        if entry is None:
            raise EpistemeError("INVALID_INPUT", f"no snapshot {snapshot_id} in {self.stage.dir}",
                                details={"snapshotId": snapshot_id})
        where = str(self.stage.object_path(entry))
        record = structure(self.stage.read_json(entry), SnapshotRecord, source=where)
        if record.id != snapshot_id or record.identity.snapshot_id != snapshot_id:
            raise EpistemeError(
                "INVALID_INPUT", f"{where}: snapshot id does not match its identity (tampered)",
                details={"path": where, "snapshotId": snapshot_id},
            )
        self._records[snapshot_id] = record
        return record

    def records(self) -> Iterator[SnapshotRecord]:
        for snapshot_id in sorted(self._entries):
            yield self.record(snapshot_id)

    def blob_path(self, record: SnapshotRecord) -> Path:
        """Where the bytes are (for streaming large content; verify with ``content``)."""
        return self.blobs.path_for(record.content_sha256)

    def content(self, record: SnapshotRecord) -> bytes:
        """The captured bytes, verified by sha256 and length; tampered or missing is INVALID_INPUT."""
        data = self.blobs.get(record.content_sha256)
        if len(data) != record.byte_length:
            path = self.blob_path(record)
            raise EpistemeError("INVALID_INPUT", f"{path}: length differs from snapshot {record.id}",
                                details={"path": str(path)})
        return data


def read_catalog(home: Home) -> SnapshotCatalog:
    """The committed snapshots stage of ``home`` (an empty catalog when never committed)."""
    stage = Stage(home, STAGE_NAME)
    return SnapshotCatalog(home, stage, stage.read_index())


LATEST_NAME = "snapshots-latest.json"
LATEST_FORMAT = "episteme-snapshots-latest/1"


def latest_of_head(home: Home, head: str | None) -> tuple[str, int] | None:
    """What extraction reads of the snapshots commit ``head`` (the fingerprint of every source's
    latest snapshot id and options, and the source count) as noted when that commit was last read
    in full; None when not noted for it. A pure function of the commit, so a note for another
    commit is ignored (any commit of snapshots changes the head's fingerprint), and never an error:
    an unreadable note is ignored too."""
    import json

    if head is None:
        return None
    try:
        with open(home.root / LATEST_NAME, "rb") as handle:
            note = json.loads(handle.read(4096))
    except (OSError, ValueError, RecursionError):
        return None
    if (not isinstance(note, dict) or note.get("format") != LATEST_FORMAT or note.get("head") != head
            or not isinstance(note.get("latest"), str) or type(note.get("sources")) is not int):
        return None
    return note["latest"], note["sources"]


def note_latest_of_head(home: Home, head: str | None, latest: str, sources: int) -> None:
    """Note ``latest_of_head`` for the commit ``head`` (under the writer lock; skipped when noted)."""
    if head is None or latest_of_head(home, head) == (latest, sources):
        return
    from episteme_core.store.atomic import atomic_write

    atomic_write(home.root / LATEST_NAME, canonical_bytes(
        {"format": LATEST_FORMAT, "head": head, "latest": latest, "sources": sources}))


_ALLOW_FORGOTTEN: ContextVar[bool] = ContextVar("episteme_allow_forgotten", default=False)


@contextlib.contextmanager
def allowing_forgotten(allow: bool = True) -> Iterator[None]:
    """Inside the block, sources ``forget`` removed may be captured again (``--allow-forgotten``);
    outside it every writer refuses them."""
    token = _ALLOW_FORGOTTEN.set(allow)
    try:
        yield
    finally:
        _ALLOW_FORGOTTEN.reset(token)


def forgotten_allowed() -> bool:
    """Whether this run was told to capture forgotten sources again (``allowing_forgotten``)."""
    return _ALLOW_FORGOTTEN.get()


@attrs.frozen
class Observation:
    """What ``SnapshotWriter.observe`` decided: ``captured`` (a new latest) or ``unchanged``."""

    status: str
    record: SnapshotRecord
    previous: str | None = None  # the source's latest snapshot id before this observation


class SnapshotWriter:
    """Records observations and commits the stage once; use inside ``with ctx.writing():``.

    ``observe`` stores the blob and the record object at once (content-addressed, harmless if the
    run fails later) and queues one log line per ``captured`` observation. ``commit`` appends the
    queued log lines, then replaces ``index.json``; it writes nothing when nothing changed.
    """

    def __init__(self, home: Home, command: str, *, clock: Callable[[], str] = utc_now) -> None:
        self.home = home
        self.command = command
        self.clock = clock
        self.stage = Stage(home, STAGE_NAME)
        self.catalog = read_catalog(home)
        self.blobs = self.catalog.blobs
        self.log = Log(home.log_path)
        self._loaded_states: dict[str, SourceState] | None = None  # read on first use
        self._overlay: dict[str, SourceState] = {}  # the states this run set, by source
        self.observed = False  # whether anything was observed or kept (the states may differ)
        self._new_entries: dict[str, StageEntry] = {}
        self._new_records: dict[str, SnapshotRecord] = {}
        self._pending_log: list[LogEntry] = []
        self._created: list[Path] = []
        self._verified: set[str] = set()  # blobs checked or written in this run
        self._forgotten: Any = None  # the log's tombstones in force, read when first needed
        self.committed: StageIndex | None = None

    @property
    def _states(self) -> dict[str, SourceState]:
        """Every source's state as this run leaves it: the catalog's (read on first use, so a run
        that asks nothing of it reads only the stage head), then what it observed."""
        if self._loaded_states is None:
            self._loaded_states = {s: self.catalog.state(s) for s in self.catalog.sources()}
            self._loaded_states.update(self._overlay)
        return self._loaded_states

    def _state(self, source: str) -> SourceState | None:
        """One source's state as this run leaves it (of a bucketed stage, its bucket alone is read)."""
        if source in self._overlay:
            return self._overlay[source]
        if self._loaded_states is not None:
            return self._loaded_states.get(source)
        return self.catalog.state_of(source)

    def _set_state(self, source: str, state: SourceState) -> None:
        self._overlay[source] = state
        if self._loaded_states is not None:
            self._loaded_states[source] = state

    def states_read(self) -> bool:
        """Whether this run read every source's state (the catalog's buckets)."""
        return self._loaded_states is not None

    def touched(self, source: str) -> bool:
        """Whether this run observed or kept ``source`` (its state may differ from the catalog's)."""
        return source in self._overlay

    def touched_sources(self) -> set[str]:
        return set(self._overlay)

    def __enter__(self) -> SnapshotWriter:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is not None and self.committed is None:
            self.abort()

    def abort(self) -> None:
        """Remove every blob and object this writer created: a failed run changes nothing stored."""
        for path in reversed(self._created):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        self._created.clear()
        self._new_entries.clear()
        self._new_records.clear()
        self._pending_log.clear()
        self._overlay.clear()
        self._loaded_states = None

    # blobs ------------------------------------------------------------------

    def put_bytes(self, data: bytes) -> str:
        """Store ``data`` as a blob (once) and return its sha256."""
        path = self.blobs.path_for(hashlib.sha256(data).hexdigest())
        existed = path.exists()
        digest = self.blobs.put(data)
        if not existed:
            self._created.append(path)
            self._verified.add(digest)
        return digest

    def put_file(self, path: Path | str, max_bytes: int | None = None) -> tuple[str, int]:
        """Stream a local file into the blob store without holding it in memory; (sha256, length).

        The copy is hashed as it is written; a file that changes while being read is refused.
        """
        from episteme_core.records.inputs import open_regular

        with self.incoming() as blob:
            fd = open_regular(path, follow_symlinks=False)  # never blocks on a FIFO swapped in
            with open(fd, "rb") as source:
                while chunk := source.read(_CHUNK):
                    if max_bytes is not None and blob.length + len(chunk) > max_bytes:
                        raise EpistemeError(
                            "LIMIT_EXCEEDED",
                            f"{path}: larger than {max_bytes} bytes",
                            details={
                                "path": str(path),
                                "bytes": blob.length + len(chunk),
                                "limit": max_bytes,
                            },
                            hint="raise --max-bytes if this file is expected",
                        )
                    blob.write(chunk)
            blob.keep()
            return blob.sha256, blob.length

    def incoming(self) -> IncomingBlob:
        """A blob written in pieces and hashed as it goes (never held whole in memory): ``keep()``
        stores it; leaving the ``with`` block without keeping it removes what was written."""
        return IncomingBlob(self)

    def _check_blob(self, sha: str, length: int) -> None:
        """An existing blob must still hold its bytes; tampering is refused, never papered over."""
        if sha in self._verified:
            return
        path = self.blobs.path_for(sha)
        if file_digest(path) != (sha, length):
            raise EpistemeError(
                "INVALID_INPUT", f"{path}: blob does not match its sha256 (tampered or corrupt)",
                details={"path": str(path)}, hint="run episteme verify",
            )
        self._verified.add(sha)

    def has_blob(self, sha: str, length: int) -> bool:
        """True when the blob is stored and intact (``INVALID_INPUT`` when it is stored but tampered)."""
        if not self.blobs.path_for(sha).exists():
            return False
        self._check_blob(sha, length)
        return True

    # forgotten sources --------------------------------------------------------

    def forgotten(self) -> Any:
        """What the log's tombstones hold in force (``store.tombstones.Forgotten``), read once."""
        if self._forgotten is None:
            from episteme_core.store.tombstones import read_forgotten

            self._forgotten = read_forgotten(self.log.path)
        return self._forgotten

    def refusal(self, source: str) -> EpistemeError | None:
        """The refusal of capturing ``source`` when ``forget`` removed it (unless this run is
        ``allowing_forgotten``); None when it may be captured. A source the stage holds is never
        refused (it was captured again on purpose)."""
        if forgotten_allowed() or self._state(source) is not None:
            return None
        refused: EpistemeError | None = self.forgotten().refusal(source)
        return refused

    # observations -----------------------------------------------------------

    def state(self, source: str) -> SourceState | None:
        return self._state(source)

    def record(self, snapshot_id: str) -> SnapshotRecord:
        return self._new_records.get(snapshot_id) or self.catalog.record(snapshot_id)

    def latest(self, source: str) -> SnapshotRecord | None:
        state = self._state(source)
        return self.record(state.latest) if state else None

    def observe(
        self,
        identity: SnapshotIdentity,
        data: bytes | None = None,
        *,
        options: Mapping[str, Any] | None = None,
        observed_at: str | None = None,
        etag: str | None = None,
        last_modified: str | None = None,
        http_status: int | None = None,
        attributes: Mapping[str, Any] | None = None,
    ) -> Observation:
        """Record that ``identity.source`` now holds this representation.

        ``data`` (when given) must be the bytes the identity names; without it the blob must
        already be stored (``put_file``). Known snapshot ids are reused, never rewritten, so the
        first observation time is kept; ``unchanged`` when it is already the source's latest.
        """
        if data is not None:
            digest = hashlib.sha256(data).hexdigest()
            if len(data) != identity.byte_length or digest != identity.content_sha256:
                raise EpistemeError("INTERNAL_ERROR", "observed bytes do not match their identity")
        refused = self.refusal(identity.source)
        if refused is not None:
            self._drop_created(self.blobs.path_for(identity.content_sha256))
            raise refused
        blob = self.blobs.path_for(identity.content_sha256)
        if blob.exists():
            self._check_blob(identity.content_sha256, identity.byte_length)
        elif data is not None:
            self.put_bytes(data)
        else:
            raise EpistemeError("INTERNAL_ERROR", f"blob {identity.content_sha256} was not stored")
        snapshot_id = identity.snapshot_id
        source = identity.source
        known = snapshot_id in self._new_records or self.catalog.has_snapshot(snapshot_id)
        if known:
            record = self.record(snapshot_id)
        else:
            record = SnapshotRecord(
                id=snapshot_id,
                capture_kind=identity.capture_kind,
                source=source,
                final_url=identity.final_url,
                content_type=identity.content_type,
                charset=identity.charset,
                byte_length=identity.byte_length,
                content_sha256=identity.content_sha256,
                observed_at=observed_at or self.clock(),
                etag=etag,
                last_modified=last_modified,
                http_status=http_status,
                attributes=dict(attributes or {}),
            )
            payload = canonical_bytes(unstructure(record))
            digest = hashlib.sha256(payload).hexdigest()
            object_path = self.stage.dir / "objects" / digest[:2] / f"{digest}.json"
            existed = object_path.exists()
            self._new_entries[snapshot_id] = self.stage.put_bytes(snapshot_id, payload, suffix=".json")
            if not existed:
                self._created.append(object_path)
            self._new_records[snapshot_id] = record
        self.observed = True
        previous = self._state(source)
        cleaned = clean_options(options) if options is not None else (previous.options if previous else {})
        history = previous.history if previous else ()
        if snapshot_id not in history:
            history = (*history, snapshot_id)
        self._set_state(source, SourceState(snapshot_id, history, cleaned))
        if previous is not None and previous.latest == snapshot_id:
            return Observation("unchanged", record, previous.latest)  # changes nothing, logs nothing
        allowed = forgotten_allowed() and bool(self.forgotten().of_source(source))
        from episteme_core.store.tombstones import ALLOWED_CODE

        self._log(identity.capture_kind, source, "captured", snapshot_id, observed_at,
                  code=ALLOWED_CODE if allowed else None)
        return Observation("captured", record, previous.latest if previous else None)

    def _drop_created(self, path: Path) -> None:
        """Remove a blob this run wrote for a capture that is refused (it must not stay behind)."""
        if path in self._created:
            self._created.remove(path)
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

    def _log(
        self, kind: str, source: str, status: str, snapshot_id: str | None,
        observed_at: str | None = None, code: str | None = None,
    ) -> None:
        """Queue one log line for this observation (written whole, with the run's commit)."""
        self._pending_log.append(LogEntry(
            time=observed_at or self.clock(),
            command=self.command,
            source=kind,
            status=status,
            snapshot_id=snapshot_id,
            record_id=source,
            code=code,
        ))

    def note_failure(self, source: str, kind: str, code: str) -> None:
        """Log a failed observation of ``source`` (nothing else changes)."""
        self._log(kind, source, "failed", None, code=code)

    def keep(self, source: str, options: Mapping[str, Any] | None = None) -> Observation:
        """The source is unchanged (an HTTP 304): keep its latest, update its options if given."""
        self.observed = True
        state = self._state(source)
        if state is None:
            raise EpistemeError("INTERNAL_ERROR", f"no recorded snapshot of {source!r} to keep")
        self._set_state(source, state if options is None else
                        SourceState(state.latest, state.history, clean_options(options)))
        return Observation("unchanged", self.record(state.latest), state.latest)

    # commit -----------------------------------------------------------------

    def changed(self) -> bool:
        """Whether the stage itself changes (new snapshots, or a source's latest/history/options)."""
        if not self._overlay and not self._new_entries:
            return False  # nothing was observed: the states are the catalog's
        return bool(self._new_entries) or any(self.catalog.state_of(source) != state
                                              for source, state in self._overlay.items())

    def commit(self) -> StageIndex | None:
        """Append the queued log lines, then commit the index; ``None`` when the stage is unchanged.

        The log gets a line per new representation (``captured``) and per failed source of a run
        that commits (``failed``, with its code); re-observing unchanged content writes nothing.
        Nothing is written once a signal asked the run to stop (``Cancelled``).
        """
        raise_if_cancelled()
        if not self.changed():
            if self._pending_log:
                lines = b"".join(canonical_bytes(unstructure(e)) for e in self._pending_log)
                append_line(self.log.path, lines)
                self._pending_log.clear()
            return None
        from episteme_core.store.commits import head_meta

        index = self.catalog.index
        put = [e for k, e in self._new_entries.items() if not self.catalog.has_snapshot(k)]
        head = {k: v for k, v in (head_meta(index) if index is not None else {}).items() if k != "sources"}
        changed = {source: state.to_meta() for source, state in sorted(self._overlay.items())
                   if self.catalog.state_of(source) != state}
        if self._pending_log:  # one write and one fsync for the run's lines, each line whole
            append_line(self.log.path, b"".join(canonical_bytes(unstructure(e)) for e in self._pending_log))
        self._pending_log.clear()
        # only the buckets of the new snapshots and the changed sources are read and written
        self.committed = self.stage.commit_changes(index, head=head, fields=["sources"], put=put,
                                                   values={"sources": changed})
        if self.committed.fingerprint and self._loaded_states is not None:
            _PARSED.clear()  # the states just committed: a reader of it parses none again
            _PARSED[(self.committed.fingerprint, str(self.stage.index_path))] = dict(self._states)
        return self.committed


def load_record(data: bytes, where: str) -> SnapshotRecord:
    """A ``SnapshotRecord`` from canonical JSON bytes (used by importers and tests)."""
    return structure(loads_strict(data, source=where), SnapshotRecord, source=where)


__all__ = [
    "OPTION_KEYS",
    "allowing_forgotten",
    "forgotten_allowed",
    "STAGE_NAME",
    "Observation",
    "SnapshotCatalog",
    "SnapshotWriter",
    "SourceState",
    "clean_options",
    "file_digest",
    "latest_of_head",
    "make_identity",
    "note_latest_of_head",
    "read_catalog",
    "utc_now",
]


class IncomingBlob:
    """A blob on its way into a writer's store: a temporary file in ``blobs/incoming`` hashed as its
    pieces are written. Its digest and length are known once the last piece is in, before anything
    is stored, so a caller can compare them with what is stored and not keep an unchanged blob."""

    def __init__(self, writer: SnapshotWriter) -> None:
        self._writer = writer
        writer.blobs.root.mkdir(parents=True, exist_ok=True)
        self._temp = temp_path_for(writer.blobs.root / "incoming")
        self._out = open(self._temp, "xb")  # noqa: SIM115 - closed by keep() or __exit__
        self._digest = hashlib.sha256()
        self.length = 0

    def write(self, piece: bytes | bytearray | memoryview) -> None:
        self._digest.update(piece)
        self._out.write(piece)
        self.length += len(piece)

    @property
    def sha256(self) -> str:
        return self._digest.hexdigest()

    def keep(self) -> None:
        """Store the blob (once: an existing one is checked instead) and let the writer own it."""
        writer = self._writer
        self._out.flush()
        fault("temp-written")
        sync_file(self._out.fileno())
        self._out.close()
        sha, total = self.sha256, self.length
        target = writer.blobs.path_for(sha)
        if target.exists():
            writer._check_blob(sha, total)
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        fault("before-blob-write")
        os.replace(self._temp, target)
        fault("after-blob-write")
        writer._created.append(target)
        writer._verified.add(sha)
        sync_after_rename(target.parent)

    def __enter__(self) -> IncomingBlob:
        return self

    def __exit__(self, *exc: object) -> None:
        self._out.close()
        with contextlib.suppress(FileNotFoundError):
            self._temp.unlink()
