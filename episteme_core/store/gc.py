"""``episteme gc``: the blobs, stage objects and buckets nothing names, removed under the writer lock.

A blob is named by a snapshot record of the committed snapshots stage (its ``contentSha256``); an
object or a bucket by its stage's committed ``index.json``. Everything else in those folders is
what an aborted capture, a killed writer or an older layout left: garbage. Temp files of writers
that are gone go too. Nothing named is ever touched, and each removal is one ``unlink``, so a ``gc``
killed at any moment leaves every commit whole (some garbage is simply left for the next one).
A stage or a snapshot record that cannot be read stops ``gc`` before it removes anything
(``INVALID_INPUT``: run ``episteme verify``): what it would name cannot be known.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import attrs

from episteme_core.records.canonical import loads_strict
from episteme_core.records.convert import structure
from episteme_core.records.storage import SnapshotRecord
from episteme_core.store.atomic import is_temp_file
from episteme_core.store.blobs import BlobStore
from episteme_core.store.commits import BUCKETS_DIR, LazyStageIndex, Stage
from episteme_core.store.faults import fault
from episteme_core.store.home import STAGES, Home


@attrs.frozen
class Garbage:
    """What nothing names, as paths relative to the home (sorted), and their bytes."""

    blobs: list[str]
    objects: list[str]
    buckets: list[str]
    temp_files: list[str]
    bytes: int

    def paths(self) -> list[str]:
        return [*self.blobs, *self.objects, *self.buckets, *self.temp_files]


def named_blobs(home: Home) -> set[str]:
    """The sha256 of every blob a committed snapshot record names (each record read and checked)."""
    stage = Stage(home, "snapshots")
    index = stage.read_index()
    named: set[str] = set()
    for entry in index.entries if index is not None else ():
        where = str(stage.object_path(entry))
        record = structure(loads_strict(stage.read_bytes(entry), source=where), SnapshotRecord, source=where)
        named.add(record.content_sha256)
    return named


def find_garbage(home: Home) -> Garbage:
    """Everything in ``blobs/`` and the stages' ``objects/`` and ``buckets/`` that no commit names."""
    from episteme_core.store.sweep import leftover_temp_files

    root = home.root
    named = named_blobs(home)
    blobs = [path for path in BlobStore(home.blobs_dir).iter_paths()
             if not is_temp_file(path) and path.name not in named]
    objects: list[Path] = []
    buckets: list[Path] = []
    for name in STAGES:
        stage = Stage(home, name)
        index = stage.read_index(eager=True)
        keep = {entry.path for entry in index.entries} if index is not None else set()
        for folder, _, files in os.walk(stage.objects_dir):
            for file in files:
                path = Path(folder) / file
                relative = path.relative_to(stage.dir).as_posix()
                if relative not in keep and not is_temp_file(path) and path.is_file():
                    objects.append(path)
        kept = ({bucket["sha256"] for bucket in index.buckets}
                if isinstance(index, LazyStageIndex) else set())
        with contextlib.suppress(OSError):
            for file in os.listdir(stage.dir / BUCKETS_DIR):
                path = stage.dir / BUCKETS_DIR / file
                if (file.endswith(".json") and not file.startswith(".") and file[:-5] not in kept
                        and path.is_file()):
                    buckets.append(path)
    temps = leftover_temp_files(home)
    found = sorted(blobs) + sorted(objects) + sorted(buckets) + temps
    size = 0
    for path in found:
        with contextlib.suppress(OSError):
            size += path.stat().st_size

    def shown(paths: list[Path]) -> list[str]:
        return [_relative(path, root) for path in sorted(paths)]

    return Garbage(shown(blobs), shown(objects), shown(buckets), shown(temps), size)


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)  # a stage kept elsewhere (--documents DIR...)


def collect_garbage(home: Home, *, dry_run: bool = False) -> dict[str, Any]:
    """Remove what nothing names (``dry_run``: only list it); call under the writer lock. The report:
    the paths, their count and bytes, and whether they were removed."""
    from episteme_core.store.atomic import sweep_temp_files
    from episteme_core.store.sweep import temp_folders

    garbage = find_garbage(home)
    removed = 0
    if not dry_run:
        for point, paths in (("after-blob-delete-one", garbage.blobs), ("after-prune-one", garbage.objects),
                             ("after-bucket-prune-one", garbage.buckets)):
            first = True
            for relative in paths:
                path = Path(relative) if os.path.isabs(relative) else home.root / relative
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                    removed += 1
                    if first:
                        fault(point)  # a kill after the first of each kind: the crash matrix's step
                        first = False
        removed += sweep_temp_files(temp_folders(home))
    return {
        "dryRun": dry_run,
        "blobs": garbage.blobs,
        "objects": garbage.objects,
        "buckets": garbage.buckets,
        "tempFiles": garbage.temp_files,
        "files": len(garbage.paths()),
        "bytes": garbage.bytes,
        "removed": removed,
    }


def describe(data: dict[str, Any]) -> str:
    """One line for people, and the paths on a dry run."""
    counts = (f"{len(data['blobs'])} blob(s), {len(data['objects'])} stage object(s), "
              f"{len(data['buckets'])} bucket(s), {len(data['tempFiles'])} temp file(s): "
              f"{data['bytes']} bytes")
    if data["dryRun"]:
        lines = [f"would remove {counts} (nothing was changed: --dry-run)"]
        lines += [f"  {path}" for key in ("blobs", "objects", "buckets", "tempFiles") for path in data[key]]
        return "\n".join(lines)
    return f"removed {counts}" if data["files"] else "nothing to collect: everything in the home is named"


__all__ = ["Garbage", "collect_garbage", "describe", "find_garbage", "named_blobs"]
