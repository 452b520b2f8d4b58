"""Records in and out of the snapshots stage: write only what changed, read the latest back.

A record is a snapshot: ``capture_kind`` = the source name, ``source`` = the record id, bytes = the
record's canonical JSON. Writers run inside ``with ctx.writing():``; readers never lock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import attrs

from episteme_core.personal.limits import RECORD_CONTENT_TYPE
from episteme_core.personal.model import Record, record_from_bytes

if TYPE_CHECKING:
    from episteme_core.records.storage import SnapshotRecord
    from episteme_core.stages.snapshots import SnapshotCatalog
    from episteme_core.store.home import Home

Merge = Callable[[Record | None, Record], Record]


@attrs.define
class SaveReport:
    """What ``save_records`` did: the ids it captured (new or changed) and those left unchanged."""

    captured: list[str] = attrs.field(factory=list)
    unchanged: list[str] = attrs.field(factory=list)
    paragraphs: int = 0
    appended: int = 0
    refused: list[str] = attrs.field(factory=list)  # forgotten records, not stored again
    redacted: int = 0  # paragraphs stored redacted because ``forget`` removed their text

    def to_json(self) -> dict[str, Any]:
        return {
            "captured": len(self.captured),
            "unchanged": len(self.unchanged),
            "paragraphs": self.paragraphs,
            "appendedParagraphs": self.appended,
            "records": sorted(self.captured),
            "forgotten": len(self.refused),
            "redactedParagraphs": self.redacted,
        }


def is_record(snapshot: SnapshotRecord) -> bool:
    return snapshot.content_type == RECORD_CONTENT_TYPE


def load_record(catalog: SnapshotCatalog, snapshot: SnapshotRecord) -> Record:
    """The record a snapshot holds, verified by hash; anything else is ``INVALID_INPUT``."""
    where = f"{catalog.blob_path(snapshot)} (snapshot {snapshot.id})"
    return record_from_bytes(catalog.content(snapshot), source=where)


def known_ids(home: Home, prefix: str = "") -> set[str]:
    """Record ids already stored that start with ``prefix`` (for incremental sources)."""
    from episteme_core.stages.snapshots import read_catalog

    return {source for source in read_catalog(home).sources() if source.startswith(prefix)}


def summary_attributes(record: Record) -> dict[str, Any]:
    """What ``sources`` needs without reading the record: counts and its time span."""
    times = sorted({p.time for p in record.paragraphs if p.time} | ({record.time} if record.time else set()))
    return {
        "recordTime": record.time,
        "firstTime": times[0] if times else None,
        "lastTime": times[-1] if times else None,
        "paragraphs": len(record.paragraphs),
        "markedParagraphs": sum(1 for p in record.paragraphs if p.marked),
        "title": record.title,
    }


def save_records(
    home: Home,
    command: str,
    records: Iterable[Record],
    *,
    merge: Merge | None = None,
    warn: Callable[..., None] | None = None,
) -> SaveReport:
    """Store each record whose bytes changed as a new snapshot (one log line each), then commit once.

    ``merge(old, new)`` builds what is stored from the latest stored version (chat records only
    grow). Unchanged records write nothing. A record ``forget`` removed is not stored again (it is
    listed in ``refused``, and ``warn`` told) and a paragraph it removed is stored redacted, unless
    the run is ``allowing_forgotten``. Call inside ``with ctx.writing():``.
    """
    from episteme_core.personal.model import redact_record
    from episteme_core.records.storage import SnapshotIdentity
    from episteme_core.stages.snapshots import SnapshotWriter, forgotten_allowed

    report = SaveReport()
    with SnapshotWriter(home, command) as writer:  # a failure removes the blobs and objects it wrote
        for record in records:
            refused = writer.refusal(record.id)
            if refused is not None:
                report.refused.append(record.id)
                if warn is not None:
                    warn("FORGOTTEN_REFUSED", refused.message, record=record.id)
                continue
            forgotten = set() if forgotten_allowed() else writer.forgotten().paragraphs(record.id)
            if forgotten:
                cleaned = redact_record(record, forgotten)
                report.redacted += sum(
                    1 for a, b in zip(record.paragraphs, cleaned.paragraphs, strict=True) if a != b
                )
                record = cleaned
            previous = writer.latest(record.id)
            old: Record | None = None
            if merge is not None and previous is not None and is_record(previous):
                old = load_record(writer.catalog, previous)
                record = merge(old, record)
            with writer.incoming() as blob:  # the bytes go to the blob file as they are encoded
                for piece in record.iter_bytes():
                    blob.write(piece)
                identity = SnapshotIdentity(
                    capture_kind=record.source,
                    source=record.id,
                    final_url=None,
                    content_type=RECORD_CONTENT_TYPE,
                    charset="utf-8",
                    byte_length=blob.length,
                    content_sha256=blob.sha256,
                )
                if previous is not None and previous.id == identity.snapshot_id:
                    report.unchanged.append(record.id)
                    continue
                blob.keep()
            writer.observe(identity, attributes=summary_attributes(record))
            report.captured.append(record.id)
            report.paragraphs += len(record.paragraphs)
            if old is not None:
                report.appended += len(record.paragraphs) - len(old.paragraphs)
        writer.commit()
    return report
