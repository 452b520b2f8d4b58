"""Which sources changed since the documents commit, from the snapshots buckets that changed.

After a full extraction (every source, committed or found unchanged) the writer notes, in
``HOME/extract-base.json``, the documents commit it left, the snapshots commit it read and, per
snapshots bucket, its sha256 and a digest of the source names in it. A later run whose documents
commit is still that one compares the snapshots head's buckets with the noted ones: only the
sources of a changed bucket can have a new latest snapshot or new options, so only those are
looked at (a source whose latest snapshot and options are those its document records is kept).
A bucket that lost a source (its names, less the new ones, differ from those noted) or a change
of the bucket layout sends the run the full way. The note is a cache: it is never part of derived
bytes, and an unreadable or stale one is ignored.

The run's record in the documents head sums, modulo 2^256, a sha256 per source (of its latest
snapshot and options) and per object path, so a run that changed a few sources updates both from
those alone and leaves the value a full run computes.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from typing import Any

from episteme_core.records.canonical import canonical_bytes
from episteme_core.store.home import Home

_OBJECT = re.compile(r"objects/[0-9a-f]{2}/[0-9a-f]{64}\.json")
BASE_NAME = "extract-base.json"
BASE_FORMAT = "episteme-extract-base/1"
MODULUS = 1 << 256


def _h(data: bytes) -> int:
    return int.from_bytes(hashlib.sha256(data).digest(), "big")


def state_term(source: str, latest: str, options: dict[str, Any]) -> int:
    """One source's term of the latest-snapshots sum (its JSON with sorted keys: a pure function of
    the three, and cheap for many sources)."""
    return _h(json.dumps([source, latest, options], sort_keys=True, ensure_ascii=False,
                         separators=(",", ":")).encode("utf-8", "surrogatepass"))


def path_term(path: str) -> int:
    """One object path's term of the objects sum: the sha256 an object's name already is (what the
    stage writes: ``objects/ab/<sha256>.json``), else the sha256 of the path."""
    if _OBJECT.fullmatch(path):
        return int(path[11:75], 16)
    return _h(path.encode("utf-8"))


def as_hex(total: int) -> str:
    return f"{total % MODULUS:064x}"


def from_hex(value: Any) -> int | None:
    """A sum as recorded (64 lowercase hex digits), or None."""
    if not isinstance(value, str) or len(value) != 64 or value.strip("0123456789abcdef"):
        return None
    return int(value, 16)


def sum_of(terms: Iterable[int]) -> str:
    return as_hex(sum(terms))


def names_digest(names: Iterable[str]) -> str:
    """The digest of a bucket's source names (in any order)."""
    return hashlib.sha256("\n".join(sorted(names)).encode("utf-8")).hexdigest()


def read_base(home: Home) -> dict[str, Any] | None:
    """The note of the last full extraction, when well formed; else None."""
    try:
        with open(home.root / BASE_NAME, "rb") as handle:
            note = json.loads(handle.read(4 * 1024 * 1024))
    except (OSError, ValueError, RecursionError):
        return None
    buckets = note.get("buckets") if isinstance(note, dict) else None
    if (not isinstance(note, dict) or note.get("format") != BASE_FORMAT
            or not isinstance(note.get("documents"), str) or not isinstance(note.get("snapshots"), str)
            or not isinstance(buckets, list)
            or not all(isinstance(b, list) and len(b) == 2 and all(isinstance(x, str) for x in b)
                       for b in buckets)):
        return None
    return note


def write_base(home: Home, documents: str, snapshots: str, buckets: list[list[str]]) -> None:
    """Note that the documents commit ``documents`` holds every source of the snapshots commit
    ``snapshots`` as extracted now; ``buckets``: per snapshots bucket [sha256, names digest]."""
    from episteme_core.store.atomic import atomic_write

    atomic_write(home.root / BASE_NAME, canonical_bytes(
        {"format": BASE_FORMAT, "documents": documents, "snapshots": snapshots, "buckets": buckets}))


def bucket_names(catalog: Any) -> list[list[str]] | None:
    """[sha256, names digest] per bucket of a bucketed snapshots catalog read in full; else None."""
    from episteme_core.store.commits import LazyStageIndex, bucket_of

    index = catalog.index
    if not isinstance(index, LazyStageIndex) or "sources" not in index.keyed:
        return None
    count = len(index.buckets)
    names: list[list[str]] = [[] for _ in range(count)]
    for source in catalog.sources():
        names[bucket_of(source, count)].append(source)
    return [[bucket["sha256"], names_digest(names[n])] for n, bucket in enumerate(index.buckets)]


def note_full_run(home: Home, documents: str, catalog: Any) -> None:
    """After a full extraction that left the documents commit ``documents``: the note (skipped for
    a snapshots stage not in buckets, where every run compares every source anyway)."""
    buckets = bucket_names(catalog)
    if buckets is not None and catalog.fingerprint is not None:
        write_base(home, documents, catalog.fingerprint, buckets)


def changed_buckets(home: Home, catalog: Any, documents: str) -> tuple[dict[str, Any], list[int]] | None:
    """(the note, the snapshots buckets changed since it) when the documents commit is the noted one
    and the bucket layout is the same; else None. (However many changed: the work is the changed
    buckets' either way, and a run that changed every bucket reads what the full way reads.)"""
    from episteme_core.store.commits import LazyStageIndex

    index = catalog.index
    note = read_base(home)
    if (note is None or note["documents"] != documents or not isinstance(index, LazyStageIndex)
            or "sources" not in index.keyed or len(note["buckets"]) != len(index.buckets)):
        return None
    return note, [n for n, bucket in enumerate(index.buckets) if bucket["sha256"] != note["buckets"][n][0]]
