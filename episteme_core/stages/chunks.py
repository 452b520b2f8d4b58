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
from episteme_core.records.storage import StageEntry, StageIndex
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
    hash-verified (``iter_chunk_rows`` for one object: what one shard-building task reads)."""
    data = stage.read_bytes(entry)  # size and sha256 checked against the strict index
    path = str(stage.object_path(entry))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EpistemeError("INVALID_INPUT", f"{path}: not valid UTF-8", details={"path": path}) from exc
    rows = _canonical_rows(text)
    if rows is None:
        try:
            body = json.loads(text)
        except ValueError as exc:
            raise EpistemeError(
                "INVALID_INPUT", f"{path}: not valid JSON", details={"path": path}
            ) from exc
        if not isinstance(body, dict) or not isinstance(body.get("chunks"), list):
            raise EpistemeError("INVALID_INPUT", f"{path}: not a chunks object", details={"path": path})
        from episteme_core.records.canonical import canonical_bytes

        rows = [(row, canonical_bytes(row)[:-1]) for row in body["chunks"]]
    return rows


_SCAN: Any = None


def _canonical_rows(text: str) -> list[tuple[dict[str, Any], bytes]] | None:
    """The rows of a chunks object in canonical layout with each row's own bytes; None otherwise.

    Canonical JSON has no whitespace, so the object is ``{"key":value,...}`` and each row of
    ``"chunks":[...]`` is the text between its commas; the C scanner gives where each value ends.
    """
    global _SCAN
    if _SCAN is None:
        from json.scanner import make_scanner

        _SCAN = make_scanner(json.JSONDecoder())  # type: ignore[arg-type]
    from json.decoder import scanstring  # type: ignore[attr-defined]

    scan = _SCAN
    rows: list[tuple[dict[str, Any], bytes]] | None = None
    try:
        if text[:2] != '{"':
            return None
        at = 1
        while True:
            if text[at] != '"':
                return None
            key, at = scanstring(text, at + 1)
            if text[at] != ":":
                return None
            at += 1
            if key == "chunks":
                if text[at] != "[" or rows is not None:
                    return None
                rows = []
                at += 1
                if text[at] == "]":
                    at += 1
                else:
                    while True:
                        start = at
                        row, at = scan(text, at)
                        if not isinstance(row, dict):
                            return None
                        rows.append((row, text[start:at].encode("utf-8")))
                        if text[at] == "]":
                            at += 1
                            break
                        if text[at] != ",":
                            return None
                        at += 1
            else:
                _, at = scan(text, at)
            if text[at] == "}":
                return rows if text[at + 1 :] in ("", "\n") else None
            if text[at] != ",":
                return None
            at += 1
    except (IndexError, StopIteration, ValueError):
        return None


def read_chunks(home: Home) -> list[Chunk]:
    """Every committed chunk as a record, in stage order (documents by key, chunks in reading order)."""
    from episteme_core.records.evidence import chunk_from_json  # the records: not on the re-run path

    stage = chunks_stage(home)
    result: list[Chunk] = []
    for body in iter_chunk_objects(home):
        for data in body["chunks"]:
            result.append(chunk_from_json(data, source=str(stage.index_path)))
    return result
