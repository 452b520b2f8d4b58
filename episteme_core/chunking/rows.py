"""Chunks as canonical JSON text straight from a document's stored JSON: the chunks stage's fast path.

The window and paragraph chunkers cut ``Document`` records into ``Chunk`` records (their public
``chunk``). The stage does not need records: it reads each committed document as plain JSON (its
bytes are hash-verified), cuts the same windows with the same rules (``window.windows``), builds
each chunk's canonical JSON text (the object ``convert.unstructure`` would give, keys in sorted
order) from pieces, the document's labels encoded once: the text without ``id`` is hashed for the
id, then the id is spliced in at its sorted place. Same bytes as sealing records
(``tests/retrieval/test_chunk_rows.py`` checks both paths agree), in under half the time.
"""

from __future__ import annotations

import hashlib
import json
from json.encoder import encode_basestring as _string  # type: ignore[attr-defined]
from typing import Any

from episteme_core.chunk import CHUNK_SCHEMA_VERSION, SEPARATOR
from episteme_core.document import CONTENT_TRUST
from episteme_core.errors import EpistemeError

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


def body_bytes(label: str, data: dict[str, Any], rows: list[str]) -> bytes:
    """The canonical bytes of a document's chunks object, given its rows' canonical texts.

    Keys sorted: ``chunker`` < ``chunks`` < ``documentId`` < ``schemaVersion`` < ``source`` < ``sourceKind``.
    """
    from episteme_core.chunking import OBJECT_SCHEMA_VERSION

    rest = _text({"documentId": data["id"], "schemaVersion": OBJECT_SCHEMA_VERSION, "source": data["source"],
                  "sourceKind": data["sourceKind"]})
    text = f'{{"chunker":{_text(label)},"chunks":[{",".join(rows)}],{rest[1:]}\n'
    return text.encode("utf-8")


def _layout(blocks: list[dict[str, Any]]) -> tuple[str, list[int], list[int]]:
    starts: list[int] = []
    ends: list[int] = []
    position = 0
    gap = len(SEPARATOR)
    for block in blocks:
        starts.append(position)
        position += len(block["text"])
        ends.append(position)
        position += gap
    return SEPARATOR.join(block["text"] for block in blocks), starts, ends


def _covered(run: list[dict[str, Any]], starts: list[int], ends: list[int], lo_w: int, hi_w: int,
             verbatim: frozenset[str]) -> list[tuple[dict[str, Any], str]]:
    """The blocks a window covers: (block JSON, the canonical text of its ChunkBlock)."""
    covered = []
    for block, b_start, b_end in zip(run, starts, ends, strict=True):
        lo = b_start if b_start > lo_w else lo_w
        hi = b_end if b_end < hi_w else hi_w
        if lo >= hi:
            continue
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


class _Labels:
    """The canonical pieces every chunk of one document shares (keys in sorted order)."""

    def __init__(self, data: dict[str, Any], chunker: str) -> None:
        self.authority = f',"authority":{_value(data["authority"])},"blocks":['
        self.after_blocks = (
            f'],"chunker":{_value(chunker)},"contentTrust":{_value(CONTENT_TRUST)},'
            f'"documentId":{_value(data["id"])},"documentType":{_value(data.get("documentType"))},'
            f'"family":{_value(data["family"])},"fragment":'
        )
        self.source = (
            f',"snapshotId":{_value(data["snapshotId"])},"source":{_value(data["source"])},'
            f'"sourceKind":{_value(data["sourceKind"])},"sourceSha256":{_value(data["sourceSha256"])},"text":'
        )
        self.end = f',"title":{_value(data["title"])},"url":{_value(data.get("url"))}}}'
        language = (data.get("attributes") or {}).get("language")
        self.language = f',"language":{_value(language if isinstance(language, str) and language else None)}'


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
        f'{labels.language},"normativity":{_string(normativity)},"paragraph":{_value(paragraph)},'
        f'"part":{{"count":{count},"index":{index}}},"recordId":{_value(record_id)},'
        f'"schemaVersion":{_SCHEMA_VERSION},"sectionId":{_string(section["id"])},'
        f'"sectionPath":[{",".join(map(_string, section.get("path", [])))}]{labels.source}{_string(text)},'
        f'"time":{_value(time)}{labels.end}'
    )
    return _seal(left, right)


def window_rows(data: dict[str, Any], max_chars: int, overlap: int, verbatim: frozenset[str],
                chunker: str) -> list[str]:
    """The window chunker over a document's JSON: sealed chunk texts in reading order."""
    from episteme_core.chunking.window import windows

    labels = _Labels(data, chunker)
    rows: list[str] = []
    for section in data["sections"]:
        runs: list[list[dict[str, Any]]] = []
        for block in section.get("blocks", []):
            if not block["text"].strip():
                continue
            norm = block.get("normativity", "unknown")
            if runs and runs[-1][-1].get("normativity", "unknown") == norm:
                runs[-1].append(block)
            else:
                runs.append([block])
        drafts = []
        for run in runs:
            text, starts, ends = _layout(run)
            normativity = run[0].get("normativity", "unknown")
            for window in windows(text, ends, max_chars, overlap):
                covered = _covered(run, starts, ends, window.start, window.end, verbatim)
                drafts.append((text[window.start : window.end], covered, normativity))
        for index, (text, covered, normativity) in enumerate(drafts, start=1):
            rows.append(_row(labels, section, text, covered, normativity, index, len(drafts)))
    return rows


def paragraph_rows(data: dict[str, Any], max_chars: int, overlap: int, verbatim: frozenset[str],
                   chunker: str) -> list[str]:
    """The paragraph chunker over a record document's JSON: sealed chunk texts in reading order."""
    from episteme_core.chunking.paragraph import paragraph_number
    from episteme_core.chunking.window import windows

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
            text, starts, ends = _layout([block])
            cut = windows(text, ends, max_chars, overlap)
            for index, window in enumerate(cut, start=1):
                covered = _covered([block], starts, ends, window.start, window.end, verbatim)
                rows.append(_row(labels, section, text[window.start : window.end], covered,
                                 block.get("normativity", "unknown"), index, len(cut),
                                 record_id=data["source"], paragraph=n, attributes=attributes))
    return rows


def verbatim_ids(home: Any, data: dict[str, Any]) -> frozenset[str]:
    """``chunking.verbatim_blocks`` over a document's JSON: ids of blocks whose span in the decoded
    source holds exactly their text."""
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
        from episteme_core.extract.text import decode

        charset = None
        for part in (data.get("contentType") or "").split(";")[1:]:
            key, _, value = part.strip().partition("=")
            if key.lower() == "charset":
                charset = value.strip().strip('"') or None
        text = decode(content, charset)
    except Exception:  # no blob, unknown codec: claim nothing
        return frozenset()
    return frozenset(b["id"] for b in spans if text[b["span"]["start"] : b["span"]["end"]] == b["text"])
