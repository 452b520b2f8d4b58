"""A shard's stored rows, each compressed alone against a dictionary of the shard's own rows.

A row is a chunk's canonical JSON: its text and a kilobyte of keys, ids and provenance that repeat
from row to row. Each row is one Zstandard frame of its own (any row opens without its neighbours),
compressed at ``LEVEL`` against a raw-content dictionary taken from the shard itself: up to
``DICT_ROWS`` rows spread evenly through it, at most ``MAX_DICT_BYTES`` and at most a sixteenth of
the rows' bytes. The repeated keys and ids then cost a few bytes a row, and a row opens in a few
microseconds. Arrays (layout 4): ``rowDict`` (the dictionary), ``rowOffsets`` u8 (where each
compressed row begins, and one past the last) and ``rowBytes`` (the compressed rows).

Older shards are read as they were written: layout 3 deflated each row (raw deflate, zlib) against
its ``rowDict``; layout 2 and before stored the rows as they are (no ``rowDict``).

The bytes depend only on the rows and the Zstandard library at ``LEVEL`` (one thread, no checksum,
no dictionary id, the content size in each frame's header): python-zstandard bundles its libzstd,
so one version of it writes the same bytes on every platform (the shard's name is their hash), and
``codec`` names that version in the shards' meta, so another one rebuilds them. A system zlib did not
promise that: zlib-ng deflates the same input to other bytes.
"""

from __future__ import annotations

import array
import itertools
import sys
import threading
import zlib
from collections.abc import Sequence
from typing import Any

# Zstandard's level 3 (its default): on 20,000 rows of 34 MiB, 8.5 MiB in 0.2 s of CPU, against 8.6 MiB
# in 1.0-1.8 s for zlib's level 2 (layout 3); a row opens in about 4 microseconds rather than 8
LEVEL = 3
MAX_DICT_BYTES = 64 * 1024  # past 64 KiB a larger dictionary shrank 20,000 rows by under 2 %
DICT_ROWS = 64  # rows sampled for the dictionary, spread evenly through the shard
DICT_SHARE = 16  # the dictionary is at most this fraction of the rows' bytes
MIN_DICT_BYTES = 8  # Zstandard refuses a raw-content dictionary shorter than this
WINDOW_BITS = -15  # layout 3's raw deflate (read only)


class RowError(ValueError):
    """A stored row that does not decompress to one whole row (damaged bytes or offsets)."""


def codec() -> str:
    """What writes the rows' bytes: python-zstandard's version, its bundled libzstd's, the level. Every
    shard and the stage's meta record it (``rowCodec``), and ``index`` rebuilds a home's shards when
    the installed codec differs from theirs: another version may compress the same rows to other
    bytes, and a home never holds two codecs' bytes (a fresh and an incremental build stay equal)."""
    import zstandard

    libzstd = ".".join(str(part) for part in zstandard.ZSTD_VERSION)
    return f"python-zstandard {zstandard.__version__}, libzstd {libzstd}, level {LEVEL}"


def dictionary(rows: Sequence[bytes]) -> bytes:
    """The dictionary of a shard holding ``rows``: up to ``DICT_ROWS`` rows spread evenly through
    it, joined, and of that the last ``MAX_DICT_BYTES`` or a sixteenth of all the rows' bytes, the
    smaller (a small shard, whose dictionary would cost more than it saves, gets a small one or
    none)."""
    size = min(MAX_DICT_BYTES, sum(map(len, rows)) // DICT_SHARE)
    if size < MIN_DICT_BYTES:
        return b""
    count = min(DICT_ROWS, len(rows))
    picked = sorted({i * len(rows) // count for i in range(count)})
    return b"".join(rows[i] for i in picked)[-size:]


def row_arrays(rows: Sequence[bytes]) -> dict[str, tuple[str, bytes | list[bytes]]]:
    """The shard arrays that store ``rows`` (each row's canonical JSON bytes, in row order): the
    dictionary, each compressed row's offset, and the compressed rows as pieces (never joined here)."""
    zdict, stored = compress_rows(rows)
    offsets = array.array("Q", [0])
    offsets.extend(itertools.accumulate(map(len, stored)))
    if sys.byteorder == "big":  # pragma: no cover - the shard's arrays are little-endian
        offsets.byteswap()
    return {"rowDict": ("u1", zdict), "rowOffsets": ("u8", offsets.tobytes()), "rowBytes": ("u1", stored)}


def compress_rows(rows: Sequence[bytes]) -> tuple[bytes, list[bytes]]:
    """``rows`` compressed one by one against their shard's ``dictionary``: (dictionary, rows)."""
    import zstandard

    zdict = dictionary(rows)
    compressor = zstandard.ZstdCompressor(level=LEVEL, dict_data=_dict(zdict), write_checksum=False,
                                          write_content_size=True, write_dict_id=False, threads=0)
    return zdict, [compressor.compress(row) for row in rows]


def _dict(zdict: bytes) -> Any:
    import zstandard

    return zstandard.ZstdCompressionDict(zdict, dict_type=zstandard.DICT_TYPE_RAWCONTENT) if zdict else None


class RowInflater:
    """Opens a shard's compressed rows (layout 4: Zstandard frames against ``zdict``; ``layout`` 3:
    raw deflate against it), one row at a time, from any thread: a Zstandard decompressor must not
    be used by two threads at once, so each thread gets its own (and its own dictionary object); a
    zlib decompressor copies itself under its own lock."""

    def __init__(self, zdict: bytes, layout: int = 4) -> None:
        self._deflated = layout == 3
        self._zdict = zdict
        self._local = threading.local()
        if self._deflated:
            self._primed = (zlib.decompressobj(WINDOW_BITS, zdict=zdict) if zdict
                            else zlib.decompressobj(WINDOW_BITS))

    def decompressor(self) -> Any:
        """This thread's Zstandard decompressor (made on its first row)."""
        found = getattr(self._local, "decompressor", None)
        if found is None:
            import zstandard

            found = self._local.decompressor = zstandard.ZstdDecompressor(dict_data=_dict(self._zdict))
        return found

    def inflate(self, data: bytes | memoryview) -> bytes:
        """One row's bytes from its compressed ``data`` (``RowError`` where they are not one whole
        row: cut short, damaged, or running on past it)."""
        inflater: Any
        failure: type[Exception]
        if self._deflated:
            inflater, failure = self._primed.copy(), zlib.error
        else:
            import zstandard

            inflater, failure = self.decompressor().decompressobj(), zstandard.ZstdError
        try:
            out: bytes = inflater.decompress(data)
        except failure as error:
            raise RowError(str(error)) from None
        if not inflater.eof or inflater.unused_data:
            raise RowError("a stored row does not end where its offsets say")
        return out
