"""``episteme manual-ingest``: local files recorded as the representation of a URL (capture kind ``file``).

All-or-nothing: every map entry is checked (a regular file inside the root, within ``--max-bytes``)
before anything is written. Files are streamed into the blob store, never held in memory.

Re-runs cost what changed: a file whose size, mtime, ctime and inode are those recorded when it was
last hashed (``capture.statcache``) is not read again, and when it is still its source's latest
snapshot nothing else is done for it. ``rehash`` reads every file.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from episteme_core.capture.manifest import MapEntry
from episteme_core.capture.run import ProgressFn, RunReport, SourceResult, WarnFn, charset_warnings, finish
from episteme_core.errors import EpistemeError
from episteme_core.records.inputs import open_regular
from episteme_core.records.storage import SnapshotIdentity
from episteme_core.stages.snapshots import SnapshotWriter, file_digest
from episteme_core.store.home import Home

if TYPE_CHECKING:
    from episteme_core.capture.statcache import StatCache

DEFAULT_CONTENT_TYPE = "application/octet-stream"
# A fixed table (not the system's mime.types) so a snapshot id is the same on every machine.
CONTENT_TYPES = {
    ".html": "text/html", ".htm": "text/html", ".xhtml": "application/xhtml+xml",
    ".txt": "text/plain", ".text": "text/plain", ".md": "text/markdown", ".markdown": "text/markdown",
    ".pdf": "application/pdf", ".xml": "application/xml", ".json": "application/json",
    ".csv": "text/csv", ".rst": "text/x-rst",
}
_TEXT_SAMPLE = 1 << 20


def content_type_for(entry: MapEntry) -> tuple[str, str | None]:
    """The map's ``contentType`` (split into type and charset), else a guess from the extension."""
    return media_of(entry.content_type, entry.local_path)


def media_of(content_type: str | None, local_path: str) -> tuple[str, str | None]:
    """``content_type_for`` of an entry with this ``contentType`` and ``localPath``."""
    if content_type:
        from episteme_core.capture.http import parse_content_type

        media, charset = parse_content_type(content_type)
        return media or DEFAULT_CONTENT_TYPE, charset
    return CONTENT_TYPES.get(_suffix(local_path).lower(), DEFAULT_CONTENT_TYPE), None


def _suffix(local_path: str) -> str:
    """``PurePosixPath(local_path).suffix`` without building a path (a map may name many files)."""
    name = local_path.rstrip("/").rpartition("/")[2]
    dot = name.rfind(".")
    return name[dot:] if 0 < dot < len(name) - 1 else ""


def check_file(
    root: Path, entry: MapEntry, max_bytes: int, what: str = "map", *, confine_absolute: bool = True,
    resolved: dict[str, str] | None = None,
) -> tuple[str, int, os.stat_result]:
    """The file of ``entry`` (its path, size and stat): a regular file within ``max_bytes``, or a
    named error.

    A relative ``localPath`` must stay inside ``root``. An absolute one is taken as written (the map
    is the user's own, like a file argument) unless ``confine_absolute`` (``--root`` was given):
    then it must lie inside ``root`` as well. Symlinks and anything but a regular file are refused.
    ``resolved`` caches the real path of each folder (a map of many files in few folders resolves
    each folder once).
    """
    absolute = entry.local_path.startswith("/")  # PurePosixPath(...).is_absolute()
    path = entry.local_path if absolute else _joined(root, entry.local_path)
    where = f"{what}[{entry.index}].localPath"
    details = {"entry": entry.index, "field": "localPath", "path": path}
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise EpistemeError("INVALID_INPUT", f"{where}: {path}: no such file", details=details) from None
    except OSError as exc:
        raise EpistemeError("INVALID_INPUT", f"{where}: {path}: {exc.strerror}", details=details) from None
    if stat.S_ISLNK(info.st_mode):
        raise EpistemeError("INVALID_INPUT", f"{where}: {path} is a symlink (not followed)", details=details)
    if stat.S_ISDIR(info.st_mode):
        raise EpistemeError("INVALID_INPUT", f"{where}: {path} is a directory", details=details)
    if not stat.S_ISREG(info.st_mode):
        raise EpistemeError(
            "INVALID_INPUT", f"{where}: {path} is not a regular file (device, fifo or socket)",
            details=details,
        )
    if not absolute or confine_absolute:
        real_root = _real(str(root), resolved)
        folder, _, name = path.rpartition("/")
        real_path = _real(folder or "/", resolved).rstrip("/") + "/" + name  # the file is no symlink
        if real_path != real_root and not real_path.startswith(real_root.rstrip("/") + "/"):
            how = "is outside --root" if absolute else "leaves the root through a symlinked folder"
            raise EpistemeError(
                "INVALID_INPUT", f"{where}: {path} {how} {real_root}",
                details={**details, "root": real_root},
            )
    if info.st_size > max_bytes:
        raise EpistemeError(
            "LIMIT_EXCEEDED", f"{where}: {path} is {info.st_size} bytes, more than --max-bytes {max_bytes}",
            details={**details, "bytes": info.st_size, "limit": max_bytes},
            hint="raise --max-bytes if this file is expected",
        )
    return path, info.st_size, info


def _joined(root: Path, local_path: str) -> str:
    """``str(root / local_path)`` without building a path object (a map may name many files)."""
    base = str(root)
    if ("//" in local_path or local_path.endswith(("/", "/.")) or "/./" in local_path
            or local_path.startswith("./") or local_path in ("", ".") or base == "."):
        return str(root / local_path)  # pathlib's normalisation of odd spellings
    return f"{base}/{local_path}" if base != "/" else f"/{local_path}"


def _real(folder: str, cache: dict[str, str] | None) -> str:
    """``os.path.realpath(folder)``, once per folder when a cache is given."""
    if cache is None:
        return os.path.realpath(folder)
    found = cache.get(folder)
    if found is None:
        found = cache[folder] = os.path.realpath(folder)
    return found


def read_map_of(home: Home, path: str, *, max_input_bytes: int, max_sources: int,
                rehash: bool = False) -> tuple[Sequence[MapEntry], StatCache]:
    """A manual-ingest map, read bounded and parsed strictly (``manifest.parse_map``), through the
    home's stat cache (an unchanged map is not parsed again), and the cache to hand to
    ``manual_ingest``. Read before taking the lock; nothing is written."""
    from episteme_core.capture.manifest import parse_map
    from episteme_core.capture.statcache import StatCache
    from episteme_core.records.inputs import read_input

    data = read_input(path, max_input_bytes)
    stats = StatCache(home, trust=not rehash)
    entries = stats.parsed_map(data, max_sources)
    if entries is None:
        entries = parse_map(data, source="stdin" if path == "-" else path, max_sources=max_sources)
        stats.keep_map(data, entries)
    return entries, stats


def manual_ingest(
    home: Home,
    entries: Sequence[MapEntry],
    root: Path,
    *,
    max_bytes: int,
    progress: ProgressFn | None = None,
    warn: WarnFn | None = None,
    command: str = "manual-ingest",
    confine_absolute: bool = True,
    rehash: bool = False,
    stats: StatCache | None = None,
    list_unchanged: bool = True,
) -> RunReport:
    """Ingest every map entry (call inside ``with ctx.writing():``); a bad entry fails the whole run.

    ``confine_absolute=False`` (``manual-ingest`` without ``--root``) accepts absolute paths anywhere.
    ``rehash`` hashes every file, trusting no recorded stat; ``stats`` is the cache ``read_map_of``
    returned with the entries (else the home's is read here). ``list_unchanged=False`` leaves the
    rows of unchanged sources out of the report (they are counted): a re-run over a large map then
    costs a stat and a lookup per unchanged file, and its report stays small.
    """
    from episteme_core.capture.statcache import StatCache

    report = progress or (lambda *a: None)
    folders: dict[str, str] = {}
    total = len(entries)
    results: list[SourceResult] = []
    unlisted = 0
    stats = stats if stats is not None else StatCache(home, trust=not rehash)
    seen: list[tuple[str, list[str | None], str | None, str]] = []  # (path, identity, fragment, id)
    with SnapshotWriter(home, command) as writer:
        blob_root = str(writer.blobs.root)
        head = writer.catalog.fingerprint  # from the stage head alone
        rest: Sequence[MapEntry] = entries
        confirmed: list[tuple[str, str]] = []
        if not list_unchanged:  # the files confirmed unchanged, in one pass: a stat and a lookup each
            rest, confirmed = _confirmed_pass(stats, head, entries, root, max_bytes, confine_absolute,
                                              folders, blob_root)
            unlisted = len(confirmed)
            if confirmed:
                report("manual-ingest", unlisted, total, "completed", f"{unlisted} unchanged")
        checked = [(entry, *check_file(root, entry, max_bytes, confine_absolute=confine_absolute,
                                       resolved=folders)) for entry in rest]
        for number, (entry, path, _size, info) in enumerate(checked, start=unlisted + 1):
            report("manual-ingest", number - 1, total, "started", entry.source_url)
            media, charset = content_type_for(entry)
            if not charset and not list_unchanged:
                known = _still_latest(writer, stats, blob_root, entry, path, info, media, head)
                if known is not None:  # still its source's latest: held by the stage, so not forgotten
                    unlisted += 1  # a stat, a lookup: the file and its source are as last recorded
                    seen.append((path, [entry.source_url, media, None], entry.fragment or None, known))
                    report("manual-ingest", number, total, "completed", f"{entry.source_url}: unchanged")
                    continue
            refused = writer.refusal(entry.source_url)
            if refused is not None:  # forgotten: never read, never stored
                results.append(SourceResult(entry=entry.index, source=entry.source_url, status="failed",
                                            code=refused.code, message=refused.message,
                                            local_path=entry.local_path))
                if warn is not None:
                    warn("FORGOTTEN_REFUSED", refused.message, source=entry.source_url)
                report("manual-ingest", number, total, "failed", f"{entry.source_url}: forgotten")
                continue
            result = _ingest_one(writer, stats, entry, path, info, media, charset, max_bytes, warn)
            if result.snapshot_id is not None:
                seen.append((path, [entry.source_url, media, charset], entry.fragment or None,
                             result.snapshot_id))
            if result.status != "unchanged" or list_unchanged:
                results.append(result)
            else:
                unlisted += 1
            report("manual-ingest", number, total, "completed", f"{entry.source_url}: {result.status}")
        done = finish(writer, command, results, unlisted=None if list_unchanged else unlisted)
        if confirmed and (writer.states_read() or done.fingerprint != head):  # their rows, now needed
            by_url = {entry.source_url: entry for entry in entries}
            seen.extend((path, [url, content_type_for(by_url[url])[0], None], by_url[url].fragment or None,
                         snapshot_id) for path, url, snapshot_id in
                        ((path, url, stats.unchanged_id(path)) for path, url in confirmed)
                        if snapshot_id is not None)
        if writer.states_read():  # confirm what this run found against the states it committed
            stats.confirm(done.fingerprint, [item for item in seen if _is_latest(writer, *item)])
        elif done.fingerprint != head:  # only the sources it touched changed: the others' stand
            touched = writer.touched_sources()
            stats.carry(head, done.fingerprint, touched, [
                item for item in seen if item[1][0] in touched and _is_latest(writer, *item)])
    stats.save()
    return done


def _confirmed_pass(stats: StatCache, head: str | None, entries: Sequence[MapEntry], root: Path,
                    max_bytes: int, confine_absolute: bool, folders: dict[str, str], blob_root: str,
                    ) -> tuple[Sequence[MapEntry], list[tuple[str, str]]]:
    """The entries still to work (in map order), and (path, source) of each file the stat cache
    confirms unchanged and still its source's latest under the snapshots head ``head``: a regular
    file inside the root within ``max_bytes`` whose stat is the one recorded, its blob stored at its
    length. One ``lstat`` and one ``stat`` (of the blob) per file, no object per file but its path;
    anything else (an odd path, an error, a source the map names twice) goes the full way, where
    ``check_file`` names what is wrong before anything is written."""
    from episteme_core.capture.statcache import KeptMap

    table = stats.confirmations(head)
    if table is None:
        return entries, []
    files, generation = table
    rows: Sequence[Sequence[Any]] = (entries.rows if isinstance(entries, KeptMap) else  # no entry made
                                     [(e.index, e.source_url, e.local_path, e.fragment, e.content_type)
                                      for e in entries])
    rest: list[int] = []
    confirmed: list[tuple[str, str]] = []
    by_type: dict[str, tuple[str, str | None]] = {}
    by_suffix: dict[str, tuple[str, str | None]] = {}
    sources: set[str] = set()
    twice: set[str] = set()
    real_root = _real(str(root), folders)
    inside = real_root.rstrip("/") + "/"
    base = str(root)
    prefix = None if base == "." else "/" if base == "/" else base + "/"  # what _joined puts first
    within: dict[str, bool] = {}  # folder -> whether its real path lies inside the root
    lstat, stat_of, is_regular = os.lstat, os.stat, stat.S_ISREG
    for number, (_, url, local, fragment, given) in enumerate(rows):
        if url in sources:
            twice.add(url)
        sources.add(url)
        # the media type depends on the content type given, else on the file's extension
        memo, kind = (by_type, given) if given else (by_suffix, _suffix(local).lower())
        media = memo.get(kind)
        if media is None:
            media = memo[kind] = media_of(given, local)
        absolute = local.startswith("/")
        if absolute:
            path = local
        elif prefix is None:
            rest.append(number)
            continue
        else:  # _joined's odd spellings ("//", "/./", ...) all hold "/." or "//": refused below
            path = prefix + local
        found = files.get(path)
        if (media[1] is not None or found is None or type(found) is not list or len(found) != 11
                or found[9] != generation or found[10] != (fragment or None) or found[5] != url
                or found[6] != media[0] or found[7] is not None or "/." in path or "//" in path):
            rest.append(number)
            continue
        try:
            info = lstat(path)
        except OSError:
            rest.append(number)
            continue
        sha = found[4]
        if (not is_regular(info.st_mode) or info.st_size > max_bytes or found[0] != info.st_size
                or found[1] != info.st_mtime_ns or found[2] != info.st_ctime_ns or found[3] != info.st_ino
                or type(sha) is not str or type(found[8]) is not str
                or not _HEX_PAIR.fullmatch(sha + found[8])):
            rest.append(number)
            continue
        if not absolute or confine_absolute:
            folder = path.rpartition("/")[0]  # the file is no symlink: its folder says where it is
            ok = within.get(folder)
            if ok is None:
                ok = within[folder] = (_real(folder or "/", folders).rstrip("/") + "/").startswith(inside)
            if not ok:
                rest.append(number)
                continue
        try:
            stored = stat_of(f"{blob_root}/{sha[:2]}/{sha}").st_size == info.st_size
        except OSError:
            stored = False
        if not stored:
            rest.append(number)
            continue
        confirmed.append((path, url))
    if twice:  # a source named twice: every entry of it goes the full way, in map order
        confirmed = [item for item in confirmed if item[1] not in twice]
        slow = set(rest)
        rest = [number for number, row in enumerate(rows) if row[1] in twice or number in slow]
    return [entries[number] for number in rest], confirmed


_HEX_PAIR = re.compile(r"[0-9a-f]{128}")  # a sha256 and a snapshot id, joined


def _is_latest(writer: SnapshotWriter, path: str, identity: list[str | None], fragment: str | None,
               snapshot_id: str) -> bool:
    """Whether ``snapshot_id`` is its source's latest with ``fragment`` as its options."""
    state = writer.state(str(identity[0]))
    return (state is not None and state.latest == snapshot_id
            and state.options == ({"fragment": fragment} if fragment else {}))


def _still_latest(writer: SnapshotWriter, stats: StatCache, blob_root: str, entry: MapEntry, path: str,
                  info: os.stat_result, media: str, head: str | None) -> str | None:
    """The snapshot id of the file when its stat, content and snapshot id are those recorded and that
    snapshot is still its source's latest with the same options (then nothing is read, stored or
    logged for it); else None.

    While this run has not touched the source, the stat cache's confirmation under the snapshots
    head it started from answers without the catalog; otherwise the source's state is read from it."""
    identity: list[str | None] = [entry.source_url, media, None]
    known = (None if writer.touched(entry.source_url)
             else stats.confirmed(path, info, identity, entry.fragment or None, head))
    if known is None:
        known = stats.unchanged(path, info, identity)
        if known is None:
            return None
        state = writer.state(entry.source_url)
        if state is None or state.latest != known[2]:
            return None
        if state.options != ({"fragment": entry.fragment} if entry.fragment else {}):
            return None
    sha, length, snapshot_id = known
    try:
        return snapshot_id if os.stat(f"{blob_root}/{sha[:2]}/{sha}").st_size == length else None
    except OSError:
        return None


def _ingest_one(writer: SnapshotWriter, stats: StatCache, entry: MapEntry, path: str, info: os.stat_result,
                media: str, charset: str | None, max_bytes: int, warn: WarnFn | None) -> SourceResult:
    """One map entry: its content (hashed unless the stat cache vouches for it), observed as its
    source's latest snapshot; the result row."""
    (sha, length), trusted = _content(writer, stats, path, info, max_bytes)
    identity = SnapshotIdentity(
        capture_kind="file", source=entry.source_url, final_url=entry.source_url,
        content_type=media, charset=charset, byte_length=length, content_sha256=sha,
    )
    as_ingested = [entry.source_url, media, charset]
    known_id = stats.snapshot_id(path, as_ingested) if trusted else None
    snapshot_id = known_id or identity.snapshot_id
    if known_id is None:
        stats.note_snapshot_id(path, as_ingested, snapshot_id)
    options = {"fragment": entry.fragment} if entry.fragment else {}
    state = writer.state(entry.source_url)
    previous: str | None
    if state is not None and state.latest == snapshot_id and state.options == options:
        # still the source's latest representation: nothing to store, log or read back
        status, snapshot_id, previous = "unchanged", state.latest, state.latest
    else:
        observation = writer.observe(
            identity, options=options, attributes={"localPath": entry.local_path}
        )
        status, snapshot_id, previous = (observation.status, observation.record.id,
                                         observation.previous)
    warnings: list[dict[str, str]] = []
    if charset:
        with open(open_regular(path, follow_symlinks=False), "rb") as handle:
            sample = handle.read(_TEXT_SAMPLE)
        warnings = charset_warnings(media, charset, sample, final=len(sample) < _TEXT_SAMPLE)
    for item in warnings:
        if warn is not None:
            warn(item["code"], f"{entry.source_url}: {item['message']}", source=entry.source_url)
    return SourceResult(
        entry=entry.index, source=entry.source_url, status=status,
        snapshot_id=snapshot_id, previous_snapshot_id=previous,
        final_url=entry.source_url, content_type=media, charset=charset, bytes=length,
        local_path=entry.local_path, warnings=warnings,
    )


def _content(writer: SnapshotWriter, stats: StatCache, path: str, info: os.stat_result,
             max_bytes: int) -> tuple[tuple[str, int], bool]:
    """The (sha256, length) of a checked file, its bytes in the blob store, and whether the stat
    cache vouched for them: when the file's stat is the one recorded and its blob is stored at its
    length; else the file is hashed (and stored when the blob is missing)."""
    from episteme_core.capture.statcache import now_ns

    known = stats.lookup(path, info)
    if known is not None:
        sha = known[0]
        try:
            if os.stat(f"{writer.blobs.root}/{sha[:2]}/{sha}").st_size == known[1]:
                return known, True
        except OSError:
            pass
    started = now_ns()
    sha, length = file_digest(path, max_bytes)
    if not writer.has_blob(sha, length):
        stored_sha, length = writer.put_file(path, max_bytes)
        if stored_sha != sha:
            raise EpistemeError(
                "PROCESSING_FAILED", f"{path}: changed while being read",
                details={"path": str(path)},
            )
    stats.record(path, info, sha, length, started)
    return (sha, length), False
