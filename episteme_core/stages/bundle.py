"""An index as one file (``episteme index --out``), and reading one back (``episteme query --index``).

**The bundle** is a POSIX tar (ustar): ``index.json`` first, the shards stage's commit (a stage index
of stage ``shards`` whose meta leaves out what only its home means: ``logPosition``, ``logBytes``,
``nextShard``; fingerprinted again), then every shard object at the path the commit names
(``objects/ab/<sha256>.shard``), in key order. Members are regular files, mode 0444, owner 0, time 0,
no user names: equal shards give equal bytes. Standard tools list and unpack it.

**The artifact** (``--out -`` with ``--json``: ``data.artifact``) carries the bundle as base64, with
its size and sha256, the indexer, the commit's fingerprint and counts (``schema/artifact.schema.json``,
``artifactType`` ``search-index``).

**Reading** (``--index FILE|-``, bounded by ``--max-input-bytes``): a file or stdin holding the tar or
the artifact JSON. A tar file is memory-mapped (a query reads only the blocks it needs, each checked
against the hash chain rooted in ``index.json``); the artifact JSON and stdin are read into memory
(about three times their size at the peak, while the JSON is parsed and its base64 decoded).
"""

from __future__ import annotations

import hashlib
import io
import os
from collections.abc import Mapping
from io import BufferedIOBase
from typing import IO, TYPE_CHECKING, Any

import attrs

from episteme_core.errors import EpistemeError
from episteme_core.records.inputs import MIB

if TYPE_CHECKING:
    import tarfile

    from episteme_core.records.stage_index import StageEntry, StageIndex
    from episteme_core.store.home import Home

MEDIA_TYPE = "application/x-tar"
ARTIFACT_TYPE = "search-index"
INDEX_MEMBER = "index.json"
HOME_LOCAL = ("logPosition", "logBytes", "nextShard")  # meta keys that mean something only in a home
MAX_INDEX_JSON_BYTES = 1024 * MIB  # the commit (index.json) inside a bundle


def _invalid(label: str, reason: str) -> EpistemeError:
    return EpistemeError("INVALID_INPUT", f"{label}: not an episteme index bundle: {reason}",
                         details={"source": label, "reason": reason},
                         hint="make one with episteme index --out FILE (or --out - --json)")


# -- Writing. ------------------------------------------------------------------------------------


def bundle_index(index: StageIndex) -> StageIndex:
    """The commit a bundle holds: ``index`` without its home-local meta, fingerprinted again."""
    from episteme_core.records.stage_index import StageIndex
    from episteme_core.store.commits import index_fingerprint

    meta = {key: value for key, value in index.meta.items() if key not in HOME_LOCAL}
    draft = StageIndex(stage=index.stage, episteme_version=index.episteme_version, entries=index.entries,
                       meta=meta, schema_version=index.schema_version)
    return attrs.evolve(draft, fingerprint=index_fingerprint(draft))


def _member(name: str, size: int) -> tarfile.TarInfo:
    import tarfile

    info = tarfile.TarInfo(name)
    info.size = size
    info.mtime = 0
    info.mode = 0o444
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.type = tarfile.REGTYPE
    return info


def write_bundle(home: Home, out: IO[bytes] | BufferedIOBase) -> dict[str, Any]:
    """Write the home's committed shards as a bundle to ``out``; a summary of what it holds.

    Call it where the commit cannot change (under the writer lock, right after building)."""
    import tarfile

    from episteme_core.records.canonical import canonical_bytes
    from episteme_core.records.convert import unstructure
    from episteme_core.stages.shards import STAGE, indexer_of, stale
    from episteme_core.store.commits import Stage

    stage = Stage(home, STAGE)
    committed = stage.read_index()
    if committed is None:
        raise stale(f"no index in {stage.dir}", path=str(stage.dir))
    index = bundle_index(committed)
    body = canonical_bytes(unstructure(index))
    with tarfile.open(fileobj=out, mode="w|", format=tarfile.USTAR_FORMAT) as tar:
        tar.addfile(_member(INDEX_MEMBER, len(body)), io.BytesIO(body))
        for entry in sorted(index.entries, key=lambda e: e.key):
            data = stage.read_bytes(entry)  # verified against the commit, one shard in memory at a time
            tar.addfile(_member(entry.path, len(data)), io.BytesIO(data))
            del data
    return {"indexer": indexer_of(index.meta), "fingerprint": index.fingerprint,
            "shards": len(index.entries), "chunks": index.meta.get("chunks")}


def artifact(data: bytes, summary: Mapping[str, Any]) -> dict[str, Any]:
    """The ``data.artifact`` of ``index --out -``: the bundle as base64 with what identifies it."""
    import base64

    return {
        "artifactType": ARTIFACT_TYPE,
        "indexer": summary["indexer"],
        "fingerprint": summary["fingerprint"],
        "shards": summary["shards"],
        "chunks": summary["chunks"],
        "mediaType": MEDIA_TYPE,
        "encoding": "base64",
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "data": base64.b64encode(data).decode("ascii"),
    }


# -- Reading. ------------------------------------------------------------------------------------


@attrs.define
class IndexBundle:
    """A bundle read back: its commit and where each member's bytes lie in ``buffer``."""

    label: str  # the file, or "stdin"
    indexer: str  # who built it (the commit meta's ``indexer``)
    index: StageIndex
    buffer: Any  # bytes or an mmap
    members: dict[str, tuple[int, int]]  # path -> (offset, size)

    def member(self, entry: StageEntry) -> memoryview:
        """The bytes of the object ``entry`` names (``INVALID_INPUT`` when absent or of another size)."""
        place = self.members.get(entry.path)
        if place is None:
            raise _invalid(self.label, f"shard {entry.key} ({entry.path}) is missing")
        offset, size = place
        if size != entry.bytes:
            raise _invalid(self.label, f"shard {entry.key} is {size} bytes, its commit says {entry.bytes}")
        return memoryview(self.buffer)[offset : offset + size]


def _parse_tar(buffer: Any, stream: IO[bytes], label: str) -> IndexBundle:
    """The bundle in ``buffer`` (whose bytes ``stream`` reads): members listed from their headers."""
    import tarfile

    from episteme_core.records.canonical import loads_strict
    from episteme_core.records.convert import structure
    from episteme_core.records.stage_index import StageIndex
    from episteme_core.stages.shards import STAGE, indexer_of
    from episteme_core.store.commits import index_fingerprint

    members: dict[str, tuple[int, int]] = {}
    try:
        with tarfile.open(fileobj=stream, mode="r:") as tar:
            for info in tar:
                if not info.isreg():
                    raise _invalid(label, f"member {info.name!r} is not a regular file")
                if info.name in members:
                    raise _invalid(label, f"member {info.name!r} appears twice")
                members[info.name] = (info.offset_data, info.size)
    except (tarfile.TarError, EOFError, ValueError, OSError) as exc:
        raise _invalid(label, f"not a tar file ({exc})") from None
    if INDEX_MEMBER not in members:
        raise _invalid(label, f"it holds no {INDEX_MEMBER}")
    offset, size = members[INDEX_MEMBER]
    if size > MAX_INDEX_JSON_BYTES:
        raise _invalid(label, f"{INDEX_MEMBER} is larger than {MAX_INDEX_JSON_BYTES} bytes")
    where = f"{label}!{INDEX_MEMBER}"
    index = structure(loads_strict(bytes(memoryview(buffer)[offset : offset + size]), source=where),
                      StageIndex, source=where)
    if index.fingerprint != index_fingerprint(index) or index.stage != STAGE:
        raise EpistemeError("INVALID_INPUT", f"{where}: fingerprint does not match its content, or it is "
                            f"not a commit of stage {STAGE} (tampered or corrupt)", details={"source": where})
    named = {entry.path for entry in index.entries} | {INDEX_MEMBER}
    extra = sorted(set(members) - named)
    if extra:
        raise _invalid(label, f"member {extra[0]!r} is not named by its {INDEX_MEMBER}")
    return IndexBundle(label, indexer_of(index.meta), index, buffer, members)


def _unwrap(held: list[bytes], label: str) -> bytes:
    """The bundle bytes the artifact JSON ``held[0]`` carries, checked against its size and sha256.

    Takes the JSON bytes out of ``held`` so that each copy is dropped as soon as the next is made:
    the text and the parsed base64 string are what is held at once (the parser's string builder
    briefly doubles the latter), about three times the input at the peak."""
    import binascii

    from episteme_core.records.canonical import loads_strict

    text = _text(held.pop(), label)
    value = loads_strict(text, source=label)
    del text
    if not isinstance(value, dict) or value.get("artifactType") != ARTIFACT_TYPE:
        raise _invalid(label, f"a JSON input must be an artifact of type {ARTIFACT_TYPE} (data.artifact "
                       "of episteme index --out - --json)")
    data = value.pop("data", None)
    if value.get("encoding") != "base64" or not isinstance(data, str):
        raise _invalid(label, "its data must be base64 text (encoding base64)")
    try:
        raw = binascii.a2b_base64(data, strict_mode=True)
    except (binascii.Error, ValueError) as exc:
        raise _invalid(label, f"its data is not base64 ({exc})") from None
    del data
    if len(raw) != value.get("bytes") or hashlib.sha256(raw).hexdigest() != value.get("sha256"):
        raise _invalid(label, "its data does not match its bytes and sha256 (cut short or changed)")
    return raw


def _looks_like_json(head: bytes) -> bool:
    return head.lstrip(b" \t\r\n\xef\xbb\xbf")[:1] == b"{"


def read_bundle(source: str, max_bytes: int) -> IndexBundle:
    """The bundle in file ``source`` or stdin (``-``), tar or artifact JSON, of at most ``max_bytes``
    (``LIMIT_EXCEEDED`` past it). A tar file is memory-mapped; the rest is read into memory."""
    import mmap

    from episteme_core.records.inputs import open_regular, read_input

    if source == "-":
        raw = read_input("-", max_bytes)
        if _looks_like_json(raw[:64]):
            held = [raw]
            del raw
            raw = _unwrap(held, "stdin")
        return _parse_tar(raw, io.BytesIO(raw), "stdin")
    label = os.fsencode(source).decode("utf-8", "backslashreplace")
    fd = open_regular(source)
    with open(fd, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > max_bytes:
            raise EpistemeError("LIMIT_EXCEEDED", f"{label} is larger than {max_bytes} bytes",
                                details={"source": label, "maxBytes": max_bytes, "bytes": size},
                                hint="raise --max-input-bytes if this input is expected")
        if _looks_like_json(handle.read(64)):
            handle.seek(0)
            raw = handle.read(min(size, max_bytes) + 1)
            if len(raw) > max_bytes:  # it grew since it was measured
                raise EpistemeError("LIMIT_EXCEEDED", f"{label} is larger than {max_bytes} bytes",
                                    details={"source": label, "maxBytes": max_bytes},
                                    hint="raise --max-input-bytes if this input is expected")
            held = [raw]
            del raw
            data = _unwrap(held, label)
            return _parse_tar(data, io.BytesIO(data), label)
        if size == 0:
            raise _invalid(label, "it is empty")
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        handle.seek(0)
        return _parse_tar(mapped, handle, label)


def _text(raw: bytes, label: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EpistemeError("INVALID_INPUT", f"{label}: not valid JSON: invalid UTF-8 at byte {exc.start}",
                            details={"source": label}) from None
