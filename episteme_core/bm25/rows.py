"""A shard's stored rows, each compressed alone against a dictionary of the shard's own rows.

A row is a chunk's canonical JSON: its text and a kilobyte of keys, ids and provenance that repeat
from row to row. Each row is deflated alone (raw deflate: any row opens without its neighbours)
with a preset dictionary taken from the shard itself: rows spread evenly through it, at most 32 KiB
(the most deflate looks back) and at most a sixteenth of the rows' bytes. The repeated keys and ids
then cost a few bytes a row, and a row opens in a few microseconds. Arrays (layout 3): ``rowDict``
(the dictionary), ``rowOffsets`` u8 (where each compressed row begins, and one past the last) and
``rowBytes`` (the compressed rows). A shard without ``rowDict`` (layout 2 and before) stores its
rows as they are.

The bytes depend only on the rows and zlib's deflate at ``LEVEL`` (the shard's name is their hash).
"""

from __future__ import annotations

import array
import itertools
import sys
import zlib
from collections.abc import Sequence

# zlib's level 2: on 20,000 rows 0.25 of their size in 0.5 s of CPU; 6 (the default) gives 0.23 in 1.4 s
# and level 1, oddly, is slower with a dictionary than 2
LEVEL = 2
WINDOW_BITS = -15  # raw deflate: no zlib header or checksum per row (the shard's block hashes check them)
MAX_DICT_BYTES = 32 * 1024  # deflate looks back at most 32 KiB: more dictionary is never used
DICT_ROWS = 32  # rows sampled for the dictionary, spread evenly through the shard
DICT_SHARE = 16  # the dictionary is at most this fraction of the rows' bytes


def dictionary(rows: Sequence[bytes]) -> bytes:
    """The preset dictionary of a shard holding ``rows``: up to ``DICT_ROWS`` rows spread evenly
    through it, joined, and of that the last ``MAX_DICT_BYTES`` or a sixteenth of all the rows'
    bytes, the smaller (deflate prefers what lies near the end; a small shard, whose dictionary
    would cost more than it saves, gets a small one or none)."""
    size = min(MAX_DICT_BYTES, sum(map(len, rows)) // DICT_SHARE)
    if size == 0:
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
    """``rows`` deflated one by one against their shard's ``dictionary``: (dictionary, rows)."""
    zdict = dictionary(rows)
    if not zdict:
        return b"", [_deflate(zlib.compressobj(LEVEL, zlib.DEFLATED, WINDOW_BITS), row) for row in rows]
    primed = zlib.compressobj(LEVEL, zlib.DEFLATED, WINDOW_BITS, zdict=zdict)
    return zdict, [_deflate(primed.copy(), row) for row in rows]


def _deflate(compressor: zlib._Compress, row: bytes) -> bytes:
    return compressor.compress(row) + compressor.flush()


class RowInflater:
    """Opens a shard's compressed rows: one primed decompressor, copied for each row."""

    def __init__(self, zdict: bytes) -> None:
        self._primed = (zlib.decompressobj(WINDOW_BITS, zdict=zdict) if zdict
                        else zlib.decompressobj(WINDOW_BITS))

    def inflate(self, data: bytes | memoryview) -> bytes:
        """One row's bytes from its compressed ``data`` (``zlib.error`` where they are not a whole row)."""
        inflater = self._primed.copy()
        out = inflater.decompress(data)
        if not inflater.eof or inflater.unused_data:
            raise zlib.error("a stored row does not end where its offsets say")
        return out
