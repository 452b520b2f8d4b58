"""The record a personal source writes: a stable id, a time, and numbered paragraphs."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

import attrs

from episteme_core.errors import EpistemeError
from episteme_core.records.canonical import canonical_bytes, gathered, loads_strict
from episteme_core.records.trust import CONTENT_TRUST, MARKED_KINDS

RECORD_SCHEMA_VERSION = "1"
MAX_ID_CHARS = 1024
FORGOTTEN_KIND = "forgotten"  # a paragraph ``forget`` redacted: its text is gone, its number stays

# a lone surrogate (U+D800-U+DFFF) cannot be stored: no UTF-8 holds it
_ID_FORBIDDEN = re.compile("[\\s#\\x00-\\x1f\\x7f\\\\\ud800-\udfff]")
_NAME_FORBIDDEN = re.compile("[\\s#/@\\x00-\\x1f\\x7f\\\\\ud800-\udfff]")


@attrs.frozen
class Paragraph:
    """One citable unit of a record: its number, its exact text, its own time and attributes."""

    n: int
    text: str
    time: str | None = None
    kind: str = "text"
    attributes: dict[str, Any] = attrs.field(factory=dict)

    @property
    def marked(self) -> bool:
        return self.kind in MARKED_KINDS


@attrs.frozen
class Record:
    """A book, a chat session, a commit or the intent file, as stored in a snapshot.

    ``time`` is the time of the text where one is known (a message's, a commit's, a book's release
    date); None when nothing tells it: never a file's modification time or the capture's."""

    id: str
    source: str
    time: str | None
    paragraphs: Sequence[Paragraph]  # a list, or a book's ``personal.spans.SpanParagraphs``
    title: str | None = None
    metadata: dict[str, Any] = attrs.field(factory=dict)
    content_trust: str = CONTENT_TRUST
    schema_version: str = RECORD_SCHEMA_VERSION

    def to_bytes(self) -> bytes:
        """The canonical bytes stored as the snapshot's content (``iter_bytes`` joined)."""
        return b"".join(self.iter_bytes())

    def iter_bytes(self, piece_bytes: int = 1 << 20) -> Iterator[bytes | memoryview]:
        """The record's canonical JSON in pieces of about ``piece_bytes``, its paragraphs encoded one
        at a time: a record of a million paragraphs never becomes one tree of dicts in memory, and
        a writer that hashes and writes each piece (``SnapshotWriter.put_stream``) never holds the
        record's bytes whole."""
        from episteme_core.records.convert import unstructure

        head = canonical_bytes(unstructure(attrs.evolve(self, paragraphs=[])))
        # "paragraphs" is the last key that can hold an object: the keys after it (schemaVersion,
        # source, time, title) are strings, whose quotes are escaped, so the last match is ours.
        at = head.rindex(b'"paragraphs":[]') + len(b'"paragraphs":[')

        def chunks() -> Iterator[bytes | memoryview]:
            yield head[:at]
            for index, paragraph in enumerate(self.paragraphs):
                if index:
                    yield b","
                yield memoryview(canonical_bytes(unstructure(paragraph)))[:-1]  # less its newline
            yield head[at:]

        return gathered(chunks(), piece_bytes)

    def paragraph(self, n: int) -> Paragraph:
        """Paragraph ``n`` (1-based) or ``INVALID_INPUT``."""
        if 1 <= n <= len(self.paragraphs) and self.paragraphs[n - 1].n == n:
            return self.paragraphs[n - 1]
        for paragraph in self.paragraphs:
            if paragraph.n == n:
                return paragraph
        raise EpistemeError(
            "INVALID_INPUT",
            f"record {self.id} has no paragraph {n} (it has {len(self.paragraphs)})",
            details={"record": self.id, "n": n, "paragraphs": len(self.paragraphs)},
        )


def record_from_bytes(data: bytes, *, source: str) -> Record:
    """Parse stored record bytes; anything but a valid record is ``INVALID_INPUT`` naming ``source``."""
    from episteme_core.records.convert import structure

    return structure(loads_strict(data, source=source), Record, source=source)


def build_record(
    *,
    id: str,
    source: str,
    time: str | None,
    paragraphs: Sequence[Paragraph],
    title: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> Record:
    """A record with its paragraphs numbered 1..N in the order given (ids checked)."""
    check_record_id(id)
    numbered = [
        item if item.n == index else attrs.evolve(item, n=index)  # numbered: kept, not copied
        for index, item in enumerate(paragraphs, start=1)
    ]
    return Record(id=id, source=source, time=time, paragraphs=numbered, title=title, metadata=metadata or {})


def check_record_id(value: str) -> str:
    """A record id is printable, bounded, and cannot walk a path: else ``INVALID_INPUT``."""
    problem = None
    if not value:
        problem = "is empty"
    elif len(value) > MAX_ID_CHARS:
        problem = f"is longer than {MAX_ID_CHARS} characters"
    elif _ID_FORBIDDEN.search(value):
        problem = "holds whitespace, '#', '\\', a control character or a lone surrogate"
    elif value.startswith("/") or any(part in ("..", ".") for part in re.split(r"[/:@]", value)):
        problem = "holds a '.' or '..' segment or starts with '/'"
    if problem:
        raise EpistemeError(
            "INVALID_INPUT",
            f"record id {value[:200]!r} {problem}",
            details={"id": value[:200]},
        )
    return value


def safe_name(value: str) -> bool:
    """True when ``value`` may be one segment of a record id (a corpus, project, session, repo)."""
    return (
        bool(value)
        and len(value) <= 255
        and value not in (".", "..")
        and not _NAME_FORBIDDEN.search(value)
    )


_ENCODE = re.compile(r"[\s#/@\\%\x00-\x1f\x7f]")


def id_segment(name: str) -> str | None:
    """``name`` (a file, folder or repository name) as one segment of a record id, or None.

    Whitespace, ``#``, ``/``, ``@``, ``\\``, ``%`` and control characters are percent-encoded
    (``Pride and Prejudice`` becomes ``Pride%20and%20Prejudice``), so any real name gives a safe,
    stable id; ``.``, ``..``, empty and over-long names give None.
    """
    if not name or name in (".", "..") or len(name) > 255:
        return None
    return _ENCODE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode("utf-8")), name)


def utc_iso(moment: datetime) -> str:
    """ISO 8601 in UTC with a ``Z``; milliseconds only when the moment has them."""
    moment = moment.astimezone(UTC)
    if moment.microsecond:
        text = moment.isoformat(timespec="milliseconds")
    else:
        text = moment.isoformat(timespec="seconds")
    return text.replace("+00:00", "Z")


def from_timestamp(seconds: float) -> str:
    return utc_iso(datetime.fromtimestamp(seconds, UTC))


def parse_time(text: str) -> str | None:
    """An ISO 8601 date or date-time (``Z`` or offset; naive = UTC) as UTC ``...Z``; else None, also
    when its instant in UTC falls outside the calendar (``0001-01-01T00:00+05:00``)."""
    raw = text.strip().strip("'\"")
    if not raw:
        return None
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", raw):
            moment = datetime.fromisoformat(raw).replace(tzinfo=UTC)
        else:
            moment = datetime.fromisoformat(raw.replace("Z", "+00:00"))
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=UTC)
        return utc_iso(moment)
    except (ValueError, OverflowError):
        return None


def merge_grown(old: Record | None, new: Record) -> Record:
    """A chat record only grows: keep every stored paragraph, append those whose ``key`` is new.

    Paragraphs without a key are compared by (kind, text, time). The old numbers never change.
    """
    if old is None:
        return new

    def key(paragraph: Paragraph) -> Any:
        found = paragraph.attributes.get("key")
        if found is not None:
            return ("key", found)
        return ("text", paragraph.kind, paragraph.text, paragraph.time)

    known = {key(p) for p in old.paragraphs}
    paragraphs = list(old.paragraphs)
    for paragraph in new.paragraphs:
        if key(paragraph) in known:
            continue
        known.add(key(paragraph))
        paragraphs.append(attrs.evolve(paragraph, n=len(paragraphs) + 1))
    times = [t for t in (old.time, new.time) if t]
    return Record(
        id=new.id,
        source=new.source,
        time=min(times) if times else None,
        paragraphs=paragraphs,
        title=old.title or new.title,
        metadata=new.metadata,
    )


def redacted(paragraph: Paragraph) -> Paragraph:
    """``paragraph`` as ``forget`` leaves it: no text, kind ``forgotten``, its number and time kept
    (and its ``key``, so a transcript that grows does not bring it back)."""
    key = paragraph.attributes.get("key")
    return Paragraph(n=paragraph.n, text="", time=paragraph.time, kind=FORGOTTEN_KIND,
                     attributes={"key": key} if key is not None else {})


def redact_record(record: Record, text_sha256s: set[str]) -> Record:
    """``record`` with every paragraph whose text hashes to one of ``text_sha256s`` redacted (and a
    title taken from such a paragraph dropped); the record itself when none does."""
    import hashlib

    def forgotten(text: str) -> bool:
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest() in text_sha256s

    hits = [p for p in record.paragraphs if p.kind != FORGOTTEN_KIND and forgotten(p.text)]
    if not hits:
        return record
    title = record.title
    if title and any(title.strip() and title.strip() in p.text for p in hits):
        title = None
    paragraphs = [redacted(p) if p.kind != FORGOTTEN_KIND and forgotten(p.text) else p
                  for p in record.paragraphs]
    return attrs.evolve(record, paragraphs=paragraphs, title=title)
