"""A stage: content-addressed objects and the ``index.json`` that commits a set of them.

Objects are written first; ``index.json`` is replaced last and atomically. Readers use only what
``index.json`` names and verify every hash, so a failed writer never leaves a half commit visible.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from episteme_core import __version__
from episteme_core.canonical import canonical_bytes, fingerprint, loads_strict, sha256_hex
from episteme_core.convert import structure, unstructure
from episteme_core.errors import EpistemeError
from episteme_core.records import StageEntry, StageIndex
from episteme_core.store.atomic import atomic_write, flush_pending
from episteme_core.store.faults import fault
from episteme_core.store.home import Home

INDEX_NAME = "index.json"
MAX_INDEX_BYTES = 1024 * 1024 * 1024


def index_fingerprint(index: StageIndex) -> str:
    data = unstructure(index)
    data.pop("fingerprint", None)
    return fingerprint(data)


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
        """Atomically make ``entries`` the stage's content; objects must already be written."""
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
        index = StageIndex(
            stage=draft.stage,
            episteme_version=draft.episteme_version,
            entries=draft.entries,
            meta=draft.meta,
            fingerprint=index_fingerprint(draft),
        )
        flush_pending()  # every object the index names is durable before the index changes
        atomic_write(self.index_path, canonical_bytes(unstructure(index)), kind="index-write")
        flush_pending()
        return index

    def prune(self, index: StageIndex) -> int:
        """Delete objects the committed ``index`` no longer names (only after the commit)."""
        keep = {entry.path for entry in index.entries}
        removed = 0
        if not self.objects_dir.exists():
            return 0
        for path in self.objects_dir.rglob("*"):
            relative = path.relative_to(self.dir).as_posix()
            if path.is_file() and relative not in keep and not path.name.startswith("."):
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
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
