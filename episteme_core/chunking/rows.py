"""The one chunk builder: chunks as canonical JSON text, straight from a document's JSON.

Every chunk the kernel writes is built here, by the stage's fast path (over each committed
document's stored JSON) and by the record path (``Chunker.chunk`` over a ``Document``, which goes
through ``Document.to_json``) alike, as ``query.cite_row`` serves ``query.cite``. A chunk's
canonical JSON (the object ``convert.unstructure`` gives for a ``Chunk``, keys in sorted order) is
assembled from pieces, the document's labels encoded once: the text without ``id`` is hashed for
the id, and the id is spliced in at its sorted place. ``tests/retrieval/test_chunk_rows.py``
checks that each row is canonical, matches ``schema/chunk.schema.json`` and round-trips through
the ``Chunk`` record.

Chunkers say where to cut (``Cut``, or the ``window_rows`` and ``paragraph_rows`` rules); this
module says what a chunk holds.
"""

from __future__ import annotations

import bisect
import hashlib
import json
from collections.abc import Iterator, Sequence
from json.encoder import encode_basestring as _string  # type: ignore[attr-defined]
from typing import TYPE_CHECKING, Any

import attrs

from episteme_core.chunking.layout import layout, normativity_runs, windows
from episteme_core.errors import EpistemeError
from episteme_core.records.evidence import CHUNK_SCHEMA_VERSION
from episteme_core.records.trust import CONTENT_TRUST

if TYPE_CHECKING:
    from episteme_core.records.evidence import Chunk
    from episteme_core.store.home import Home

OBJECT_SCHEMA_VERSION = "1"  # of a document's chunks object in the chunks stage
RECORD_DOCUMENT_TYPE = "record"

# The canonical encoder (``canonical.canonical_bytes`` without its trailing newline), built once.
_encode = json.JSONEncoder(sort_keys=True, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode
_SCHEMA_VERSION = _string(CHUNK_SCHEMA_VERSION)


def _text(value: Any) -> str:
    try:
        return _encode(value)
    except ValueError as exc:
        raise EpistemeError("INVALID_INPUT", f"value cannot be written as canonical JSON: {exc}") from exc


def _value(value: Any) -> str:
    """Canonical JSON of one value; strings, None, booleans, ints and spans without the encoder's
    generic walk (``encode_basestring`` is what the encoder itself uses for strings). Fields the
    schema makes strings go straight to ``_string``: anything else there raises ``TypeError`` and
    the stage takes the record path, which names the problem."""
    kind = type(value)
    if kind is str:
        return _string(value)
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return int.__repr__(value)
    if kind is dict and len(value) == 2 and type(value.get("start")) is int and type(value.get("end")) is int:
        return f'{{"end":{value["end"]},"start":{value["start"]}}}'
    return _text(value)


def _seal(left: str, right: str) -> str:
    """The chunk text with its id: sha256 of the canonical bytes without ``id`` (``left + right``,
    split where ``id`` sorts), spliced in between."""
    try:
        digest = hashlib.sha256(f"{left}{right}\n".encode()).hexdigest()
    except UnicodeEncodeError as exc:
        raise EpistemeError("INVALID_INPUT", f"value cannot be written as canonical JSON: {exc}") from exc
    return f'{left},"id":"{digest}"{right}'


def chunk_diagnostics(document: dict[str, Any]) -> list[dict[str, str]]:
    """What a chunk carries of its document's diagnostics: each distinct (code, level), sorted."""
    pairs = {(str(d["code"]), str(d["level"])) for d in document.get("diagnostics") or ()}
    return [{"code": code, "level": level} for code, level in sorted(pairs)]


class _Labels:
    """The canonical pieces every chunk of one document shares (keys in sorted order)."""

    def __init__(self, data: dict[str, Any], chunker: str) -> None:
        self.authority = f',"authority":{_value(data["authority"])},"blocks":['
        self.after_blocks = (
            f'],"chunker":{_value(chunker)},"contentTrust":{_value(CONTENT_TRUST)},'
            f'"diagnostics":{_text(chunk_diagnostics(data))},'
            f'"documentId":{_value(data["id"])},"documentType":{_value(data.get("documentType"))},'
            f'"family":{_value(data["family"])},"fragment":'
        )
        self.limits = f',"limits":{_text([str(limit) for limit in data.get("limits") or ()])}'
        language = (data.get("attributes") or {}).get("language")
        self.language = f',"language":{_value(language if isinstance(language, str) and language else None)}'
        self.source = (
            f',"snapshotId":{_value(data["snapshotId"])},"source":{_value(data["source"])},'
            f'"sourceKind":{_value(data["sourceKind"])},"sourceSha256":{_value(data["sourceSha256"])},"text":'
        )
        self.end = f',"title":{_value(data["title"])},"url":{_value(data.get("url"))}}}'


def _covered(run: Sequence[dict[str, Any]], starts: list[int], ends: list[int], lo_w: int, hi_w: int,
             verbatim: frozenset[str]) -> list[tuple[dict[str, Any], str]]:
    """The blocks a window covers: (block JSON, the canonical text of its ChunkBlock).

    Blocks lie in reading order (``starts`` and ``ends`` ascend), so the window's first block is
    found by bisection and the walk stops at the first block past it: a run of many blocks costs
    each window only the blocks it covers.
    """
    if not (len(run) == len(starts) == len(ends)):
        raise ValueError("one start and one end per block")
    covered = []
    for i in range(bisect.bisect_right(ends, lo_w), len(run)):
        b_start, b_end = starts[i], ends[i]
        if b_start >= hi_w:
            break
        lo = b_start if b_start > lo_w else lo_w
        hi = b_end if b_end < hi_w else hi_w
        if lo >= hi:
            continue
        block = run[i]
        # keys sorted: anchor bbox blockId blockLength end kind normativity offset page span start time
        # verbatim
        covered.append((block, (
            f'{{"anchor":{_value(block.get("anchor"))},"bbox":{_value(block.get("bbox"))},'
            f'"blockId":{_string(block["id"])},'
            f'"blockLength":{len(block["text"])},"end":{hi - b_start},"kind":{_string(block["kind"])},'
            f'"normativity":{_string(block.get("normativity", "unknown"))},"offset":{lo - lo_w},'
            f'"page":{_value(block.get("page"))},"span":{_value(block.get("span"))},"start":{lo - b_start},'
            f'"time":{_value(block.get("time"))},'
            f'"verbatim":{"true" if block["id"] in verbatim else "false"}}}'
        )))
    return covered


def _row(labels: _Labels, section: dict[str, Any], text: str, covered: list[tuple[dict[str, Any], str]],
         normativity: str, index: int, count: int, record_id: str | None = None,
         paragraph: int | None = None, attributes: dict[str, Any] | None = None) -> str:
    """One sealed chunk as canonical JSON text (keys sorted; ``id`` between heading and language)."""
    time = next((block["time"] for block, _ in covered if block.get("time")), None)
    first = covered[0][0].get("anchor") or section.get("anchor")
    left = (
        f'{{"attributes":{_text(dict(attributes)) if attributes else "{}"}{labels.authority}'
        f'{",".join(part for _, part in covered)}{labels.after_blocks}{_value(first)},'
        f'"heading":{_string(section["heading"])}'
    )
    right = (
        f'{labels.language}{labels.limits},"normativity":{_string(normativity)},'
        f'"paragraph":{_value(paragraph)},'
        f'"part":{{"count":{count},"index":{index}}},"recordId":{_value(record_id)},'
        f'"schemaVersion":{_SCHEMA_VERSION},"sectionId":{_string(section["id"])},'
        f'"sectionPath":[{",".join(map(_string, section.get("path", [])))}]{labels.source}{_string(text)},'
        f'"time":{_value(time)}{labels.end}'
    )
    return _seal(left, right)


# -- Cutting rules. -------------------------------------------------------------------------------


@attrs.frozen
class Cut:
    """One chunk for ``cut_rows``: blocks of one section and ``[start, end)`` of their laid-out text.

    ``blocks`` index ``sections[section].blocks`` (in reading order; laid out with a blank line
    between them, see ``chunking.layout.layout``). ``part`` of ``parts`` numbers the chunks cut
    from one piece (a section, a paragraph). ``paragraph`` marks a record's paragraph chunk (its
    number ``n``: the chunk gets the record id and the block's attributes).
    """

    section: int
    blocks: tuple[int, ...]
    start: int
    end: int
    part: int = 1
    parts: int = 1
    paragraph: int | None = None


def cut_rows(data: dict[str, Any], cuts: Sequence[Cut], chunker: str,
             verbatim: frozenset[str] = frozenset()) -> list[str]:
    """The chunks ``cuts`` describe, over a document's JSON, as sealed canonical JSON texts.

    ``chunker`` is ``name/version``. A cut outside its blocks' text, or over no text, is
    ``INVALID_INPUT``: a chunk never holds characters its blocks do not have.
    """
    labels = _Labels(data, chunker)
    rows: list[str] = []
    for cut in cuts:
        section = data["sections"][cut.section]
        run = [section["blocks"][i] for i in cut.blocks]
        text, starts, ends = layout([block["text"] for block in run])
        if not run or not 0 <= cut.start < cut.end <= len(text):
            raise EpistemeError(
                "INVALID_INPUT",
                f"chunker {chunker} cut [{cut.start}, {cut.end}) of section {section['id']!r}, whose "
                f"blocks hold {len(text)} characters",
                details={"chunker": chunker, "section": section["id"]},
            )
        covered = _covered(run, starts, ends, cut.start, cut.end, verbatim)
        record = cut.paragraph is not None
        rows.append(_row(
            labels, section, text[cut.start : cut.end], covered,
            run[0].get("normativity", "unknown"), cut.part, cut.parts,
            record_id=data["source"] if record else None, paragraph=cut.paragraph,
            attributes=(run[0].get("attributes") or {}) if record else None,
        ))
    return rows


def window_rows(data: dict[str, Any], max_chars: int, overlap: int, verbatim: frozenset[str],
                chunker: str) -> list[str]:
    """The window rule over a document's JSON: each section's runs of one normativity cut into
    windows (parts numbered per section); sealed chunk texts in reading order."""
    labels = _Labels(data, chunker)
    rows: list[str] = []
    for section in data["sections"]:
        drafts = []
        for run in normativity_runs(section.get("blocks", [])):
            text, starts, ends = layout([block["text"] for block in run])
            normativity = run[0].get("normativity", "unknown")
            for window in windows(text, ends, max_chars, overlap):
                covered = _covered(run, starts, ends, window.start, window.end, verbatim)
                drafts.append((text[window.start : window.end], covered, normativity))
        for index, (text, covered, normativity) in enumerate(drafts, start=1):
            rows.append(_row(labels, section, text, covered, normativity, index, len(drafts)))
    return rows


def paragraph_number(block_attributes: dict[str, Any], position: int) -> int:
    """A record paragraph's number: its block's ``attributes.n``, else its 1-based place."""
    n = block_attributes.get("n")
    return n if isinstance(n, int) and not isinstance(n, bool) else position


def paragraph_rows(data: dict[str, Any], max_chars: int, overlap: int, verbatim: frozenset[str],
                   chunker: str) -> list[str]:
    """The paragraph rule over a record document's JSON: one chunk per non-empty paragraph block
    (more, with the window rule, when it is longer than ``max_chars``), each keeping its number."""
    labels = _Labels(data, chunker)
    rows: list[str] = []
    position = 0
    for section in data["sections"]:
        for block in section.get("blocks", []):
            position += 1
            if not block["text"].strip():
                continue
            attributes = block.get("attributes") or {}
            n = paragraph_number(attributes, position)
            text, starts, ends = layout([block["text"]])
            cut = windows(text, ends, max_chars, overlap)
            for index, window in enumerate(cut, start=1):
                covered = _covered([block], starts, ends, window.start, window.end, verbatim)
                rows.append(_row(labels, section, text[window.start : window.end], covered,
                                 block.get("normativity", "unknown"), index, len(cut),
                                 record_id=data["source"], paragraph=n, attributes=attributes))
    return rows


# -- Rows as records, objects and bytes. ----------------------------------------------------------


def chunks_from_rows(rows: Sequence[str], *, source: str = "chunk") -> list[Chunk]:
    """``Chunk`` records from row texts (the record path of a chunker built on rows)."""
    from episteme_core.records.evidence import chunk_from_json

    return [chunk_from_json(json.loads(row), source=source) for row in rows]


def body_bytes(label: str, data: dict[str, Any], rows: Sequence[str]) -> bytes:
    """The canonical bytes of a document's chunks object, given its rows' canonical texts."""
    return b"".join(body_pieces(label, data, rows))


def body_pieces(
    label: str, data: dict[str, Any], rows: Sequence[str], piece_bytes: int = 1 << 20
) -> Iterator[bytes]:
    """``body_bytes`` in pieces of about ``piece_bytes``: the rows encoded a few at a time, so a
    large document's chunks object is written (``Stage.put_pieces``) without its whole text joined
    and encoded beside the rows. The head and tail are encoded first: a document without the fields
    they name raises before any piece is given.

    Keys sorted: ``chunker`` < ``chunks`` < ``documentId`` < ``schemaVersion`` < ``source`` < ``sourceKind``.
    """
    rest = _text(
        {
            "documentId": data["id"],
            "schemaVersion": OBJECT_SCHEMA_VERSION,
            "source": data["source"],
            "sourceKind": data["sourceKind"],
        }
    )
    head = f'{{"chunker":{_text(label)},"chunks":['.encode()
    tail = f"],{rest[1:]}\n".encode()

    def pieces() -> Iterator[bytes]:
        piece = bytearray(head)
        for index, row in enumerate(rows):
            if index:
                piece += b","
            piece += row.encode("utf-8")
            if len(piece) >= piece_bytes:
                yield bytes(piece)
                piece.clear()
        piece += tail
        yield bytes(piece)

    return pieces()


def verbatim_ids(home: Home, data: dict[str, Any]) -> frozenset[str]:
    """Ids of a document's blocks whose span in the decoded source holds exactly their text.

    Checked against the captured bytes (decoded as the text extractor does), so a citation claims
    source offsets only where they are true; a missing blob or another encoding claims nothing.
    """
    spans = []
    for section in data["sections"]:
        for block in section.get("blocks", []):
            span = block.get("span")
            if span is not None and span["end"] - span["start"] == len(block["text"]):
                spans.append(block)
    if not spans:
        return frozenset()
    from episteme_core.store.blobs import BlobStore

    try:
        content = BlobStore(home.blobs_dir).get(data["sourceSha256"])
        from episteme_core.text.decode import decode

        charset = None
        for part in (data.get("contentType") or "").split(";")[1:]:
            key, _, value = part.strip().partition("=")
            if key.lower() == "charset":
                charset = value.strip().strip('"') or None
        text = decode(content, charset)
    except Exception:  # no blob, unknown codec: claim nothing
        return frozenset()
    return frozenset(b["id"] for b in spans if text[b["span"]["start"] : b["span"]["end"]] == b["text"])


def build_chunks(document: Any, cuts: Sequence[Cut], *, chunker: str,
                 verbatim: frozenset[str] = frozenset()) -> list[Chunk]:
    """``Chunk`` records for ``cuts`` of a ``Document`` (what a plugin chunker's ``chunk`` returns),
    built by the one builder, ids sealed. ``chunker`` is ``name/version``."""
    return chunks_from_rows(cut_rows(document.to_json(), cuts, chunker, verbatim))


class RowChunker:
    """The base of a chunker that cuts a document's stored JSON into sealed rows (``api.RowChunker``):
    implement ``accepts_json(data)`` and ``rows(data, max_chars=, overlap_chars=, verbatim=, chunker=)``
    (``window_rows`` and ``paragraph_rows`` are the builtin cuts), and ``accepts``, ``chunk`` and
    ``chunk_rows`` follow, so the record path and the fast path cannot disagree."""

    name: str
    version: str
    help: str = ""
    priority: int = 0

    def accepts_json(self, data: dict[str, Any]) -> bool:
        raise NotImplementedError

    def rows(self, data: dict[str, Any], *, max_chars: int, overlap_chars: int, verbatim: frozenset[str],
             chunker: str) -> list[str]:
        raise NotImplementedError

    def accepts(self, document: Any) -> bool:
        return self.accepts_json(document.to_json())

    def chunk(self, document: Any, *, max_chars: int, overlap_chars: int,
              verbatim: frozenset[str] = frozenset()) -> list[Chunk]:
        return chunks_from_rows(self.chunk_rows(document.to_json(), max_chars=max_chars,
                                                overlap_chars=overlap_chars, verbatim=verbatim))

    def chunk_rows(self, data: dict[str, Any], *, max_chars: int, overlap_chars: int,
                   verbatim: frozenset[str] = frozenset()) -> list[str]:
        """The chunks of a document given as its stored JSON, as sealed canonical JSON texts."""
        return self.rows(data, max_chars=max_chars, overlap_chars=overlap_chars, verbatim=verbatim,
                         chunker=f"{self.name}/{self.version}")
