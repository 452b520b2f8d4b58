"""A stage: content-addressed objects and the ``index.json`` that commits a set of them.

Objects are written first; ``index.json`` is replaced last and atomically. Readers use only what
``index.json`` names and verify every hash, so a failed writer never leaves a half commit visible.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs

from episteme_core import __version__
from episteme_core.canonical import canonical_bytes, loads_strict, sha256_hex
from episteme_core.convert import structure, unstructure
from episteme_core.errors import EpistemeError, raise_if_cancelled
from episteme_core.records import StageEntry, StageIndex
from episteme_core.store.atomic import atomic_write, flush_pending
from episteme_core.store.faults import fault
from episteme_core.store.home import Home

INDEX_NAME = "index.json"
MAX_INDEX_BYTES = 1024 * 1024 * 1024


def index_fingerprint(index: StageIndex) -> str:
    """The sha256 of the canonical JSON of ``index`` without its fingerprint field."""
    return encode_index(index)[1]


def encode_index(index: StageIndex) -> tuple[bytes, str]:
    """The canonical JSON bytes of ``index`` with its fingerprint filled in, and that fingerprint.

    The same bytes as ``canonical_bytes(unstructure(index))`` once the fingerprint is set, made in
    one encoding pass: canonical JSON sorts the top-level keys (entries, epistemeVersion,
    fingerprint, meta, schemaVersion, stage), so the bytes without the fingerprint are the two
    halves either side of it, their sha256 is the fingerprint, and the field is spliced between
    them. The entries are plain dicts made here (the converter is most of the cost of a large
    index); anything else that is not plain JSON goes through the converter.
    """
    entries = [{"bytes": e.bytes, "key": e.key, "path": e.path, "sha256": e.sha256} for e in index.entries]
    head = _canonical({"entries": entries, "epistemeVersion": index.episteme_version})
    tail = _canonical({"meta": index.meta, "schemaVersion": index.schema_version, "stage": index.stage})
    digest = sha256_hex(head[:-2] + b"," + tail[1:])
    return head[:-2] + b',"fingerprint":"' + digest.encode("ascii") + b'",' + tail[1:], digest


def _canonical(value: Any) -> bytes:
    """``canonical_bytes(unstructure(value))`` without walking plain JSON through the converter."""
    import json

    try:
        text = json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False, separators=(",", ":"),
                          default=unstructure)
        return (text + "\n").encode("utf-8")
    except (ValueError, UnicodeEncodeError, TypeError):
        return canonical_bytes(unstructure(value))  # the converter's result, or its clear error


class Stage:
    """One stage directory of a home (``snapshots``, ``documents``, ``chunks``, ``shards``)."""

    def __init__(self, home: Home, name: str) -> None:
        self.name = name
        self.dir = home.stage_dir(name)

    @property
    def index_path(self) -> Path:
        return self.dir / INDEX_NAME

    @property
    def objects_dir(self) -> Path:
        return self.dir / "objects"

    # writing -------------------------------------------------------------

    def put_bytes(self, key: str, data: bytes, suffix: str = "") -> StageEntry:
        """Store ``data`` as a content-addressed object (once) and return the entry naming it."""
        digest = sha256_hex(data)
        relative = f"objects/{digest[:2]}/{digest}{suffix}"
        path = self.dir / relative
        if not path.exists():
            atomic_write(path, data, kind="object-write")
        return StageEntry(key=key, sha256=digest, bytes=len(data), path=relative)

    def put_json(self, key: str, value: Any) -> StageEntry:
        """Store ``value`` as canonical JSON."""
        return self.put_bytes(key, canonical_bytes(value), suffix=".json")

    def commit(
        self, entries: Iterable[StageEntry], meta: dict[str, Any] | None = None
    ) -> StageIndex:
        """Atomically make ``entries`` the stage's content; objects must already be written.

        Nothing is committed once a signal asked the run to stop (``Cancelled``)."""
        raise_if_cancelled()
        ordered = sorted(entries, key=lambda e: e.key)
        seen: set[str] = set()
        for entry in ordered:
            if entry.key in seen:
                raise EpistemeError(
                    "INTERNAL_ERROR", f"stage {self.name}: two entries share the key {entry.key!r}"
                )
            seen.add(entry.key)
        draft = StageIndex(
            stage=self.name, episteme_version=__version__, entries=ordered, meta=dict(meta or {})
        )
        data, digest = encode_index(draft)
        index = attrs.evolve(draft, fingerprint=digest)
        flush_pending()  # every object the index names is durable before the index changes
        if not self._committed_as(data):  # an index that would not change is not written again
            atomic_write(self.index_path, data, kind="index-write")
            flush_pending()
        _remember(data, index)
        return index

    def _committed_as(self, data: bytes) -> bool:
        """Whether ``index.json`` already holds exactly ``data``."""
        try:
            if self.index_path.stat().st_size != len(data):
                return False
            return self.index_path.read_bytes() == data
        except OSError:
            return False

    def prune(self, index: StageIndex) -> int:
        """Delete objects the committed ``index`` no longer names (only after the commit)."""
        import os

        keep = {entry.path for entry in index.entries}
        removed = 0
        top = str(self.dir)
        for folder, _, names in os.walk(self.objects_dir):
            relative_folder = os.path.relpath(folder, top).replace(os.sep, "/")
            for name in names:
                relative = f"{relative_folder}/{name}"
                if relative in keep or name.startswith("."):
                    continue
                path = os.path.join(folder, name)
                if not os.path.isfile(path):
                    continue
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)
                    removed += 1
                    if removed == 1:
                        fault("after-prune-one")
        return removed

    # reading -------------------------------------------------------------

    def read_index(self) -> StageIndex | None:
        """The committed index, verified; ``None`` when the stage was never committed."""
        try:
            raw = self.index_path.read_bytes()
        except FileNotFoundError:
            return None
        source = str(self.index_path)
        if len(raw) > MAX_INDEX_BYTES:
            raise EpistemeError(
                "LIMIT_EXCEEDED", f"{source}: larger than {MAX_INDEX_BYTES} bytes",
                details={"path": source},
            )
        known = _recall(raw, self.name)
        if known is not None:
            return known
        fast = _as_written(raw, self.name)
        if fast is not None:
            _remember(raw, fast)
            return fast
        index = structure(loads_strict(raw, source=source), StageIndex, source=source)
        if index.fingerprint != index_fingerprint(index):
            raise EpistemeError(
                "INVALID_INPUT",
                f"{source}: fingerprint does not match its content (tampered or corrupt)",
                details={"path": source},
            )
        if index.stage != self.name:
            raise EpistemeError(
                "INVALID_INPUT",
                f"{source}: is the index of stage {index.stage!r}, not {self.name!r}",
                details={"path": source},
            )
        return index

    def object_path(self, entry: StageEntry) -> Path:
        relative = Path(entry.path)
        if relative.is_absolute() or ".." in relative.parts:
            raise EpistemeError(
                "INVALID_INPUT",
                f"{self.index_path}: entry {entry.key!r} points outside the stage",
                details={"path": str(self.index_path), "entry": entry.key},
            )
        return self.dir / relative

    def read_bytes(self, entry: StageEntry) -> bytes:
        """An object's bytes; missing or tampered is ``INVALID_INPUT`` naming the file."""
        path = self.object_path(entry)
        try:
            data = path.read_bytes()
        except FileNotFoundError as exc:
            raise EpistemeError(
                "INVALID_INPUT", f"{path}: named by {self.index_path} but missing",
                details={"path": str(path)},
            ) from exc
        if len(data) != entry.bytes or sha256_hex(data) != entry.sha256:
            raise EpistemeError(
                "INVALID_INPUT",
                f"{path}: does not match the sha256 in {self.index_path} (tampered or corrupt)",
                details={"path": str(path)},
            )
        return data

    def read_json(self, entry: StageEntry) -> Any:
        return loads_strict(self.read_bytes(entry), source=str(self.object_path(entry)))


_FINGERPRINT_FIELD = b',"fingerprint":"'
# Indexes this process wrote or verified, by the sha256 of their bytes (content-addressed, so never
# stale): a command whose stages read the same index again (pipeline: extract commits what chunk
# reads) parses it once. Callers treat a StageIndex as read-only. Bounded by the bytes it stands for.
_KNOWN: dict[str, tuple[int, StageIndex]] = {}
_KNOWN_BYTES = 256 * 1024 * 1024


def _recall(raw: bytes, stage: str) -> StageIndex | None:
    import hashlib

    found = _KNOWN.get(hashlib.sha256(raw).hexdigest())
    return found[1] if found is not None and found[1].stage == stage else None


def _remember(raw: bytes, index: StageIndex) -> None:
    import hashlib

    if len(raw) > _KNOWN_BYTES:
        return
    _KNOWN[hashlib.sha256(raw).hexdigest()] = (len(raw), index)
    while sum(size for size, _ in _KNOWN.values()) > _KNOWN_BYTES:
        del _KNOWN[next(iter(_KNOWN))]  # the oldest first


def _as_written(raw: bytes, stage: str) -> StageIndex | None:
    """``raw`` as the index a writer wrote, or None to take the strict path (which names the fault).

    A writer stores canonical JSON, in which the fingerprint (the sha256 of the canonical JSON of
    everything else) is a top-level field between ``epistemeVersion`` and ``meta``. When the bytes
    without that field hash to it, they are exactly a writer's bytes, so the strict parser's walk and
    a second canonical encoding (most of the cost of reading a large index) prove nothing more; a
    re-run that only reads indexes to learn that nothing changed stays cheap. Anything else, a
    tampered byte included, goes the strict way.
    """
    import hashlib
    import json

    at = raw.find(_FINGERPRINT_FIELD)
    end = at + len(_FINGERPRINT_FIELD) + 64
    if at < 0 or raw[end : end + 2] != b'",' or not raw.endswith(b"}\n"):
        return None
    claimed = raw[end - 64 : end].decode("ascii", "replace")
    if hashlib.sha256(raw[:at] + raw[end + 1 :]).hexdigest() != claimed:
        return None
    from episteme_core.gcpause import paused_cycle_gc

    try:
        with paused_cycle_gc():  # a large index is many small containers and no cycle
            data = json.loads(raw)
            entries = [StageEntry(key=e["key"], sha256=e["sha256"], bytes=e["bytes"], path=e["path"])
                       for e in data["entries"]]
        index = StageIndex(stage=data["stage"], episteme_version=data["epistemeVersion"], entries=entries,
                           meta=data["meta"], schema_version=data["schemaVersion"],
                           fingerprint=data["fingerprint"])
    except (ValueError, KeyError, TypeError, RecursionError):
        return None
    if (index.stage != stage or index.fingerprint != claimed or set(data) != _INDEX_KEYS
            or not isinstance(index.meta, dict) or not all(_entry_ok(e) for e in entries)):
        return None
    return index


_INDEX_KEYS = {"entries", "epistemeVersion", "fingerprint", "meta", "schemaVersion", "stage"}


def _entry_ok(entry: StageEntry) -> bool:
    return (isinstance(entry.key, str) and isinstance(entry.sha256, str) and isinstance(entry.path, str)
            and isinstance(entry.bytes, int) and not isinstance(entry.bytes, bool))
