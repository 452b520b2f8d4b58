"""attrs records for what the kernel stores; all (un)structuring goes through ``convert``."""

from __future__ import annotations

from typing import Any

import attrs

from episteme_core.records.canonical import fingerprint

# a stage's commit records live on their own, so reading a home (a query) creates no other record class
from episteme_core.records.stage_index import SCHEMA_VERSION as SCHEMA_VERSION
from episteme_core.records.stage_index import StageEntry as StageEntry
from episteme_core.records.stage_index import StageIndex as StageIndex


@attrs.frozen
class SnapshotIdentity:
    """What makes a representation the same one again; the snapshot id hashes exactly this."""

    capture_kind: str  # "http", "file", "warc", "record"
    source: str  # the source URL, or a record id such as "book:corpus/name"
    final_url: str | None
    content_type: str | None
    charset: str | None
    byte_length: int
    content_sha256: str

    @property
    def snapshot_id(self) -> str:
        from episteme_core.records.convert import unstructure

        return fingerprint(unstructure(self))


@attrs.frozen
class SnapshotRecord:
    """Metadata of one captured representation; the bytes are a blob named ``content_sha256``."""

    id: str
    capture_kind: str
    source: str
    final_url: str | None
    content_type: str | None
    charset: str | None
    byte_length: int
    content_sha256: str
    observed_at: str
    etag: str | None = None
    last_modified: str | None = None
    http_status: int | None = None
    attributes: dict[str, Any] = attrs.field(factory=dict)

    @property
    def identity(self) -> SnapshotIdentity:
        return SnapshotIdentity(
            capture_kind=self.capture_kind,
            source=self.source,
            final_url=self.final_url,
            content_type=self.content_type,
            charset=self.charset,
            byte_length=self.byte_length,
            content_sha256=self.content_sha256,
        )


@attrs.frozen
class LogEntry:
    """One line of the append-only log: an observation of a source."""

    time: str
    command: str
    source: str
    status: str  # captured | unchanged | failed | redacted (by ``forget``: the line names nothing)
    snapshot_id: str | None = None
    record_id: str | None = None
    code: str | None = None


@attrs.frozen
class ForgottenParagraph:
    """A paragraph ``forget`` removed: its number in the latest version, and its text's sha256."""

    n: int
    text_sha256: str  # of its text, UTF-8


@attrs.frozen
class ForgottenItem:
    """One thing ``forget`` removed, named by hash only: a source (every version of it), or
    paragraphs of a record (in every version that held their text)."""

    kind: str  # source | paragraphs
    source_sha256: str  # sha256 of the source key (a URL or a record id), UTF-8
    snapshots: list[str]  # the snapshot ids removed (source) or replaced (paragraphs)
    blobs: list[str]  # the blobs (captured bytes) deleted
    lines: list[int]  # the log lines (1-based) redacted (source) or re-pointed (paragraphs)
    paragraphs: list[ForgottenParagraph] = attrs.field(factory=list)
    replaced_by: list[str] = attrs.field(factory=list)  # paragraphs: each replaced snapshot's new id


@attrs.frozen
class Tombstone:
    """The log line ``forget`` appends (status ``forgotten``): what went, by hash; when; why.

    ``id`` is the fingerprint of the items and the reason (not the time), so an interrupted forget
    finished later appends the same tombstone, once."""

    time: str
    command: str
    id: str
    items: list[ForgottenItem]
    reason: str | None = None
    status: str = "forgotten"


@attrs.frozen
class LockOwner:
    """Who holds the writer lock."""

    pid: int
    host: str
    command: str
    token: str
    acquired_at: str


@attrs.frozen
class Problem:
    """One thing ``verify`` found wrong in a home."""

    code: str
    path: str
    message: str
