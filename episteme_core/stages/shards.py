"""The shards stage, whoever builds it: what a commit records, when it is current, and its writer.

Every indexer commits its shards to the stage ``shards`` (objects first, ``index.json`` last). The
commit's meta names the ``indexer`` that built it, the chunk index it covers (``chunkIndexSha256``)
and the log position (``logBytes``). Opening (``search.opening.open_committed``) refuses with
``STALE_INDEX``:

- shards of another indexer ("rebuild them with episteme index --indexer NAME");
- shards that no longer cover the chunks or the log, unless a writer is at work on the home.

A writer at work (the writer lock is held by a live process) is a commit in flight: ``ingest`` and
``pipeline`` commit the log, then the chunks, then the shards. Readers then answer from the shards
committed before it, whole and self-contained (they hold their chunks' rows), and say so
(``ShardSet.in_flight``); once no writer is at work, the same shards are stale and refused. A commit
that lands while a reader opens the stage (its files pruned, or the freshness it checked changed) is
opened again: a reader sees the old commit or the new one, never a refusal caused by a commit in
flight and never a mix. ``ShardsWriter`` commits a plugin indexer's shards with that meta.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from episteme_core.errors import EpistemeError

if TYPE_CHECKING:
    from episteme_core.kernel.contracts import SearchableShard
    from episteme_core.records.stage_index import StageEntry, StageIndex
    from episteme_core.store.home import Home

STAGE = "shards"
STALE_HINT = "run episteme index"
DEFAULT_INDEXER = "bm25"  # who built a commit that does not say (commits before indexers were named)
OPEN_ATTEMPTS = 5  # commits landing during one open before the reader gives up

FileKey = tuple[int, int, int, int] | None


def stale(message: str, *, hint: str = STALE_HINT, **details: Any) -> EpistemeError:
    """A ``STALE_INDEX`` refusal."""
    return EpistemeError("STALE_INDEX", message, details=details or None, hint=hint)


def file_key(path: Path) -> FileKey:
    """(inode, size, mtime ns, ctime ns) of ``path``, or None when it does not exist."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


@attrs.frozen
class StoredShard:
    """One shard of a commit, as an indexer's opener receives it.

    ``info`` is its entry in the commit meta's ``shards`` (``source`` and what the indexer put
    there). In a home, ``path`` is its file (map it); in an index bundle, ``data`` holds its bytes.
    ``read()`` gives the whole bytes, checked against the sha256 the commit records.
    """

    name: str
    source: str
    info: Mapping[str, Any]
    entry: StageEntry
    path: Path | None
    data: memoryview | None
    where: str  # for messages: the file, or bundle!member

    def read(self) -> bytes:
        """The shard's bytes, verified (``INVALID_INPUT`` naming the file when missing or changed)."""
        if self.data is not None:
            raw = bytes(self.data)
        else:
            try:
                raw = Path(str(self.path)).read_bytes()
            except FileNotFoundError:
                raise EpistemeError("INVALID_INPUT", f"shard {self.where}: named by the shards index but "
                                    "missing", details={"path": self.where}) from None
        if len(raw) != self.entry.bytes or hashlib.sha256(raw).hexdigest() != self.entry.sha256:
            raise EpistemeError("INVALID_INPUT", f"shard {self.where}: does not match its sha256 in the "
                                "shards index (tampered or corrupt)", details={"path": self.where},
                                hint="run episteme index --reshard to rebuild the shards")
        return raw


Opener = Callable[[StoredShard], "SearchableShard"]
Check = Callable[[Mapping[str, Any]], None]


# -- What a commit records. ----------------------------------------------------------------------


def built_from(home: Home) -> dict[str, str]:
    """The committed chunk index shards are built from: ``chunkIndexFingerprint`` and
    ``chunkIndexSha256`` (of its bytes). ``INVALID_INPUT`` when nothing was chunked."""
    from episteme_core.store.commits import Stage

    stage = Stage(home, "chunks")
    index = stage.read_index()
    if index is None:
        raise EpistemeError("INVALID_INPUT", f"no chunks in {stage.dir}", details={"path": str(stage.dir)},
                            hint="run episteme chunk (or episteme pipeline)")
    return {"chunkIndexFingerprint": index.fingerprint,
            "chunkIndexSha256": hashlib.sha256(stage.index_path.read_bytes()).hexdigest()}


def log_mark(home: Home) -> tuple[int, int]:
    """(whole lines, bytes up to the last newline) of the log: where a commit's shards stand in it."""
    try:
        data = home.log_path.read_bytes()
    except FileNotFoundError:
        return 0, 0
    end = data.rfind(b"\n") + 1
    return data.count(b"\n", 0, end), end


def log_has_captures_after(home: Home, offset: int) -> bool:
    """True when the log, past byte ``offset``, records a captured snapshot (or was cut short)."""
    from episteme_core.store.log import Log

    kinds = Log(home.log_path).captured_kinds_after(offset)
    return kinds is None or bool(kinds)


def indexer_of(meta: Mapping[str, Any]) -> str:
    """The indexer a commit's meta names (``bm25`` for commits made before indexers were named)."""
    value = meta.get("indexer", DEFAULT_INDEXER)
    return value if isinstance(value, str) and value else DEFAULT_INDEXER


# -- Freshness. ----------------------------------------------------------------------------------


def check_indexer(meta: Mapping[str, Any], indexer: str) -> None:
    """Refuse (``STALE_INDEX``) shards another indexer built, naming the command that rebuilds them."""
    built = indexer_of(meta)
    if built != indexer:
        command = f"episteme index --indexer {indexer}"
        raise stale(
            f"the shards were built by indexer {built!r}; this home reads them with {indexer!r}: rebuild "
            f"them with {command} (or set \"indexer\" in config.json to {built!r})",
            hint=f"run {command}", builtBy=built, indexer=indexer,
        )


def check_current(home: Home, meta: Mapping[str, Any]) -> None:
    """Refuse (``STALE_INDEX``) shards that do not cover the committed chunks, or older than a capture
    in the log. Reads one small file and the log's tail."""
    from episteme_core.store.commits import Stage

    chunk_index = Stage(home, "chunks").index_path
    try:
        digest = hashlib.sha256(chunk_index.read_bytes()).hexdigest()
    except FileNotFoundError:
        raise stale(f"the shards were built from chunks that are gone ({chunk_index} is missing)") from None
    if digest != meta.get("chunkIndexSha256"):
        raise stale("the chunks changed since the shards were built", chunkIndex=str(chunk_index))
    if log_has_captures_after(home, int(meta.get("logBytes") or 0)):
        raise stale(
            "the log has captures newer than the shards (extract and chunk them, then index: "
            "episteme pipeline does all)",
            log=str(home.log_path),
        )


def writer_at_work(home: Home) -> dict[str, Any] | None:
    """Who holds the home's writer lock, when a live process does (a holder on another host counts:
    its liveness cannot be seen from here); None when the lock is free or its holder is dead.

    Reads the lock file only: a reader never takes the lock."""
    from episteme_core.store.lock import read_owner
    from episteme_core.store.processes import hostname, pid_is_alive

    try:
        owner = read_owner(home.lock_path)
    except EpistemeError:  # being written by a writer taking the lock: nothing of it is committed yet
        return None
    if owner is None or (owner.host == hostname() and not pid_is_alive(owner.pid)):
        return None
    return {"command": owner.command, "pid": owner.pid, "host": owner.host, "since": owner.acquired_at}


def generation(home: Home) -> tuple[Any, ...]:
    """A cheap token that changes whenever opening the home's shards could give another answer: the
    identity of the shards index, the chunk index, the log and the writer lock, and whether the
    lock's holder still lives (a writer killed mid-commit leaves its lock file behind)."""
    from episteme_core.store.commits import Stage

    lock = file_key(home.lock_path)
    return (file_key(Stage(home, STAGE).index_path), file_key(Stage(home, "chunks").index_path),
            file_key(home.log_path), lock, lock is not None and writer_at_work(home) is not None)


# -- Writing a commit (for an indexer of a plugin; the bm25 indexer writes the same meta). ----------


class ShardsWriter:
    """Commit an indexer's shards: ``put`` each shard's bytes, then ``commit`` (call under the writer
    lock). The commit's meta holds ``indexer``, the chunk index and log position it covers, each
    shard's ``source`` and info, and the indexer's own keys; objects no longer named are pruned."""

    def __init__(self, home: Home, indexer: str) -> None:
        from episteme_core.store.commits import Stage

        self.home = home
        self.indexer = indexer
        self.stage = Stage(home, STAGE)
        self.built_from = built_from(home)  # read first: the shards cover what was committed then
        self._entries: dict[str, StageEntry] = {}
        self._infos: dict[str, dict[str, Any]] = {}

    def put(self, name: str, data: bytes, *, source: str, suffix: str = ".shard", **info: Any) -> None:
        """Store one shard (its bytes, content-addressed) of chunks of ``source``."""
        if name in self._entries:
            raise EpistemeError("INTERNAL_ERROR", f"shard {name} put twice")
        self._entries[name] = self.stage.put_bytes(name, data, suffix=suffix)
        self._infos[name] = {**info, "source": source}

    def commit(self, **meta: Any) -> StageIndex:
        """Make the shards put so far the stage's content, with ``meta`` beside the kernel's keys."""
        lines, log_bytes = log_mark(self.home)
        full = {**meta, **self.built_from, "indexer": self.indexer, "logPosition": lines,
                "logBytes": log_bytes, "shards": dict(sorted(self._infos.items()))}
        index = self.stage.commit(self._entries.values(), full)
        self.stage.prune(index)
        return index
