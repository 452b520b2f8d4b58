"""A stage: content-addressed objects and the ``index.json`` that commits a set of them.

Objects are written first; ``index.json`` is replaced last and atomically. Readers use only what
``index.json`` names and verify every hash, so a failed writer never leaves a half commit visible.

A large stage (``buckets_from()`` entries or more, 1,024 by default) is committed in two levels
(format ``episteme-stage/2``): ``index.json`` is a small head (the stage's small metadata, the
entry count, and the sha256 of each bucket) and the entries live in buckets under ``buckets/``,
each a content-addressed file holding the entries whose key hashes into it, together with those
keys' values of every large per-key metadata map (a map of that many keys or more). So an
unchanged stage is concluded from the head alone (``read_index`` loads buckets only when entries
or per-key metadata are asked for), and a commit that changes one item writes one bucket and the
head. A smaller stage keeps the one-file layout (format 1), which this module reads as well: a
home written before buckets existed is read as it is and written as buckets at its next commit.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from episteme_core import __version__
from episteme_core.errors import EpistemeError, raise_if_cancelled
from episteme_core.records.canonical import canonical_bytes, loads_strict, sha256_hex
from episteme_core.records.convert import structure, unstructure
from episteme_core.records.stage_index import StageEntry, StageIndex
from episteme_core.store.atomic import atomic_write, flush_pending
from episteme_core.store.faults import fault
from episteme_core.store.home import Home

INDEX_NAME = "index.json"
MAX_INDEX_BYTES = 1024 * 1024 * 1024
BUCKETS_DIR = "buckets"
HEAD_FORMAT = "episteme-stage/2"
BUCKETS_FROM_ENV = "EPISTEME_STAGE_BUCKETS_FROM"
DEFAULT_BUCKETS_FROM = 1024
ENTRIES_PER_BUCKET = 128  # about this many entries per bucket (a power-of-two count of buckets)
MAX_BUCKETS = 4096


def buckets_from() -> int:
    """The entry count from which a stage is committed as a head and buckets
    (``EPISTEME_STAGE_BUCKETS_FROM``, 1 to 1,000,000,000; default 1,024)."""
    raw = os.environ.get(BUCKETS_FROM_ENV)
    if raw is None or raw == "":
        return DEFAULT_BUCKETS_FROM
    if not raw.isdigit() or not 1 <= int(raw) <= 1_000_000_000:
        raise EpistemeError("INVALID_USAGE", f"{BUCKETS_FROM_ENV}={raw!r}: expected a whole number from 1 "
                            "to 1000000000", details={"variable": BUCKETS_FROM_ENV, "value": raw})
    return int(raw)


def bucket_count(items: int, threshold: int) -> int:
    """How many buckets a stage of ``items`` entries (or per-key values) is split into: 0 (one file)
    below ``threshold``, else the least power of two giving at most ``ENTRIES_PER_BUCKET`` each
    (at most ``MAX_BUCKETS``)."""
    if items < threshold:
        return 0
    count = 1
    while count * ENTRIES_PER_BUCKET < items and count < MAX_BUCKETS:
        count *= 2
    return count


def bucket_of(key: str, count: int) -> int:
    """The bucket of ``key`` among ``count``: the CRC-32 of its UTF-8 (the same on every machine and
    in every process, unlike ``hash``), scaled to ``count``."""
    import zlib

    return (zlib.crc32(key.encode("utf-8", "surrogatepass")) * count) >> 32


def head_meta(index: StageIndex) -> Mapping[str, Any]:
    """The metadata a stage's head holds, without loading buckets: all of it for a one-file index;
    for a bucketed one, everything but the per-key maps kept in its buckets (``keyed_fields``)."""
    if isinstance(index, LazyStageIndex):
        return index.head_meta
    return index.meta


def keyed_fields(index: StageIndex) -> tuple[str, ...]:
    """The metadata fields a bucketed index keeps in its buckets (absent from ``head_meta``)."""
    return index.keyed if isinstance(index, LazyStageIndex) else ()


def entry_count(index: StageIndex) -> int:
    """How many entries ``index`` names, without loading buckets."""
    return index.count if isinstance(index, LazyStageIndex) else len(index.entries)


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
        # (fingerprint, object paths it no longer names) of this object's last commit, when the
        # commit before it was known in full; ``prune`` then deletes those instead of walking
        self._dropped: tuple[str, set[str]] | None = None

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

    def put_pieces(self, key: str, pieces: Iterable[bytes | memoryview], suffix: str = "") -> StageEntry:
        """``put_bytes`` of the pieces joined, never holding them joined: each is hashed and written
        to a temp file in ``objects/`` as it comes, then the file is renamed to its address (or
        dropped, when an object of those bytes is already stored)."""
        from episteme_core.store.atomic import write_addressed

        digest, length = write_addressed(self.dir / "objects", pieces, suffix, kind="object-write")
        return StageEntry(key=key, sha256=digest, bytes=length, path=f"objects/{digest[:2]}/{digest}{suffix}")

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
        before = self._known_paths()
        full = dict(meta or {})
        draft = StageIndex(stage=self.name, episteme_version=__version__, entries=ordered, meta=full)
        threshold = buckets_from()
        sizes = [len(ordered)] + [len(v) for v in full.values() if isinstance(v, dict)]
        count = bucket_count(max(sizes), threshold)
        buckets: list[dict[str, Any]] = []
        keyed: tuple[str, ...] = ()
        if count == 0:
            data, digest = encode_index(draft)
        else:
            keyed = tuple(sorted(k for k, v in full.items() if isinstance(v, dict) and len(v) >= threshold))
            buckets = self._write_buckets(ordered, full, keyed, count)
            data, digest = _encode_head(self.name, __version__, draft.schema_version, len(ordered), buckets,
                                        keyed, {k: v for k, v in full.items() if k not in keyed},
                                        {field: len(full[field]) for field in keyed})
        index: StageIndex = attrs.evolve(draft, fingerprint=digest)
        if count:  # a bucketed commit reads as one read from its head: its buckets known, loaded
            keyed_counts = {field: len(full[field]) for field in keyed}
            index = LazyStageIndex.of_head(
                stage=self.name, episteme_version=__version__, schema_version=draft.schema_version,
                fingerprint=digest, head_meta={k: v for k, v in full.items() if k not in keyed}, keyed=keyed,
                count=len(ordered), bucket_bytes=sum(bucket["bytes"] for bucket in buckets),
                loader=lambda: (ordered, full), buckets=buckets, keyed_counts=keyed_counts)
            index.load()
        flush_pending()  # every object and bucket the index names is durable before the index changes
        if not self._committed_as(data):  # an index that would not change is not written again
            atomic_write(self.index_path, data, kind="index-write")
            flush_pending()
        self._prune_buckets({bucket["sha256"] for bucket in buckets})
        _remember(data, index, len(data) + sum(bucket["bytes"] for bucket in buckets))
        self._dropped = None if before is None else (digest, before - {entry.path for entry in ordered})
        return index

    def _known_paths(self) -> set[str] | None:
        """The object paths the committed index names, when this process holds that commit with
        its entries read (the drivers read them before a commit that changes anything); else None."""
        try:
            raw = self.index_path.read_bytes()
        except OSError:
            return None
        known = _recall(raw, self.name)
        if known is None or (isinstance(known, LazyStageIndex) and known._entries is None):
            return None
        return {entry.path for entry in known.entries}

    def bucket_path(self, sha256: str) -> Path:
        return self.dir / BUCKETS_DIR / f"{sha256}.json"

    def _write_buckets(self, ordered: list[StageEntry], meta: dict[str, Any], keyed: tuple[str, ...],
                       count: int) -> list[dict[str, Any]]:
        """Split the entries and the ``keyed`` maps into ``count`` buckets and write each one that
        is not stored yet; a bucket equal to one this process read or wrote keeps its file without
        being encoded again. Returns the head's bucket list."""
        groups: list[tuple[list[StageEntry], dict[str, dict[str, Any]]]] = [
            ([], {field: {} for field in keyed}) for _ in range(count)]
        where: dict[str, int] = {}  # the per-key maps mostly share the entries' keys
        for entry in ordered:
            number = where[entry.key] = bucket_of(entry.key, count)
            groups[number][0].append(entry)
        for field in keyed:
            values = meta[field]
            for key in sorted(values):
                number = where.get(key, -1)
                if number < 0:
                    number = where[key] = bucket_of(key, count)
                groups[number][1][field][key] = values[key]
        known = _BUCKET_MEMO.get(str(self.dir))
        same_layout = known is not None and known[0] == count and known[1] == keyed
        described: list[dict[str, Any]] = []
        for number, (entries, values) in enumerate(groups):
            if same_layout:
                assert known is not None
                old_entries, old_values, old = known[2][number]
                if (old_entries == entries and old_values == values
                        and self.bucket_path(old["sha256"]).is_file()):
                    described.append(old)
                    continue
            data = _canonical({"entries": [_entry_dict(e) for e in entries], "meta": values})
            digest = sha256_hex(data)
            path = self.bucket_path(digest)
            if not path.is_file():
                atomic_write(path, data, kind="bucket-write")
            described.append({"bytes": len(data), "count": len(entries), "sha256": digest})
        _memo(str(self.dir), count, keyed,
              [(entries, values, described[n]) for n, (entries, values) in enumerate(groups)])
        return described

    def _prune_buckets(self, keep: set[str]) -> None:
        """Delete bucket files the new commit does not name (only once it is durable)."""
        try:
            names = os.listdir(self.dir / BUCKETS_DIR)
        except OSError:
            return
        removed = 0
        for name in sorted(names):
            if name.startswith(".") or not name.endswith(".json") or name[:-5] in keep:
                continue
            with contextlib.suppress(FileNotFoundError, IsADirectoryError):
                os.unlink(self.dir / BUCKETS_DIR / name)
                removed += 1
                if removed == 1:
                    fault("after-bucket-prune-one")

    def _committed_as(self, data: bytes) -> bool:
        """Whether ``index.json`` already holds exactly ``data``."""
        try:
            if self.index_path.stat().st_size != len(data):
                return False
            return self.index_path.read_bytes() == data
        except OSError:
            return False

    def prune(self, index: StageIndex) -> int:
        """Delete objects the committed ``index`` no longer names (only after the commit).

        After a commit made here over a commit known in full, only the objects it dropped are
        deleted (none when it dropped nothing), without walking the objects folder; otherwise the
        folder is walked. Objects a killed prune left are removed by the next writer
        (``sweep.recover_home``, when it takes over the killed writer's lock)."""
        dropped = self._dropped
        if dropped is not None and dropped[0] == index.fingerprint:
            removed = 0
            for relative in sorted(dropped[1]):
                if relative.startswith("/") or ".." in relative.split("/"):
                    continue  # never outside the stage (a verified index names none such)
                with contextlib.suppress(FileNotFoundError, IsADirectoryError):
                    os.unlink(self.dir / relative)
                    removed += 1
                    if removed == 1:
                        fault("after-prune-one")
            return removed
        return self.prune_walking(index)

    def prune_walking(self, index: StageIndex) -> int:
        """Delete every object file ``index`` does not name, walking the objects folder."""
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

    def read_index(self, *, eager: bool = False) -> StageIndex | None:
        """The committed index, verified; ``None`` when the stage was never committed.

        A bucketed index is returned from its verified head: its buckets are read (each checked
        against the sha256 the head names) when its entries or per-key metadata are first asked
        for, and a fault there is ``INVALID_INPUT`` naming the bucket. ``eager`` reads and checks
        every bucket now, trusting nothing this process remembers (``verify``)."""
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
        known = None if eager else _recall(raw, self.name)
        if known is not None:
            return known
        if raw.startswith(b'{"buckets":'):
            lazy = self._read_head(raw)
            if eager:
                lazy.load()
            _remember(raw, lazy, len(raw) + lazy.bucket_bytes)
            return lazy
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

    def _read_head(self, raw: bytes) -> LazyStageIndex:
        """A bucketed index from its head's bytes: the head verified now, the buckets on demand."""
        import json

        source = str(self.index_path)

        def bad(why: str) -> EpistemeError:
            return EpistemeError("INVALID_INPUT", f"{source}: {why} (tampered or corrupt)",
                                 details={"path": source})

        try:
            head = json.loads(raw)
        except (ValueError, RecursionError):
            raise bad("not valid JSON") from None
        if (not isinstance(head, dict) or set(head) - {"keyedCounts"} != _HEAD_KEYS
                or head.get("format") != HEAD_FORMAT):
            raise bad(f"not a stage head of format {HEAD_FORMAT}")
        claimed = head.pop("fingerprint")
        if not isinstance(claimed, str) or sha256_hex(_canonical(head)) != claimed:
            raise bad("fingerprint does not match its content")
        if head["stage"] != self.name:
            raise EpistemeError("INVALID_INPUT", f"{source}: is the index of stage {head['stage']!r}, not "
                                f"{self.name!r}", details={"path": source})
        buckets, keyed, meta, count = head["buckets"], head["keyed"], head["meta"], head["count"]
        counts = head.get("keyedCounts")  # absent in heads written before it was kept
        if (not isinstance(buckets, list) or not all(_bucket_ok(b) for b in buckets)
                or not isinstance(keyed, list) or not all(isinstance(k, str) for k in keyed)
                or (counts is not None and (not isinstance(counts, dict) or set(counts) != set(keyed)
                                            or not all(type(n) is int and n >= 0 for n in counts.values())))
                or not isinstance(meta, dict) or set(keyed) & set(meta) or type(count) is not int
                or sum(b["count"] for b in buckets) != count
                or not all(isinstance(head[k], str) for k in ("epistemeVersion", "schemaVersion"))):
            raise bad("malformed head")
        return LazyStageIndex.of_head(
            stage=self.name, episteme_version=head["epistemeVersion"], schema_version=head["schemaVersion"],
            fingerprint=claimed, head_meta=meta, keyed=tuple(keyed), count=count,
            bucket_bytes=sum(bucket["bytes"] for bucket in buckets),
            loader=lambda: self._load_buckets(buckets, tuple(keyed), meta), buckets=buckets,
            keyed_counts=counts)

    def _load_buckets(self, buckets: list[dict[str, Any]], keyed: tuple[str, ...], meta: dict[str, Any]
                      ) -> tuple[list[StageEntry], dict[str, Any]]:
        """Every bucket of a head, each checked against its sha256: the entries in key order, and
        the metadata with its per-key maps put back together (keys in order)."""

        from episteme_core.records.gcpause import paused_cycle_gc

        entries: list[StageEntry] = []
        maps: dict[str, dict[str, Any]] = {field: {} for field in keyed}
        groups: list[tuple[list[StageEntry], dict[str, dict[str, Any]], dict[str, Any]]] = []
        with paused_cycle_gc():  # many small containers and no cycle
            for number, bucket in enumerate(buckets):
                own, values = self._read_bucket(bucket, keyed, number, len(buckets))
                entries.extend(own)
                for field in keyed:
                    maps[field].update(values[field])
                groups.append((own, values, bucket))
            entries.sort(key=lambda e: e.key)
            for before, after in zip(entries, entries[1:], strict=False):
                if before.key == after.key:
                    raise EpistemeError("INVALID_INPUT", f"{self.index_path}: two entries share the key "
                                        f"{after.key!r}", details={"path": str(self.index_path)})
            full = dict(meta)
            for field in keyed:
                full[field] = {key: maps[field][key] for key in sorted(maps[field])}
        _memo(str(self.dir), len(buckets), keyed, groups)
        return entries, dict(sorted(full.items()))

    # one bucket at a time ------------------------------------------------------------------------

    def bucket(self, index: LazyStageIndex, number: int) -> tuple[list[StageEntry], dict[str, Any]]:
        """Bucket ``number`` of a bucketed ``index`` alone, verified: its entries in key order and its
        share of each keyed map (remembered by sha256, so read once per process). Treat as read-only."""
        record = index.buckets[number]
        found = _BUCKET_CACHE.get((str(self.dir), record["sha256"]))
        if found is None:
            found = self._read_bucket(record, index.keyed, number, len(index.buckets))
            _cache_bucket((str(self.dir), record["sha256"]), found)
        return found

    def lookup(self, index: StageIndex, keys: Iterable[str], fields: Iterable[str] = ()
               ) -> tuple[dict[str, StageEntry], dict[str, dict[str, Any]]]:
        """The entries of ``keys`` (those committed) and their values in each per-key map ``fields``
        of the metadata: of a bucketed index only the buckets those keys fall in are read."""
        wanted = set(keys)
        names = tuple(fields)
        values: dict[str, dict[str, Any]] = {field: {} for field in names}
        if isinstance(index, LazyStageIndex) and index._entries is None:
            found: dict[str, StageEntry] = {}
            count = len(index.buckets)
            for number in sorted({bucket_of(key, count) for key in wanted}):
                entries, keyed = self.bucket(index, number)
                found.update((e.key, e) for e in entries if e.key in wanted)
                for field in names:
                    own = keyed[field] if field in keyed else index.head_meta.get(field)
                    if isinstance(own, dict):
                        values[field].update((k, own[k]) for k in wanted if k in own)
            return found, values
        found = {e.key: e for e in index.entries if e.key in wanted}
        for field in names:
            own = index.meta.get(field)
            if isinstance(own, dict):
                values[field] = {k: own[k] for k in wanted if k in own}
        return found, values

    def commit_changes(self, base: StageIndex | None, *, head: dict[str, Any], fields: Iterable[str] = (),
                       put: Iterable[StageEntry] = (), drop: Iterable[str] = (),
                       values: Mapping[str, Mapping[str, Any]] | None = None) -> StageIndex:
        """Commit ``base`` changed, as ``commit`` would commit the whole (the same bytes): the entries
        ``put`` (new, or replacing their key's), the keys ``drop`` (their entries and their values in
        every per-key map gone), in each per-key map of ``fields`` the ``values`` set, and ``head``
        as the rest of the metadata. Objects must already be written.

        When ``base`` is bucketed and keeps its layout (the number of buckets and the keyed fields,
        which are ``fields``), only the buckets the changed keys fall in are read and rewritten, then
        the head; the others are carried over as they are. Otherwise the whole is read and
        committed. ``prune`` then deletes the objects the changed keys named and no longer do (in
        the carried-over case from the changed buckets alone: each object's bytes name its key, as a
        snapshot record, a document and a chunks object do, so no other key names it)."""
        raise_if_cancelled()
        names = tuple(sorted(set(fields)))
        changes = {field: dict((values or {}).get(field) or {}) for field in names}
        placed = {entry.key: entry for entry in put}
        gone = set(drop) - set(placed)
        if (isinstance(base, LazyStageIndex) and base.keyed_counts is not None and base.keyed == names
                and names and not (set(head) & set(names))):
            done = self._commit_buckets(base, head, names, placed, gone, changes)
            if done is not None:
                return done
        entries = {entry.key: entry for entry in base.entries} if base is not None else {}
        meta: dict[str, Any] = dict(head)
        for field in names:
            meta[field] = dict((base.meta.get(field) or {}) if base is not None else {})
        for key in gone:
            entries.pop(key, None)
            for field in names:
                meta[field].pop(key, None)
        entries.update(placed)
        for field in names:
            meta[field].update(changes[field])
        return self.commit(entries.values(), meta)

    def _commit_buckets(self, base: LazyStageIndex, head: dict[str, Any], names: tuple[str, ...],
                        placed: dict[str, StageEntry], gone: set[str], changes: dict[str, dict[str, Any]]
                        ) -> StageIndex | None:
        """``commit_changes`` over the changed buckets alone; None when the layout would change."""
        count = len(base.buckets)
        touched: dict[int, tuple[dict[str, StageEntry], dict[str, dict[str, Any]]]] = {}
        for key in (*placed, *gone, *(k for field in names for k in changes[field])):
            number = bucket_of(key, count)
            if number not in touched:
                listed, shares = self.bucket(base, number)
                touched[number] = ({e.key: e for e in listed}, {f: dict(shares[f]) for f in names})
        entry_total = base.count
        sizes = dict(base.keyed_counts or {})
        dropped: set[str] = set()
        for number, (entries, keyed) in touched.items():
            old_paths = {e.path for e in entries.values()}
            before = len(entries), {f: len(keyed[f]) for f in names}
            for key in gone:
                if bucket_of(key, count) == number:
                    entries.pop(key, None)
                    for field in names:
                        keyed[field].pop(key, None)
            for key, entry in placed.items():
                if bucket_of(key, count) == number:
                    entries[key] = entry
            for field in names:
                for key, value in changes[field].items():
                    if bucket_of(key, count) == number:
                        keyed[field][key] = value
            entry_total += len(entries) - before[0]
            for field in names:
                sizes[field] += len(keyed[field]) - before[1][field]
            dropped |= old_paths - {e.path for e in entries.values()}
        threshold = buckets_from()
        small = [len(v) for v in head.values() if isinstance(v, dict)]
        if (bucket_count(max([entry_total, *sizes.values(), *small]), threshold) != count
                or any(n < threshold for n in sizes.values()) or any(n >= threshold for n in small)):
            return None  # the layout changes: the whole is committed
        buckets = list(base.buckets)
        for number in sorted(touched):
            by_key, keyed = touched[number]
            ordered = [by_key[key] for key in sorted(by_key)]
            data = _canonical({"entries": [_entry_dict(e) for e in ordered], "meta": keyed})
            digest = sha256_hex(data)
            path = self.bucket_path(digest)
            if not path.is_file():
                atomic_write(path, data, kind="bucket-write")
            buckets[number] = {"bytes": len(data), "count": len(ordered), "sha256": digest}
            _cache_bucket((str(self.dir), digest), (ordered, keyed))
        schema_version = StageIndex(stage=self.name, episteme_version=__version__, entries=[]).schema_version
        data, digest = _encode_head(self.name, __version__, schema_version, entry_total, buckets, names,
                                    head, sizes)
        flush_pending()  # every bucket the head names is durable before the head changes
        if not self._committed_as(data):
            atomic_write(self.index_path, data, kind="index-write")
            flush_pending()
        self._prune_buckets({bucket["sha256"] for bucket in buckets})
        _BUCKET_MEMO.pop(str(self.dir), None)  # a later full commit encodes its buckets afresh
        index = LazyStageIndex.of_head(
            stage=self.name, episteme_version=__version__, schema_version=schema_version, fingerprint=digest,
            head_meta=dict(head), keyed=names, count=entry_total,
            bucket_bytes=sum(bucket["bytes"] for bucket in buckets),
            loader=lambda: self._load_buckets(buckets, names, dict(head)), buckets=buckets,
            keyed_counts=sizes)
        _remember(data, index, len(data) + index.bucket_bytes)
        self._dropped = (digest, dropped)
        return index

    def _read_bucket(self, bucket: dict[str, Any], keyed: tuple[str, ...], number: int, count: int
                     ) -> tuple[list[StageEntry], dict[str, Any]]:
        """Bucket ``number`` of the ``count`` a head names, checked against its sha256 and that each
        key in it belongs there: its entries (in key order) and its share of each keyed map."""
        import json

        path = self.bucket_path(bucket["sha256"])
        where = str(path)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise EpistemeError("INVALID_INPUT", f"{where}: named by {self.index_path} but missing",
                                details={"path": where}) from None
        if len(data) != bucket["bytes"] or sha256_hex(data) != bucket["sha256"]:
            raise EpistemeError(
                "INVALID_INPUT", f"{where}: does not match the sha256 in {self.index_path} "
                "(tampered or corrupt)", details={"path": where})
        try:
            body = json.loads(data)
            own = [StageEntry(key=e["key"], sha256=e["sha256"], bytes=e["bytes"], path=e["path"])
                   for e in body["entries"]]
            values = body["meta"]
            ok = (set(body) == {"entries", "meta"} and isinstance(values, dict)
                  and set(values) == set(keyed) and all(isinstance(values[f], dict) for f in keyed)
                  and len(own) == bucket["count"] and all(_entry_ok(e) for e in own)
                  and all(a.key < b.key for a, b in zip(own, own[1:], strict=False))
                  and all(bucket_of(e.key, count) == number for e in own)
                  and all(bucket_of(k, count) == number for f in keyed for k in values[f]))
        except (ValueError, KeyError, TypeError, RecursionError):
            ok = False
        if not ok:
            raise EpistemeError("INVALID_INPUT", f"{where}: not a bucket of {self.index_path}",
                                details={"path": where})
        return own, values

    def object_path(self, entry: StageEntry) -> Path:
        relative = entry.path  # checked as text: a Path's parts cost more than the read they guard
        if relative.startswith("/") or ".." in relative.split("/"):
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


class LazyStageIndex(StageIndex):
    """A bucketed stage's commit read from its head: ``entries`` and ``meta`` load every bucket
    (verified) on first use; ``head_meta``, ``count``, ``keyed`` and ``fingerprint`` need none."""

    __slots__ = ("_entries", "_meta", "_loader", "head_meta", "keyed", "count", "bucket_bytes", "buckets",
                 "keyed_counts")
    _entries: list[StageEntry] | None
    _meta: dict[str, Any] | None
    _loader: Callable[[], tuple[list[StageEntry], dict[str, Any]]]
    head_meta: dict[str, Any]
    keyed: tuple[str, ...]
    count: int
    bucket_bytes: int  # the size of every bucket together (what loading reads)
    buckets: list[dict[str, Any]]  # the head's bucket list: sha256, bytes and entry count of each
    keyed_counts: dict[str, int] | None  # keys per keyed field (None: a head written before it was kept)

    @classmethod
    def of_head(cls, *, stage: str, episteme_version: str, schema_version: str, fingerprint: str,
                head_meta: dict[str, Any], keyed: tuple[str, ...], count: int, bucket_bytes: int,
                loader: Callable[[], tuple[list[StageEntry], dict[str, Any]]],
                buckets: list[dict[str, Any]], keyed_counts: dict[str, int] | None) -> LazyStageIndex:
        index = object.__new__(cls)
        for name, value in (("stage", stage), ("episteme_version", episteme_version),
                            ("schema_version", schema_version), ("fingerprint", fingerprint),
                            ("head_meta", head_meta), ("keyed", keyed), ("count", count),
                            ("bucket_bytes", bucket_bytes), ("buckets", buckets),
                            ("keyed_counts", keyed_counts),
                            ("_loader", loader), ("_entries", None), ("_meta", None)):
            object.__setattr__(index, name, value)
        return index

    def load(self) -> None:
        """Read and verify every bucket (once)."""
        if self._entries is None:
            entries, meta = self._loader()
            object.__setattr__(self, "_entries", entries)
            object.__setattr__(self, "_meta", meta)

    @property  # type: ignore[override]
    def entries(self) -> list[StageEntry]:
        self.load()
        assert self._entries is not None
        return self._entries

    @property  # type: ignore[override]
    def meta(self) -> dict[str, Any]:
        self.load()
        assert self._meta is not None
        return self._meta


_HEAD_KEYS = {"buckets", "count", "epistemeVersion", "fingerprint", "format", "keyed", "meta",
              "schemaVersion", "stage"}
# The buckets this process last read or wrote per stage directory: (count, keyed fields, per bucket
# its entries, its per-key values and its head record). A commit whose bucket equals one of them
# names that bucket's file again without encoding it (bucket files are content-addressed, so the
# record always describes the file's bytes). Callers treat a StageIndex and the meta they commit
# as read-only, as for ``_KNOWN``.
_BUCKET_MEMO: dict[str, tuple[int, tuple[str, ...], list[tuple[list[StageEntry], dict[str, Any],
                                                                dict[str, Any]]]]] = {}
_BUCKET_MEMO_STAGES = 16


def _memo(directory: str, count: int, keyed: tuple[str, ...],
          groups: list[tuple[list[StageEntry], dict[str, Any], dict[str, Any]]]) -> None:
    _BUCKET_MEMO.pop(directory, None)
    _BUCKET_MEMO[directory] = (count, keyed, groups)
    while len(_BUCKET_MEMO) > _BUCKET_MEMO_STAGES:
        del _BUCKET_MEMO[next(iter(_BUCKET_MEMO))]


# Buckets this process read or wrote, by (stage directory, sha256): content-addressed, so never
# stale; a pipeline's capture and extract read the same changed bucket of snapshots once.
_BUCKET_CACHE: dict[tuple[str, str], tuple[list[StageEntry], dict[str, Any]]] = {}
_BUCKET_CACHE_SIZE = 256


def _cache_bucket(key: tuple[str, str], content: tuple[list[StageEntry], dict[str, Any]]) -> None:
    _BUCKET_CACHE.pop(key, None)
    _BUCKET_CACHE[key] = content
    while len(_BUCKET_CACHE) > _BUCKET_CACHE_SIZE:
        del _BUCKET_CACHE[next(iter(_BUCKET_CACHE))]


def _entry_dict(entry: StageEntry) -> dict[str, Any]:
    return {"bytes": entry.bytes, "key": entry.key, "path": entry.path, "sha256": entry.sha256}


def _encode_head(stage: str, version: str, schema_version: str, count: int, buckets: list[dict[str, Any]],
                 keyed: tuple[str, ...], meta: dict[str, Any], keyed_counts: dict[str, int]
                 ) -> tuple[bytes, str]:
    """A head's canonical bytes with its fingerprint (the sha256 of the head without it)."""
    head = {"buckets": buckets, "count": count, "epistemeVersion": version, "format": HEAD_FORMAT,
            "keyed": list(keyed), "keyedCounts": keyed_counts, "meta": meta, "schemaVersion": schema_version,
            "stage": stage}
    digest = sha256_hex(_canonical(head))
    return _canonical({**head, "fingerprint": digest}), digest


def _bucket_ok(bucket: Any) -> bool:
    return (isinstance(bucket, dict) and set(bucket) == {"bytes", "count", "sha256"}
            and type(bucket["bytes"]) is int and type(bucket["count"]) is int and bucket["count"] >= 0
            and isinstance(bucket["sha256"], str) and len(bucket["sha256"]) == 64
            and all(c in "0123456789abcdef" for c in bucket["sha256"]))


_FINGERPRINT_FIELD = b',"fingerprint":"'
# Indexes this process wrote or verified, by the sha256 of their bytes (content-addressed, so never
# stale): a command whose stages read the same index again (pipeline: extract commits what chunk
# reads) parses it once. Callers treat a StageIndex as read-only. Bounded by the bytes it stands for.
_KNOWN: dict[str, tuple[int, StageIndex]] = {}
_KNOWN_BYTES = 256 * 1024 * 1024


def forget_process_memory() -> None:
    """Drop what this process remembers of stage indexes and buckets: the next read sees only the
    files, as a new process would (tests and laws that compare a read with a fresh one)."""
    _KNOWN.clear()
    _BUCKET_MEMO.clear()
    _BUCKET_CACHE.clear()


def _recall(raw: bytes, stage: str) -> StageIndex | None:
    import hashlib

    found = _KNOWN.get(hashlib.sha256(raw).hexdigest())
    return found[1] if found is not None and found[1].stage == stage else None


def _remember(raw: bytes, index: StageIndex, size: int | None = None) -> None:
    """Keep ``index`` by the sha256 of ``raw``; ``size`` is the bytes it stands for (a head's
    buckets count too: a loaded bucketed index holds them all)."""
    import hashlib

    size = len(raw) if size is None else size
    if size > _KNOWN_BYTES:
        return
    _KNOWN[hashlib.sha256(raw).hexdigest()] = (size, index)
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
    from episteme_core.records.gcpause import paused_cycle_gc

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
