"""The chunks stage, read: every committed document's chunks, as records or as canonical JSON rows.

Layout: ``chunks/index.json`` names one object per document (key = the document's source key, as
in the documents stage); the object holds that document's chunks as canonical JSON. The writer is
``chunking.run.chunk_home``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from episteme_core.errors import EpistemeError
from episteme_core.records.stage_index import StageEntry, StageIndex
from episteme_core.store.commits import Stage
from episteme_core.store.home import Home

if TYPE_CHECKING:
    from episteme_core.records.evidence import Chunk

STAGE = "chunks"


def chunks_stage(home: Home) -> Stage:
    return Stage(home, STAGE)


def object_source_kind(home: Home, entry: StageEntry) -> str | None:
    """The source kind a committed chunks object records (for a commit made before kinds were kept)."""
    body = json.loads(chunks_stage(home).read_bytes(entry))
    kind = body.get("sourceKind") if isinstance(body, dict) else None
    return kind if isinstance(kind, str) else None


def iter_chunk_objects(home: Home, index: StageIndex | None = None) -> Iterator[dict[str, Any]]:
    """Each document's chunk object as JSON, hash-verified (fast path: the bytes are ours, canonical)."""
    stage = chunks_stage(home)
    index = index if index is not None else stage.read_index()
    if index is None:
        return
    for entry in index.entries:
        data = stage.read_bytes(entry)  # size and sha256 checked against the strict index
        try:
            body = json.loads(data)
        except ValueError as exc:
            raise EpistemeError(
                "INVALID_INPUT", f"{stage.object_path(entry)}: not valid JSON",
                details={"path": str(stage.object_path(entry))},
            ) from exc
        if not isinstance(body, dict) or not isinstance(body.get("chunks"), list):
            raise EpistemeError(
                "INVALID_INPUT", f"{stage.object_path(entry)}: not a chunks object",
                details={"path": str(stage.object_path(entry))},
            )
        yield body


def iter_chunk_rows(home: Home, index: StageIndex | None = None) -> Iterator[tuple[dict[str, Any], bytes]]:
    """Every committed chunk as (JSON, its canonical bytes), hash-verified, in stage order.

    The bytes are cut from the stored object (canonical JSON, as ``chunk_home`` writes it), so a
    reader that stores rows (the shard builder) need not encode them again. An object that is not
    in that layout (no writer of ours makes one) is parsed and its rows encoded canonically.
    """
    stage = chunks_stage(home)
    index = index if index is not None else stage.read_index()
    if index is None:
        return
    for entry in index.entries:
        yield from object_rows(stage, entry)


def object_rows(stage: Stage, entry: StageEntry) -> list[tuple[dict[str, Any], bytes]]:
    """The chunks of one committed chunks object as (JSON, canonical bytes), in reading order,
    hash-verified (``iter_chunk_rows`` for one object)."""
    return list(iter_object_rows(stage, entry))


def iter_object_rows(stage: Stage, entry: StageEntry, start: int = 0,
                     stop: int | None = None) -> Iterator[tuple[dict[str, Any], bytes]]:
    """Rows ``start:stop`` of one committed chunks object as (JSON, canonical bytes), one at a time,
    hash-verified: what one shard-building task reads. The rows outside the slice are scanned and
    let go, and a row given is never held here, so memory follows the object's text, not its rows."""
    data = stage.read_bytes(entry)  # size and sha256 checked against the strict index
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        path = str(stage.object_path(entry))
        raise EpistemeError("INVALID_INPUT", f"{path}: not valid UTF-8", details={"path": path}) from exc
    del data
    given = start
    try:
        for index, row, raw in _scan_rows(text):
            if stop is not None and index >= stop:
                continue
            if index >= start:
                given = index + 1
                yield row, raw
        return
    except _NotCanonical:
        pass
    path = str(stage.object_path(entry))
    try:  # not the layout chunk_home writes (none of ours): parsed whole, the rows not given yet
        body = json.loads(text)
    except ValueError as exc:
        raise EpistemeError(
            "INVALID_INPUT", f"{path}: not valid JSON", details={"path": path}
        ) from exc
    if not isinstance(body, dict) or not isinstance(body.get("chunks"), list):
        raise EpistemeError("INVALID_INPUT", f"{path}: not a chunks object", details={"path": path})
    from episteme_core.records.canonical import canonical_bytes

    for row in body["chunks"][given:stop]:
        yield row, canonical_bytes(row)[:-1]


_SCAN: Any = None


class _NotCanonical(Exception):
    """A chunks object not in canonical layout (left to the JSON parser)."""


def _canonical_rows(text: str) -> list[tuple[dict[str, Any], bytes]] | None:
    """The rows of a chunks object in canonical layout with each row's own bytes; None otherwise."""
    try:
        return [(row, raw) for _, row, raw in _scan_rows(text)]
    except _NotCanonical:
        return None


def _scan_rows(text: str) -> Iterator[tuple[int, dict[str, Any], bytes]]:
    """Each row of a chunks object in canonical layout as (number, JSON, its bytes), as it is scanned;
    ``_NotCanonical`` where the layout is not canonical (also after rows were given).

    Canonical JSON has no whitespace, so the object is ``{"key":value,...}`` and each row of
    ``"chunks":[...]`` is the text between its commas; the C scanner gives where each value ends.
    """
    global _SCAN
    if _SCAN is None:
        from json.scanner import make_scanner

        _SCAN = make_scanner(json.JSONDecoder())  # type: ignore[arg-type]
    from json.decoder import scanstring  # type: ignore[attr-defined]

    scan = _SCAN
    seen_chunks = False
    try:
        if text[:2] != '{"':
            raise _NotCanonical
        at = 1
        while True:
            if text[at] != '"':
                raise _NotCanonical
            key, at = scanstring(text, at + 1)
            if text[at] != ":":
                raise _NotCanonical
            at += 1
            if key == "chunks":
                if text[at] != "[" or seen_chunks:
                    raise _NotCanonical
                seen_chunks = True
                at += 1
                if text[at] == "]":
                    at += 1
                else:
                    number = 0
                    while True:
                        start = at
                        row, at = scan(text, at)
                        if not isinstance(row, dict):
                            raise _NotCanonical
                        yield number, row, text[start:at].encode("utf-8")
                        number += 1
                        if text[at] == "]":
                            at += 1
                            break
                        if text[at] != ",":
                            raise _NotCanonical
                        at += 1
            else:
                _, at = scan(text, at)
            if text[at] == "}":
                if text[at + 1 :] in ("", "\n") and seen_chunks:
                    return
                raise _NotCanonical
            if text[at] != ",":
                raise _NotCanonical
            at += 1
    except (IndexError, StopIteration, ValueError) as exc:
        raise _NotCanonical from exc


def read_chunks(home: Home) -> list[Chunk]:
    """Every committed chunk as a record, in stage order (documents by key, chunks in reading order)."""
    from episteme_core.records.evidence import chunk_from_json  # the records: not on the re-run path

    stage = chunks_stage(home)
    result: list[Chunk] = []
    for body in iter_chunk_objects(home):
        for data in body["chunks"]:
            result.append(chunk_from_json(data, source=str(stage.index_path)))
    return result
