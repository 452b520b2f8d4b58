"""The chunks stage: every committed document cut into chunks by the chunker that accepts it.

Layout: ``chunks/index.json`` names one object per document (key = the document's source key, as
in the documents stage); the object holds that document's chunks as canonical JSON. The commit's
meta records the documents fingerprint it was built from, the options and chunker versions, and the
document object each key came from, so a re-run reuses every document that did not change without
reading it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import attrs

from episteme_core.chunk import Chunk, chunk_from_json
from episteme_core.errors import EpistemeError
from episteme_core.gcpause import paused_cycle_gc
from episteme_core.records import StageEntry, StageIndex
from episteme_core.store.home import Home
from episteme_core.store.stage import Stage

STAGE = "chunks"
OBJECT_SCHEMA_VERSION = "1"

ProgressFn = Callable[[int, int, str], None]
PENDING_BYTES = 256 * 1024 * 1024  # chunk objects held before they are written


def chunks_stage(home: Home) -> Stage:
    return Stage(home, STAGE)


@attrs.frozen
class ChunkReport:
    """What ``episteme chunk`` did."""

    documents: int
    chunks: int
    reused: int  # documents whose chunks were kept without re-chunking
    chunked: int  # documents cut this run
    removed: int  # documents dropped since the last commit
    fingerprint: str
    documents_fingerprint: str | None
    max_chars: int
    overlap_chars: int


def check_options(max_chars: int, overlap_chars: int) -> None:
    """``overlap_chars`` must be less than ``max_chars``: else ``INVALID_USAGE``."""
    if overlap_chars >= max_chars:
        raise EpistemeError(
            "INVALID_USAGE",
            f"--overlap-chars ({overlap_chars}) must be less than --max-chars ({max_chars})",
            details={"maxChars": max_chars, "overlapChars": overlap_chars},
        )


def read_document_fast(home: Home, entry: StageEntry) -> Any:
    """A committed document: bytes checked against the strict, fingerprinted index, then plain JSON.

    The stage's sha256 already proves these are the canonical bytes the extractor wrote (with their
    id), so the strict parser's tree walk and the id re-hash would only repeat that proof.
    """
    from episteme_core.convert import structure
    from episteme_core.document import Document
    from episteme_core.documents import documents_stage

    stage = documents_stage(home)
    source = str(stage.object_path(entry))
    try:
        data = json.loads(stage.read_bytes(entry))
    except ValueError as exc:
        raise EpistemeError("INVALID_INPUT", f"{source}: not valid JSON", details={"path": source}) from exc
    return structure(data, Document, source=source)


def put_objects(stage: Stage, items: list[tuple[str, bytes, str]]) -> list[StageEntry]:
    """Write many content-addressed objects; same layout and entries as ``Stage.put_bytes``.

    Inside a writing command the kernel batches their durability (one ``syncfs`` before the index
    that names them, see ``store.atomic.deferred_sync``); elsewhere each file is fsync'd.
    """
    return [stage.put_bytes(key, data, suffix) for key, data, suffix in items]


def verbatim_blocks(home: Home, document: Any) -> frozenset[str]:
    """Ids of the blocks whose span in the decoded source holds exactly their text.

    Checked against the captured bytes (decoded as the text extractor does), so a citation claims
    source offsets only where they are true; a missing blob or another encoding claims nothing.
    """
    spans = [b for b in document.blocks() if b.span is not None and b.span.end - b.span.start == len(b.text)]
    if not spans:
        return frozenset()
    from episteme_core.store.blobs import BlobStore

    try:
        content = BlobStore(home.blobs_dir).get(document.source_sha256)
        from episteme_core.extract.text import decode

        charset = None
        for part in (document.content_type or "").split(";")[1:]:
            key, _, value = part.strip().partition("=")
            if key.lower() == "charset":
                charset = value.strip().strip('"') or None
        text = decode(content, charset)
    except Exception:  # no blob, unknown codec: claim nothing
        return frozenset()
    return frozenset(b.id for b in spans if text[b.span.start : b.span.end] == b.text)


def _chunker_for(chunkers: list[Any], document: Any) -> Any:
    for chunker in chunkers:
        if chunker.accepts(document):
            return chunker
    raise EpistemeError(
        "INVALID_INPUT",
        f"no chunker accepts document {document.source} (type {document.document_type})",
        details={"source": document.source},
    )


def chunk_home(
    home: Home,
    chunkers: list[Any],
    *,
    max_chars: int,
    overlap_chars: int,
    progress: ProgressFn | None = None,
) -> ChunkReport:
    """Chunk every committed document and commit the chunks stage; call inside ``ctx.writing()``."""
    with paused_cycle_gc():
        return _chunk_home(home, chunkers, max_chars=max_chars, overlap_chars=overlap_chars,
                           progress=progress)


def _chunk_fast(
    home: Home, chunkers: list[Any], entry: StageEntry, max_chars: int, overlap_chars: int
) -> tuple[bytes | None, int]:
    """A document's chunks object cut from its stored JSON, without records (``chunk_rows``).

    (None, 0) when a chunker on the way cannot judge JSON, the one that accepts it has no
    ``chunk_rows``, or the JSON is not as the extractor writes it: the record path then decides
    (and names any problem with the document).
    """
    from episteme_core.chunking.rows import body_bytes, verbatim_ids
    from episteme_core.documents import documents_stage

    stage = documents_stage(home)
    try:
        data = json.loads(stage.read_bytes(entry))
        chosen = None
        for chunker in chunkers:
            judge = getattr(chunker, "accepts_json", None)
            if not callable(judge):
                return None, 0
            if judge(data):
                chosen = chunker
                break
        if chosen is None or not callable(getattr(chosen, "chunk_rows", None)):
            return None, 0
        rows = chosen.chunk_rows(data, max_chars=max_chars, overlap_chars=overlap_chars,
                                 verbatim=verbatim_ids(home, data))
        return body_bytes(f"{chosen.name}/{chosen.version}", data, rows), len(rows)
    except (ValueError, KeyError, TypeError, AttributeError, IndexError):
        return None, 0


def _chunk_records(
    home: Home, chunkers: list[Any], entry: StageEntry, max_chars: int, overlap_chars: int
) -> tuple[bytes, int]:
    """A document's chunks object through ``Document`` and ``Chunk`` records (any chunker)."""
    from episteme_core.canonical import canonical_bytes

    document = read_document_fast(home, entry)
    chunker = _chunker_for(chunkers, document)
    options_ = {"max_chars": max_chars, "overlap_chars": overlap_chars,
                "verbatim": verbatim_blocks(home, document)}
    if callable(getattr(chunker, "chunk_json", None)):
        rows = chunker.chunk_json(document, **options_)
    else:  # a third-party chunker that returns records
        rows = [chunk.to_json() for chunk in chunker.chunk(document, **options_)]
    body = {
        "schemaVersion": OBJECT_SCHEMA_VERSION,
        "documentId": document.id,
        "source": document.source,
        "sourceKind": document.source_kind,
        "chunker": f"{chunker.name}/{chunker.version}",
        "chunks": rows,
    }
    return canonical_bytes(body), len(rows)


def _chunk_home(
    home: Home, chunkers: list[Any], *, max_chars: int, overlap_chars: int, progress: ProgressFn | None,
) -> ChunkReport:
    from episteme_core.documents import documents_stage

    check_options(max_chars, overlap_chars)
    docs_stage = documents_stage(home)
    docs_index = docs_stage.read_index()
    doc_entries = list(docs_index.entries) if docs_index else []
    stage = chunks_stage(home)
    previous = stage.read_index()
    versions = {c.name: c.version for c in sorted(chunkers, key=lambda c: c.name)}
    options = {"maxChars": max_chars, "overlapChars": overlap_chars}
    reusable: dict[str, StageEntry] = {}
    previous_inputs: dict[str, Any] = {}
    if previous is not None and previous.meta.get("options") == options and (
        previous.meta.get("chunkers") == versions
    ):
        reusable = {entry.key: entry for entry in previous.entries}
        previous_inputs = dict(previous.meta.get("inputs") or {})
    entries: list[StageEntry] = []
    pending: list[tuple[str, bytes, str]] = []
    pending_bytes = 0
    inputs: dict[str, str] = {}
    counts: dict[str, int] = {}
    previous_counts = dict(previous.meta.get("counts") or {}) if previous else {}
    reused = chunked = 0
    for number, doc_entry in enumerate(doc_entries, start=1):
        key = doc_entry.key
        inputs[key] = doc_entry.sha256
        old = reusable.get(key)
        if old is not None and previous_inputs.get(key) == doc_entry.sha256 and key in previous_counts:
            entries.append(old)
            counts[key] = int(previous_counts[key])
            reused += 1
        else:
            data, count = _chunk_fast(home, chunkers, doc_entry, max_chars, overlap_chars)
            if data is None:
                data, count = _chunk_records(home, chunkers, doc_entry, max_chars, overlap_chars)
            pending.append((key, data, ".json"))
            pending_bytes += len(data)
            if pending_bytes > PENDING_BYTES:  # bounded memory: write this batch (one sync each)
                entries.extend(put_objects(stage, pending))
                pending, pending_bytes = [], 0
            counts[key] = count
            chunked += 1
        if progress:
            progress(number, len(doc_entries), key)
    documents_fingerprint = docs_index.fingerprint if docs_index else None
    entries.extend(put_objects(stage, pending))
    meta: dict[str, Any] = {
        "documentsFingerprint": documents_fingerprint,
        "options": options,
        "chunkers": versions,
        "inputs": inputs,
        "counts": counts,
        "chunks": sum(counts.values()),
    }
    removed = len({e.key for e in previous.entries} - set(inputs)) if previous else 0
    if previous is not None and previous.entries == sorted(entries, key=lambda e: e.key) and (
        previous.meta == meta
    ):
        index = previous  # nothing changed: keep the commit (and its bytes) as it is
    else:
        index = stage.commit(entries, meta)
        stage.prune(index)
    return ChunkReport(
        documents=len(doc_entries),
        chunks=sum(counts.values()),
        reused=reused,
        chunked=chunked,
        removed=removed,
        fingerprint=index.fingerprint,
        documents_fingerprint=documents_fingerprint,
        max_chars=max_chars,
        overlap_chars=overlap_chars,
    )


def read_chunks_index(home: Home) -> StageIndex | None:
    return chunks_stage(home).read_index()


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
            from episteme_core.canonical import canonical_bytes

            rows = [(row, canonical_bytes(row)[:-1]) for row in body["chunks"]]
        yield from rows


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
    stage = chunks_stage(home)
    result: list[Chunk] = []
    for body in iter_chunk_objects(home):
        for data in body["chunks"]:
            result.append(chunk_from_json(data, source=str(stage.index_path)))
    return result
