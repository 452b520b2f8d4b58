"""A shard's stored rows are compressed one by one (Zstandard) against a dictionary of the shard's own
rows: every row comes back byte for byte, a small shard gets a small dictionary, a row whose bytes
are damaged is a clear error, and shards of the layouts before (rows deflated, rows as they are)
answer the same and are rebuilt by the next index."""

from __future__ import annotations

import array
import zlib
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from episteme_core.bm25 import build as build_module
from episteme_core.bm25 import rows as rows_module
from episteme_core.bm25 import writer as writer_module
from episteme_core.bm25.rows import MAX_DICT_BYTES, RowError, RowInflater, dictionary, row_arrays
from episteme_core.bm25.shards import open_shards
from episteme_core.bm25.words import LAYOUT
from episteme_core.bm25.writer import index_home
from episteme_core.errors import EpistemeError
from episteme_core.search.query import query
from episteme_core.store.home import Home

from .conftest import make_document


def _rows_back(arrays: dict[str, Any]) -> list[bytes]:
    inflater = RowInflater(arrays["rowDict"][1])
    offsets = array.array("Q", arrays["rowOffsets"][1])
    joined = b"".join(arrays["rowBytes"][1])
    assert offsets[0] == 0 and offsets[-1] == len(joined)
    return [inflater.inflate(joined[lo:hi]) for lo, hi in zip(offsets, offsets[1:], strict=False)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.binary(max_size=3000), max_size=40))
def test_every_row_comes_back_byte_for_byte(rows: list[bytes]) -> None:
    arrays = row_arrays(rows)
    assert _rows_back(arrays) == rows
    assert len(arrays["rowDict"][1]) <= min(MAX_DICT_BYTES, sum(map(len, rows)) // rows_module.DICT_SHARE)
    assert row_arrays(rows) == arrays  # the same rows, the same bytes


def test_the_dictionary_is_at_most_64_kib_and_a_sixteenth_of_the_rows() -> None:
    many = [b'{"id":"%064d","text":"%s"}' % (n, b"word " * 300) for n in range(800)]
    assert len(dictionary(many)) == MAX_DICT_BYTES == 64 * 1024
    few = many[:3]
    assert len(dictionary(few)) == sum(map(len, few)) // 16
    assert dictionary(many[:1][:0]) == b"" and dictionary([b"x" * 15]) == b""
    # at and just past the shortest dictionary Zstandard takes (8 bytes): 128 and 127 bytes of rows
    assert len(dictionary([b"y" * 128])) == 8 and dictionary([b"y" * 127]) == b""
    assert _rows_back(row_arrays([b"y" * 128])) == [b"y" * 128]


def test_rows_of_repeated_keys_shrink_to_a_fraction() -> None:
    rows = [b'{"documentId":"%064x","kind":"paragraph","source":"https://e.org/%d","text":"row %d of the '
            b'shard, saying what it says"}' % (n * 7919, n, n) for n in range(2000)]
    stored = sum(map(len, row_arrays(rows)["rowBytes"][1])) + len(dictionary(rows))
    assert stored < 0.5 * sum(map(len, rows))


def test_a_damaged_or_cut_row_does_not_inflate() -> None:
    rows = [b"the first row, " * 20, b"the second row, " * 20]
    arrays = row_arrays(rows)
    inflater = RowInflater(arrays["rowDict"][1])
    first = arrays["rowBytes"][1][0]
    with pytest.raises(RowError):
        inflater.inflate(first[:-2])  # cut short: not a whole row
    with pytest.raises(RowError):
        inflater.inflate(first + arrays["rowBytes"][1][1])  # runs into the next row
    with pytest.raises(RowError):
        inflater.inflate(b"\x00" * len(first))  # not a frame at all
    assert inflater.inflate(first) == rows[0]  # the inflater is unharmed


def test_threads_open_rows_of_one_shard_at_once_each_with_its_own_decompressor() -> None:
    """A server's threads read rows of one shard at once: every row comes back whole in each, and no
    two threads share a Zstandard decompressor (one used by two threads at once crashed the server)."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    rows = [b'{"id":"%064d","text":"%s"}' % (n, b"the row's words " * (n % 40 + 1)) for n in range(400)]
    arrays = row_arrays(rows)
    inflater = RowInflater(arrays["rowDict"][1])
    stored = arrays["rowBytes"][1]
    together = threading.Barrier(4, timeout=60)  # four threads at once, each reading every row

    def read_all(_: int) -> tuple[int, list[bytes]]:
        together.wait()
        return id(inflater.decompressor()), [inflater.inflate(piece) for piece in stored * 5]

    with ThreadPoolExecutor(max_workers=4) as pool:
        answers = list(pool.map(read_all, range(4)))
    assert all(back == rows * 5 for _, back in answers)
    assert len({owner for owner, _ in answers}) == 4


def test_rows_are_the_same_bytes_on_every_run_and_carry_no_dictionary_id_or_checksum() -> None:
    """What a row's frame holds is only what opening it needs: the same rows give the same bytes,
    and a frame's header names no dictionary id and no checksum (the shard's block hashes check the
    bytes), so the shard's name depends on the rows and the library's version alone."""
    import zstandard

    rows = [b'{"id":"%064d","text":"row %d"}' % (n, n) for n in range(300)]
    first, second = row_arrays(rows), row_arrays(list(rows))
    assert first == second
    for frame in first["rowBytes"][1][:5]:
        params = zstandard.get_frame_parameters(frame)
        assert params.dict_id == 0 and not params.has_checksum and params.content_size > 0


def _docs() -> list[Any]:
    return [make_document(f"https://e.org/{n}", [(f"Part {n}", [f"the whale and the harpoon, number {n}",
                                                              f"a sea of {n} ships"])]) for n in range(30)]


def _plain(result: Any) -> Any:
    data = attrs.asdict(result)
    for item in data["results"]:
        item.pop("shard")  # a rebuilt shard has another name
    return data


def _rows_deflated(rows: list[bytes]) -> dict[str, tuple[str, Any]]:
    """Layout 3's row arrays, written as layout 3 wrote them: each row raw-deflated at level 2 against
    a dictionary of at most 32 KiB of up to 32 of the shard's rows."""
    count = min(32, len(rows))
    size = min(32 * 1024, sum(map(len, rows)) // 16)
    picked = sorted({i * len(rows) // count for i in range(count)}) if rows else []
    zdict = b"".join(rows[i] for i in picked)[-size:] if size else b""
    primed = (zlib.compressobj(2, zlib.DEFLATED, -15, zdict=zdict) if zdict
              else zlib.compressobj(2, zlib.DEFLATED, -15))
    stored = []
    for row in rows:
        compressor = primed.copy()
        stored.append(compressor.compress(row) + compressor.flush())
    offsets = array.array("Q", [0])
    for piece in stored:
        offsets.append(offsets[-1] + len(piece))
    return {"rowDict": ("u1", zdict), "rowOffsets": ("u8", offsets.tobytes()), "rowBytes": ("u1", stored)}


def _rows_as_they_are(rows: list[bytes]) -> dict[str, tuple[str, Any]]:
    """Layout 2's row arrays: the JSON bytes as they are, no dictionary."""
    offsets = array.array("Q", [0])
    for row in rows:
        offsets.append(offsets[-1] + len(row))
    return {"rowOffsets": ("u8", offsets.tobytes()), "rowBytes": ("u1", list(rows))}


@pytest.mark.parametrize(("layout", "rows_of"), [(3, _rows_deflated), (2, _rows_as_they_are)])
def test_a_shard_reads_its_rows_and_a_shard_of_a_layout_before_answers_the_same(  # type: ignore[no-untyped-def]
        build, monkeypatch: pytest.MonkeyPatch, layout: int, rows_of: Any) -> None:
    new = Home(build(_docs(), name="new"))
    shards = open_shards(new)
    assert shards.meta["layout"] == LAYOUT == 4 and "rowDict" in shards.shards[0].file.arrays
    with monkeypatch.context() as patch:
        patch.setattr(build_module, "row_arrays", rows_of)
        patch.setattr(build_module, "LAYOUT", layout)
        patch.setattr(writer_module, "LAYOUT", layout)
        old = Home(build(_docs(), name="old"))
    before = open_shards(old)
    assert before.meta["layout"] == layout == before.shards[0].meta["layout"]
    assert ("rowDict" in before.shards[0].file.arrays) == (layout == 3)
    old_rows = [before.shards[0].row_json(r) for r in range(before.shards[0].rows)]
    assert old_rows == [shards.shards[0].row_json(r) for r in range(shards.shards[0].rows)]
    for term in ("whale harpoon", '"a sea"', "ships 7"):
        assert _plain(query(old, term, limit=10, shard_set=before)) == _plain(
            query(new, term, limit=10, shard_set=shards))
    assert index_home(old).resharded  # the next index rebuilds them in this layout
    after = open_shards(old)
    assert after.meta["layout"] == LAYOUT and "rowDict" in after.shards[0].file.arrays


def test_a_row_that_does_not_inflate_is_a_clear_error(build) -> None:  # type: ignore[no-untyped-def]
    shard = open_shards(Home(build(_docs()))).shards[0]

    class Broken(RowInflater):
        def inflate(self, data: bytes | memoryview) -> bytes:
            return super().inflate(bytes(data)[:-1])

    shard._inflater = Broken(shard.file.raw("rowDict", 0, shard.file.count("rowDict")))
    with pytest.raises(EpistemeError) as raised:
        shard.row_json(0)
    assert raised.value.code == "INVALID_INPUT" and "row 0 does not inflate" in raised.value.message


def test_the_chunk_ids_of_many_hits_are_read_in_one_call_and_checked(build) -> None:  # type: ignore[no-untyped-def]
    """``records`` gives what ``raw`` gives for each record, refuses one past the array, and checks
    the blocks it reads against their hashes."""
    from pathlib import Path

    from episteme_core.bm25.shardfile import ShardFile, header_sha256

    root = Path(build(_docs()))
    shard = open_shards(Home(root)).shards[0]
    rows = [shard.rows - 1, 0, 3, 3]
    assert shard.file.records("ids", rows, 32) == [shard.file.raw("ids", 32 * r, 32 * r + 32) for r in rows]
    assert [chunk.hex() for chunk in shard.file.records("ids", rows, 32)] == [shard.chunk_id(r) for r in rows]
    for outside in (shard.rows, -1):
        with pytest.raises(EpistemeError, match="outside the array"):
            shard.file.records("ids", [outside], 32)
    path = next((root / "shards" / "objects").rglob("*.shard"))
    data = bytearray(path.read_bytes())
    start = shard.file._base + shard.file.arrays["ids"]["offset"]
    data[start + 5] ^= 0xFF  # the first chunk id
    damaged = root / "damaged.shard"
    damaged.write_bytes(bytes(data))
    opened = ShardFile(damaged, size=len(data), header_sha256=header_sha256(bytes(data)))
    with pytest.raises(EpistemeError, match="does not match its hash"):
        opened.records("ids", [0], 32)


def test_the_shards_name_their_row_codec_and_another_codec_rebuilds_them(  # type: ignore[no-untyped-def]
        build, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another python-zstandard may compress the same rows to other bytes: every shard and the stage
    name the codec that wrote them, and the next index rebuilds a home written by another one (a home
    never mixes two codecs' bytes), while an unchanged home with the same codec is left as it is."""
    import zstandard

    home = Home(build(_docs()))
    shards = open_shards(home)
    assert shards.meta["rowCodec"] == rows_module.codec() == shards.shards[0].meta["rowCodec"]
    assert zstandard.__version__ in rows_module.codec() and "level 3" in rows_module.codec()
    names = sorted(shards.meta["shards"])
    assert not index_home(home).resharded and sorted(open_shards(home).meta["shards"]) == names
    monkeypatch.setattr(rows_module, "codec", lambda: "another codec")
    assert index_home(home).resharded
    after = open_shards(home)
    assert after.meta["rowCodec"] == "another codec" == after.shards[0].meta["rowCodec"]
    assert not index_home(home).resharded  # the same codec again: kept
