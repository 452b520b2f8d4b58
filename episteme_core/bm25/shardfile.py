"""The shard file: one frozen, content-addressed file of little-endian arrays, read memory-mapped.

Layout::

    b"EPSHARD1"  u64 header length  header (canonical JSON)  padding to 64
    data region: each array at a 64-byte aligned offset (relative to the region's start)
    block hashes: sha256[:16] of every 64 KiB block of the data region

The header names each array (type, offset, count), the block size, and the sha256 of the block
hash table; the stage index records the sha256 of the header and the file's length. A reader
verifies the header and the hash table when it opens the file, then each 64 KiB block the first
time it touches it: every byte a query uses is checked against a chain of hashes rooted in
``shards/index.json``, yet a query reads (and hashes) only the blocks it needs. ``episteme
verify`` hashes whole files.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import struct
import sys
from pathlib import Path
from typing import Any

from episteme_core.errors import EpistemeError
from episteme_core.records.canonical import canonical_bytes

MAGIC = b"EPSHARD1"
FORMAT = "episteme-shard/1"
BLOCK_SIZE = 1 << 16
ALIGN = 64
HASH_BYTES = 16
MAX_HEADER_BYTES = 64 * 1024 * 1024
# array type -> (struct/memoryview code, item size)
TYPES = {"u1": ("B", 1), "u2": ("H", 2), "u4": ("I", 4), "u8": ("Q", 8), "f4": ("f", 4), "f8": ("d", 8)}
LITTLE = sys.byteorder == "little"


def _pad(n: int) -> int:
    return (-n) % ALIGN


def encode(meta: dict[str, Any], arrays: dict[str, tuple[str, bytes | list[bytes]]]) -> bytes:
    """The bytes of a shard holding ``arrays`` (name -> (type, little-endian bytes, or a list of
    pieces that make them: the stored rows are passed as they are, never joined)) and ``meta``."""
    return b"".join(encode_pieces(meta, arrays))


def encode_pieces(meta: dict[str, Any], arrays: dict[str, tuple[str, bytes | list[bytes]]]) -> list[bytes]:
    """``encode``'s bytes as the pieces they are made of, the header first (``header_of`` and
    ``header_sha256`` read it alone): a shard is written to its file without a joined copy, and
    the block hashes are taken over the pieces as they lie."""
    parts: list[bytes] = []
    table: dict[str, dict[str, Any]] = {}
    size_so_far = 0
    for name in sorted(arrays):
        kind, data = arrays[name]
        pieces = data if isinstance(data, list) else [data]
        length = sum(map(len, pieces))
        size = TYPES[kind][1]
        if length % size:
            raise ValueError(f"array {name}: {length} bytes is not a whole number of {kind}")
        gap = _pad(size_so_far)
        if gap:
            parts.append(b"\0" * gap)
            size_so_far += gap
        table[name] = {"type": kind, "offset": size_so_far, "count": length // size}
        parts.extend(pieces)
        size_so_far += length
    hashes = _block_hashes(parts)
    header = canonical_bytes({
        "format": FORMAT,
        "meta": meta,
        "arrays": table,
        "blockSize": BLOCK_SIZE,
        "regionBytes": size_so_far,
        "blockHashesSha256": hashlib.sha256(hashes).hexdigest(),
    })
    head = MAGIC + struct.pack("<Q", len(header)) + header
    head += b"\0" * _pad(len(head))
    return [head, *parts, b"\0" * _pad(size_so_far), hashes]


def _block_hashes(parts: list[bytes]) -> bytes:
    """sha256[:16] of every ``BLOCK_SIZE`` block of the concatenation of ``parts`` (never made)."""
    digests: list[bytes] = []
    block = hashlib.sha256()
    filled = 0
    for part in parts:
        view = memoryview(part)
        at = 0
        while at < len(view):
            take = min(BLOCK_SIZE - filled, len(view) - at)
            block.update(view[at : at + take])
            at += take
            filled += take
            if filled == BLOCK_SIZE:
                digests.append(block.digest()[:HASH_BYTES])
                block, filled = hashlib.sha256(), 0
    if filled:
        digests.append(block.digest()[:HASH_BYTES])
    return b"".join(digests)


def header_sha256(data: bytes) -> str:
    """The sha256 of the header of shard bytes ``data`` (what the stage index records)."""
    (length,) = struct.unpack_from("<Q", data, len(MAGIC))
    return hashlib.sha256(data[len(MAGIC) + 8 : len(MAGIC) + 8 + length]).hexdigest()


class ShardFile:
    """An open shard file: header checked, arrays mapped, blocks verified on first touch."""

    def __init__(self, path: Path, *, size: int, header_sha256: str, data: memoryview | None = None) -> None:
        """Map the file at ``path``; or, given ``data`` (the shard's bytes, e.g. inside an index
        bundle), read those and name them ``path`` in messages."""
        self.path = path
        self._map: Any
        if data is not None:
            if len(data) != size:
                self._fail(f"is {len(data)} bytes, the shards index says {size}")
            if size == 0:
                self._fail("is empty")
            self._map = data
        else:
            try:
                handle = open(path, "rb")
            except FileNotFoundError:
                self._fail("named by the shards index but missing")
            with handle:
                actual = handle.seek(0, 2)
                if actual != size:
                    self._fail(f"is {actual} bytes, the shards index says {size}")
                if size == 0:
                    self._fail("is empty")
                self._map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        self._view = memoryview(self._map)
        self._mapped = isinstance(self._map, mmap.mmap)
        self._verified: set[int] = set()
        if bytes(self._view[: len(MAGIC)]) != MAGIC or size < len(MAGIC) + 8:
            self._fail("is not an episteme shard")
        (length,) = struct.unpack_from("<Q", self._map, len(MAGIC))
        if length > MAX_HEADER_BYTES or len(MAGIC) + 8 + length > size:
            self._fail("has a corrupt header length")
        raw = bytes(self._view[len(MAGIC) + 8 : len(MAGIC) + 8 + length])
        if hashlib.sha256(raw).hexdigest() != header_sha256:
            self._fail("header does not match its sha256 in the shards index (tampered or corrupt)")
        header = json.loads(raw)
        if header.get("format") != FORMAT:
            self._fail(f"has format {header.get('format')!r}, expected {FORMAT}")
        self.header: dict[str, Any] = header
        self.meta: dict[str, Any] = header["meta"]
        self.block_size = int(header["blockSize"])
        head = len(MAGIC) + 8 + length
        self._base = head + _pad(head)
        region = int(header["regionBytes"])
        self._region_end = self._base + region
        hashes_at = self._region_end + _pad(region)
        blocks = -(-region // self.block_size)
        self._hashes = self._view[hashes_at : hashes_at + blocks * HASH_BYTES]
        if hashes_at + blocks * HASH_BYTES != size:
            self._fail("length does not match its header")
        if hashlib.sha256(self._hashes).hexdigest() != header["blockHashesSha256"]:
            self._fail("block hash table does not match its header (tampered or corrupt)")
        self.arrays: dict[str, dict[str, Any]] = header["arrays"]
        # name -> (offset, item size, count, memoryview code): what every read looks up, read once
        self._specs: dict[str, tuple[int, int, int, str]] = {}
        for name, spec in self.arrays.items():
            code, size = TYPES[spec["type"]]
            offset, count = int(spec["offset"]), int(spec["count"])
            if offset < 0 or offset + count * size > region:
                self._fail(f"array {name} lies outside the file")
            self._specs[name] = (offset, size, count, code)

    def _fail(self, message: str) -> Any:
        raise EpistemeError(
            "INVALID_INPUT",
            f"shard {self.path}: {message}",
            details={"path": str(self.path)},
            hint="run episteme index --reshard to rebuild the shards",
        )

    def _verify(self, start: int, stop: int) -> None:
        """Check every block of the data region that ``[start, stop)`` (region offsets) touches."""
        if stop <= start:
            return
        bs = self.block_size
        for block in range(start // bs, (stop - 1) // bs + 1):
            if block in self._verified:
                continue
            lo = self._base + block * bs
            hi = min(lo + bs, self._region_end)
            digest = hashlib.sha256(self._view[lo:hi]).digest()[:HASH_BYTES]
            if digest != bytes(self._hashes[block * HASH_BYTES : (block + 1) * HASH_BYTES]):
                self._fail(f"block {block} does not match its hash (tampered or corrupt)")
            self._verified.add(block)

    def count(self, name: str) -> int:
        return int(self.arrays[name]["count"])

    def _span(self, name: str, start: int, stop: int) -> tuple[int, int, str]:
        offset, size, count, code = self._specs[name]
        if not 0 <= start <= stop <= count:
            self._fail(f"read of {name}[{start}:{stop}] is outside the array ({count})")
        lo = offset + start * size
        hi = offset + stop * size
        if hi > lo:
            block = lo // self.block_size
            # the usual read: one block, verified before (a query's reads are small)
            if block not in self._verified or (hi - 1) // self.block_size != block:
                self._verify(lo, hi)
        return self._base + lo, self._base + hi, code

    def slice(self, name: str, start: int, stop: int) -> memoryview:
        """``name[start:stop]`` as a typed memoryview over the mapped, verified bytes."""
        lo, hi, code = self._span(name, start, stop)
        view = self._view[lo:hi]
        if not LITTLE:  # pragma: no cover - big-endian hosts copy and swap
            import array

            swapped = array.array(code, bytes(view))
            swapped.byteswap()
            return memoryview(swapped)
        cast: memoryview = view.cast(code)  # type: ignore[call-overload]
        return cast

    def raw(self, name: str, start: int, stop: int) -> bytes:
        """The bytes of ``name[start:stop]`` (little-endian items; a ``u1`` array's bytes as they are)."""
        lo, hi, _ = self._span(name, start, stop)
        if self._mapped:
            return self._map[lo:hi]  # type: ignore[no-any-return]  # an mmap slices to bytes
        return bytes(self._view[lo:hi])

    def records(self, name: str, indexes: list[int], width: int) -> list[bytes]:
        """``raw(name, i * width, (i + 1) * width)`` for each ``i`` of ``indexes`` (fixed-width records:
        the chunk ids of a query's hits), each range checked and its blocks verified, in one call."""
        offset, size, count, _ = self._specs[name]
        step = width * size
        block_size, verified, base = self.block_size, self._verified, self._base
        source: Any = self._map if self._mapped else self._view
        out: list[bytes] = []
        for index in indexes:
            if not 0 <= index or (index + 1) * width > count:
                where = f"{name}[{index * width}:{(index + 1) * width}]"
                self._fail(f"read of {where} is outside the array ({count})")
            lo = offset + index * step
            hi = lo + step
            if lo // block_size not in verified or (hi - 1) // block_size != lo // block_size:
                self._verify(lo, hi)
            out.append(bytes(source[base + lo : base + hi]))
        return out

    def values(self, name: str, start: int, stop: int) -> tuple[Any, ...]:
        """``name[start:stop]`` as a tuple of numbers (a few: one read, no view)."""
        lo, hi, code = self._span(name, start, stop)
        return struct.unpack_from(f"<{stop - start}{code}", self._map, lo)

    def numpy(self, name: str, start: int, stop: int) -> Any:
        """``name[start:stop]`` as a numpy array over the map (for large postings)."""
        import numpy as np

        lo, hi, _ = self._span(name, start, stop)
        dtype = np.dtype("<" + self.arrays[name]["type"])
        return np.frombuffer(self._map, dtype=dtype, count=stop - start, offset=lo)
