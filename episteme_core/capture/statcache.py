"""The stat cache: what each local file held when it was last hashed, so an unchanged file is not
read again (``manual-ingest`` and ``pipeline --map``), as git's index does.

An entry records a file's path, its (size, mtime_ns, ctime_ns, inode) and the sha256 of its bytes,
and the snapshot id that content made for the source and content type it was last ingested as (an
id is a pure function of those, so it is kept rather than hashed again). An entry may also carry a
confirmation: the run that saved the cache found that snapshot id to be its source's latest, with
the entry's fragment as the source's options, in the snapshots commit whose fingerprint the cache
records. While that commit is still the snapshots stage's head (any commit of snapshots changes its
fingerprint) and the run has not touched the file's source, a confirmed file whose stat is
unchanged is known to be its source's latest without reading the snapshots catalog
(``confirmed``); a run that read the catalog confirms afresh what it found (``confirm``), and
earlier confirmations lapse. A run that changed only the sources it touched (and looked those up
one by one) carries every other confirmation over to the head it committed (``carry``).
A later run trusts the sha256 only while all four are unchanged: writing a file changes its mtime
and ctime (``touch -d`` can set mtime back, never ctime), replacing it changes its inode. A file is
recorded only when its stat was the same before and after it was hashed and its times lie well
before the hash began (``RACY_NS``; ``COARSE_RACY_NS`` on a file system that keeps whole seconds),
so a write in the same clock tick as the hash can never hide behind an equal stat ("racy git"): a
later write stamps a time past the hash's start, which no settled entry holds. (On a network file
system whose server stamps whole seconds with a clock behind this host's, run with ``--rehash``.)
``--rehash`` hashes every file again and records what it finds; ``episteme verify`` checks every
stored blob whatever this cache says.

The same file keeps the last few maps read, parsed, by the sha256 of their bytes: a map is a pure
function of its bytes, so an unchanged map of many files is not validated entry by entry again.

The cache is ``HOME/stat-cache.json`` (canonical JSON), written atomically by the writer after its
commit, and never an error: an unreadable or odd cache is ignored (every file is hashed).
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

import attrs

from episteme_core.store.home import Home

if TYPE_CHECKING:
    from episteme_core.capture.manifest import MapEntry

CACHE_NAME = "stat-cache.json"
FORMAT = "episteme-stat-cache/1"
# A file's times must be this much older than the start of its hash: ten times the kernel's coarsest
# timestamp tick (10 ms), and two seconds where times are whole seconds (FAT keeps even seconds).
RACY_NS = 100_000_000
COARSE_RACY_NS = 2_000_000_000
MAX_CACHE_BYTES = 256 * 1024 * 1024
KEPT_MAPS = 4
_HEX = re.compile(r"[0-9a-f]{64}")


@attrs.frozen
class FileStat:
    """What a file's stat says of its content: size, mtime and ctime (ns), inode."""

    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int

    @classmethod
    def of(cls, info: os.stat_result) -> FileStat:
        return cls(info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)

    def settled(self, hashed_at_ns: int) -> bool:
        """True when no write in the tick of a hash that began at ``hashed_at_ns`` can share these
        times (so an unchanged stat later means unchanged bytes)."""
        coarse = self.mtime_ns % 1_000_000_000 == 0 and self.ctime_ns % 1_000_000_000 == 0
        margin = COARSE_RACY_NS if coarse else RACY_NS
        return max(self.mtime_ns, self.ctime_ns) < hashed_at_ns - margin


def cache_path(home: Home) -> Path:
    return home.root / CACHE_NAME


class StatCache:
    """The recorded stats of local files (see the module); ``lookup`` and ``record`` per file,
    ``save`` once after the commit."""

    def __init__(self, home: Home, *, trust: bool = True) -> None:
        self.home = home
        self.trust = trust
        data = self._load()
        files = data.get("files")
        # Entries are checked when used (``_entry``) and again before they are saved: most runs use
        # a few of many, and a re-run of many files should not walk them all twice.
        self._files: dict[str, Any] = files if isinstance(files, dict) else {}
        self._checked: set[str] = set()  # keys whose entry passed ``_valid``
        maps = data.get("maps")
        self._maps: dict[str, list[list[Any]]] = (
            {key: value for key, value in maps.items() if isinstance(value, list)}
            if isinstance(maps, dict) and len(maps) <= KEPT_MAPS else {})
        confirmed = data.get("snapshots")
        # the generation of the confirmations that hold, and the snapshots head they hold for
        self._generation: int = 0
        self._head: str | None = None
        if (isinstance(confirmed, list) and len(confirmed) == 2 and type(confirmed[0]) is int
                and isinstance(confirmed[1], str)):
            self._generation, self._head = confirmed[0], confirmed[1]
        self._changed = False

    def _load(self) -> dict[str, Any]:
        path = cache_path(self.home)
        try:
            with open(path, "rb") as handle:
                raw = handle.read(MAX_CACHE_BYTES + 1)
        except OSError:
            return {}
        if len(raw) > MAX_CACHE_BYTES:
            return {}
        import json

        try:
            data = json.loads(raw)
        except (ValueError, RecursionError):
            return {}
        return data if isinstance(data, dict) and data.get("format") == FORMAT else {}

    def parsed_map(self, data: bytes, max_sources: int) -> Sequence[MapEntry] | None:
        """The entries of a map with these bytes as a parse of them gave them, if kept and within
        ``max_sources``; else None (parse it, then ``keep_map``)."""
        if not self.trust:
            return None
        rows = self._maps.get(hashlib.sha256(data).hexdigest())
        if rows is None or len(rows) > max_sources:
            return None
        text, optional = str, (str, type(None))
        for r in rows:  # what MapEntry holds, checked without making one per row
            if not (type(r) is list and len(r) == 5 and type(r[0]) is int and type(r[1]) is text
                    and type(r[2]) is text and type(r[3]) in optional and type(r[4]) in optional):
                return None
        return KeptMap(rows)

    def keep_map(self, data: bytes, entries: list[MapEntry]) -> None:
        """Keep the parse of a map (the last ``KEPT_MAPS`` maps are kept)."""
        digest = hashlib.sha256(data).hexdigest()
        rows = [[e.index, e.source_url, e.local_path, e.fragment, e.content_type] for e in entries]
        if self._maps.get(digest) != rows:
            self._maps.pop(digest, None)
            self._maps[digest] = rows
            while len(self._maps) > KEPT_MAPS:
                del self._maps[next(iter(self._maps))]
            self._changed = True

    @staticmethod
    def key(path: Path | str) -> str:
        """The absolute, normalised path a file is recorded under."""
        text = os.fspath(path)
        if text.startswith("/") and "/." not in text and "//" not in text and not text.endswith("/"):
            return text  # already what abspath would return (no '.', '..' or doubled separator)
        return os.path.abspath(text)

    def _entry(self, key: str) -> list[Any] | None:
        found = self._files.get(key)
        if found is None or (key not in self._checked and not _valid(found)):
            return None
        self._checked.add(key)
        return found  # type: ignore[no-any-return]

    def lookup(self, path: Path | str, info: os.stat_result) -> tuple[str, int] | None:
        """The (sha256, length) recorded for ``path`` when its stat ``info`` is unchanged, else None."""
        if not self.trust or not stat.S_ISREG(info.st_mode):
            return None
        found = self._entry(self.key(path))
        if (found is None or found[0] != info.st_size or found[1] != info.st_mtime_ns
                or found[2] != info.st_ctime_ns or found[3] != info.st_ino or not _HEX.fullmatch(found[4])):
            return None
        return str(found[4]), int(found[0])

    def unchanged(self, path: Path | str, info: os.stat_result,
                  identity: list[Any]) -> tuple[str, int, str] | None:
        """(sha256, length, snapshot id) recorded for ``path`` when its stat ``info`` is unchanged and
        it was last ingested with ``identity`` (source, media type, charset); else None. One lookup:
        what a re-run asks of each of many unchanged files."""
        if not self.trust:
            return None
        key = self.key(path)
        found = self._files.get(key)
        if (type(found) is not list or len(found) not in (9, 11) or found[0] != info.st_size
                or found[1] != info.st_mtime_ns or found[2] != info.st_ctime_ns or found[3] != info.st_ino
                or found[5:8] != identity or not stat.S_ISREG(info.st_mode)):
            return None
        sha, snapshot_id = found[4], found[8]
        # the four stat fields equal ints and the identity equals strings: what is left to check
        if type(sha) is not str or type(snapshot_id) is not str or not (_HEX.fullmatch(sha)
                                                                       and _HEX.fullmatch(snapshot_id)):
            return None
        return sha, int(found[0]), snapshot_id

    def confirmed(self, path: Path | str, info: os.stat_result, identity: list[Any], fragment: str | None,
                  head: str | None) -> tuple[str, int, str] | None:
        """``unchanged``, and only when the entry's confirmation holds: its snapshot id was its
        source's latest with ``fragment`` in the snapshots commit ``head``, which is still the head."""
        if not self.trust or head is None or head != self._head:
            return None
        found = self._files.get(self.key(path))
        if (type(found) is not list or len(found) != 11 or found[9] != self._generation
                or found[10] != fragment):
            return None
        return self.unchanged(path, info, identity)

    def confirmations(self, head: str | None) -> tuple[dict[str, Any], int] | None:
        """The entries by path and the generation whose confirmations hold under the snapshots head
        ``head`` (what ``confirmed`` checks, for a caller that checks many files at once; entries are
        as loaded: the caller checks each field it uses), or None when none holds."""
        if not self.trust or head is None or head != self._head:
            return None
        return self._files, self._generation

    def unchanged_id(self, path: str) -> str | None:
        """The snapshot id recorded for ``path`` (a file ``confirmations`` vouched for)."""
        found = self._files.get(self.key(path))
        return str(found[8]) if type(found) is list and len(found) in (9, 11) else None

    def confirm(self, head: str | None, latest: list[tuple[str, list[Any], str | None, str]]) -> None:
        """Confirm, under the snapshots head ``head``, each (path, identity, fragment, snapshot id)
        found to be its source's latest after the commit. Under a new head every earlier
        confirmation lapses (a new generation); under the same head they still hold (they describe
        the same commit), so a run that changed nothing leaves the cache as it was."""
        same = head == self._head
        generation = self._generation if same else self._generation + 1
        for path, identity, fragment, snapshot_id in latest:
            key = self.key(path)
            found = self._files.get(key)
            if (type(found) is list and len(found) in (9, 11) and found[5:9] == [*identity, snapshot_id]
                    and found[9:] != [generation, fragment]):
                self._files[key] = [*found[:9], generation, fragment]
                self._changed = True
        if not same:
            self._generation, self._head = generation, head
            self._changed = True

    def carry(self, before: str | None, head: str | None, touched: set[str],
              latest: list[tuple[str, list[Any], str | None, str]]) -> None:
        """The snapshots commit ``head`` changed only the states of the ``touched`` sources of the
        commit ``before``: the confirmations that held under ``before`` hold under ``head`` for every
        other source; those of a touched source lapse, then each (path, identity, fragment, snapshot
        id) of ``latest`` (a touched source's latest after the commit) is confirmed. When the
        confirmations were not made under ``before``, they lapse as under any new head."""
        if head is None or head == self._head:
            return
        if before is None or before != self._head:
            self.confirm(head, latest)
            return
        for key, found in self._files.items():
            if type(found) is list and len(found) == 11 and found[5] in touched:
                self._files[key] = found[:9]
        self._head = head
        self._changed = True
        self.confirm(head, latest)

    def snapshot_id(self, path: Path | str, identity: list[Any]) -> str | None:
        """The snapshot id recorded for ``path`` ingested with ``identity`` (source, media type,
        charset), if the entry was just trusted for it; else None."""
        found = self._entry(self.key(path))
        if found is None or len(found) < 9 or found[5:8] != identity or not _HEX.fullmatch(found[8]):
            return None
        return str(found[8])

    def note_snapshot_id(self, path: Path | str, identity: list[Any], snapshot_id: str) -> None:
        """Keep the snapshot id ``path``'s recorded content makes with ``identity``."""
        key = self.key(path)
        found = self._entry(key)
        if found is not None and found[5:9] != [*identity, snapshot_id]:
            self._files[key] = [*found[:5], *identity, snapshot_id]
            self._changed = True

    def record(self, path: Path | str, before: os.stat_result, sha: str, length: int,
               hashed_at_ns: int) -> None:
        """Remember that ``path`` (stat ``before`` when its hash began at ``hashed_at_ns``) holds
        ``sha``; kept only when its stat did not move meanwhile and its times are settled."""
        key = self.key(path)
        try:
            after = os.lstat(path)
        except OSError:
            after = None
        now = FileStat.of(before)
        if after is None or FileStat.of(after) != now or now.size != length or not now.settled(hashed_at_ns):
            if self._files.pop(key, None) is not None:
                self._changed = True
            return
        entry: list[Any] = [now.size, now.mtime_ns, now.ctime_ns, now.inode, sha]
        if (self._entry(key) or [])[:5] != entry:
            self._files[key] = entry
            self._changed = True

    def save(self) -> bool:
        """Write the cache when it changed (atomically; call under the writer lock, after the
        commit); True when written."""
        if not self._changed:
            return False
        from episteme_core.records.canonical import canonical_bytes
        from episteme_core.store.atomic import atomic_write

        files = {key: value for key, value in self._files.items() if _valid(value)}
        body: dict[str, Any] = {"format": FORMAT, "files": files, "maps": self._maps}
        if self._head is not None:
            body["snapshots"] = [self._generation, self._head]
        atomic_write(cache_path(self.home), canonical_bytes(body))
        self._changed = False
        return True


class KeptMap(Sequence["MapEntry"]):
    """A kept map's entries, each made when asked for: an unchanged re-run of a large map reads most
    of them only through ``rows`` ([index, source URL, local path, fragment, content type])."""

    def __init__(self, rows: list[list[Any]]) -> None:
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, item: int) -> MapEntry: ...

    @overload
    def __getitem__(self, item: slice) -> list[MapEntry]: ...

    def __getitem__(self, item: int | slice) -> MapEntry | list[MapEntry]:
        from episteme_core.capture.manifest import MapEntry

        if isinstance(item, slice):
            return [MapEntry(*row) for row in self.rows[item]]
        return MapEntry(*self.rows[item])


def _valid(value: Any) -> bool:
    """[size, mtime_ns, ctime_ns, inode, sha256], optionally [source, media, charset, snapshot id] and
    then optionally its confirmation [generation, fragment]."""
    if type(value) is not list or len(value) not in (5, 9, 11):
        return False
    if len(value) == 11 and not (type(value[9]) is int and (value[10] is None or isinstance(value[10], str))):
        return False
    size, mtime, ctime, inode, sha = value[:5]
    if not (type(size) is int and type(mtime) is int and type(ctime) is int and type(inode) is int
            and min(size, mtime, ctime, inode) >= 0 and isinstance(sha, str) and len(sha) == 64):
        return False
    return len(value) == 5 or (isinstance(value[5], str) and isinstance(value[6], str)
                               and (value[7] is None or isinstance(value[7], str))
                               and isinstance(value[8], str))


def now_ns() -> int:
    """The clock a hash's start is read from (the same clock the kernel stamps files with)."""
    return time.time_ns()


__all__ = ["CACHE_NAME", "FileStat", "StatCache", "cache_path", "now_ns"]
