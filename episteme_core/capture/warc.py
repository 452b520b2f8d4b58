"""WARC in and out (warcio): crawls move both ways between episteme and web-archiving tools.

Import: each ``response`` record with a 2xx HTTP status becomes a snapshot of its target URI (capture
kind ``warc``, observed at its WARC-Date); other record types and statuses are skipped with a count.
Export: every snapshot as a WARC 1.1 record, request-less ``response`` records for http(s) sources
(with WARC-Payload-Digest) and ``resource`` records for personal records. ``WARC-Episteme-*`` fields
carry the snapshot identity, so importing an exported file restores the very same snapshot ids.
"""

from __future__ import annotations

import hashlib
import io
import sys
import uuid
import zlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import attrs

from episteme_core import __version__
from episteme_core.capture.http import parse_content_type
from episteme_core.capture.run import ProgressFn, RunReport, SourceResult, WarnFn, charset_warnings, finish
from episteme_core.capture.urls import UrlError, normalise_url
from episteme_core.errors import EpistemeError
from episteme_core.records.canonical import canonical_text, loads_strict
from episteme_core.records.storage import SnapshotIdentity, SnapshotRecord
from episteme_core.stages.snapshots import SnapshotCatalog, SnapshotWriter, clean_options, read_catalog
from episteme_core.store.home import Home

H_KIND = "WARC-Episteme-Capture-Kind"
H_SOURCE = "WARC-Episteme-Source"
H_FINAL = "WARC-Episteme-Final-Url"
H_TYPE = "WARC-Episteme-Content-Type"
H_CHARSET = "WARC-Episteme-Charset"
H_ID = "WARC-Episteme-Snapshot-Id"
H_OPTIONS = "WARC-Episteme-Options"
RECORD_NAMESPACE = uuid.UUID("6f1d7c3e-5a0b-4c1e-9d57-1f3c2b8e4a90")
_REASONS = {200: "OK", 201: "Created", 202: "Accepted", 203: "Non-Authoritative Information",
            204: "No Content", 206: "Partial Content"}


@attrs.frozen
class WarcImportReport:
    """A WARC import: the usual run report plus what was skipped and why."""

    run: RunReport
    file: str
    records: int
    skipped: dict[str, int]

    def data(self) -> dict[str, Any]:
        return {**self.run.data(), "file": self.file, "records": self.records, "skipped": self.skipped}

    def text(self) -> str:
        skipped = ", ".join(f"{n} {why}" for why, n in sorted(self.skipped.items())) or "none"
        head = f"{self.file}: {self.records} WARC record(s); skipped: {skipped}."
        return head + "\n" + self.run.text("Imported")


def _warc_date_to_observed(value: str | None) -> str | None:
    """WARC-Date (``2024-01-02T03:04:05[.123456]Z``) as an observation time (second precision)."""
    if not value:
        return None
    head = value.strip().rstrip("Z").split(".", 1)[0]
    return f"{head}Z" if len(head) == 19 else None


def _read_bounded(stream: IO[bytes], limit: int) -> bytes | None:
    parts: list[bytes] = []
    total = 0
    while chunk := stream.read(1 << 16):
        total += len(chunk)
        if total > limit:
            return None
        parts.append(chunk)
    return b"".join(parts)


def import_warc(
    home: Home,
    path: Path,
    *,
    max_bytes: int,
    progress: ProgressFn | None = None,
    warn: WarnFn | None = None,
    command: str = "ingest warc",
) -> WarcImportReport:
    """Import ``path`` (``.warc`` or ``.warc.gz``); call inside ``with ctx.writing():``."""
    from warcio.archiveiterator import ArchiveIterator
    from warcio.exceptions import ArchiveLoadFailed

    report = progress or (lambda *a: None)
    skipped: Counter[str] = Counter()
    results: list[SourceResult] = []
    records = 0
    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise EpistemeError("INVALID_INPUT", f"{path}: cannot read: {exc.strerror}",
                            details={"path": str(path)}) from exc
    with handle, SnapshotWriter(home, command) as writer:
        _check_gzip(handle, path)
        _check_magic(handle, path)
        try:
            for record in _records(ArchiveIterator(handle, check_digests=False), path):
                records += 1
                if not record.rec_type:
                    raise EpistemeError(
                        "INVALID_INPUT", f"{path}: record {records - 1} has no WARC-Type (not a WARC record)",
                        details={"path": str(path), "record": records - 1},
                    )
                result = _import_record(writer, record, records - 1, max_bytes, skipped)
                _check_complete(record, records - 1, path)
                if result is None:
                    continue
                results.append(result)
                report("ingest warc", records, None,
                       "failed" if result.status == "failed" else "completed",
                       f"{result.source}: {result.status}")
                if warn is not None:
                    for item in result.warnings:
                        warn(item["code"], f"{result.source}: {item['message']}", source=result.source)
        except (ArchiveLoadFailed, ValueError, EOFError, OSError, AttributeError, KeyError, TypeError,
                IndexError, OverflowError, zlib.error) as exc:  # warcio on hostile input
            raise EpistemeError(
                "INVALID_INPUT", f"{path}: not a readable WARC file: {exc}",
                details={"path": str(path), "record": records},
            ) from exc
        if records == 0:
            raise EpistemeError("INVALID_INPUT", f"{path}: holds no WARC record",
                                details={"path": str(path)})
        run = finish(writer, command, results)
    if warn is not None:
        for result in run.sources:
            if result.status == "failed":
                warn("SOURCE_FAILED", result.message or "", source=result.source, sourceCode=result.code)
    return WarcImportReport(run, str(path), records, dict(sorted(skipped.items())))


def _records(iterator: Any, path: Path) -> Iterator[Any]:
    """warcio's records; one whose Content-Length is past what a read can take (2^63 - 1 on 64 bits,
    where warcio fails with OverflowError) is ``INVALID_INPUT`` naming its number and offset."""
    number = 0
    while True:
        try:
            record = next(iterator)
        except StopIteration:
            return
        except OverflowError:
            raise EpistemeError(
                "INVALID_INPUT",
                f"{path}: record {number} (at byte {iterator.offset}) declares a length too large to read "
                f"(its Content-Length is past {sys.maxsize})",
                details={"path": str(path), "record": number, "offset": iterator.offset},
                hint="the file is damaged or hostile: a record's Content-Length is its block's size in bytes",
            ) from None
        yield record
        number += 1


def _check_gzip(handle: IO[bytes], path: Path) -> None:
    """A gzipped WARC must be whole gzip members to the end (warcio silently stops at a truncation)."""
    if handle.read(2) != b"\x1f\x8b":
        handle.seek(0)
        return
    handle.seek(0)
    member: Any = None
    pending = b""
    try:
        while True:
            chunk = pending or handle.read(1 << 16)
            pending = b""
            if not chunk:
                break
            if member is None:
                member = zlib.decompressobj(16 + zlib.MAX_WBITS)
            data = chunk
            while data and not member.eof:
                member.decompress(data, 1 << 16)
                data = member.unconsumed_tail
            if member.eof:  # the rest of the chunk (if any) is the next member
                pending, member = member.unused_data, None
    except zlib.error as exc:
        raise EpistemeError("INVALID_INPUT", f"{path}: not a valid gzip file: {exc}",
                            details={"path": str(path)}) from exc
    if member is not None:
        raise EpistemeError("INVALID_INPUT", f"{path}: truncated (the last gzip member is incomplete)",
                            details={"path": str(path)})
    handle.seek(0)


def _check_magic(handle: IO[bytes], path: Path) -> None:
    """A WARC file (gzipped or not) starts with a ``WARC/`` version line; anything else is refused.

    warcio reads blank lines and some text as records of no type, so a text file would "import"
    nothing and succeed; the first bytes are checked instead.
    """
    head = handle.read(1 << 16)
    handle.seek(0)
    if head[:2] == b"\x1f\x8b":
        try:
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, 1 << 12)
        except zlib.error:
            head = b""
    start = head.lstrip(b"\r\n")
    if not start.startswith(b"WARC/"):
        what = "empty" if not head else "not a WARC file (it does not start with a WARC/1.x record)"
        raise EpistemeError("INVALID_INPUT", f"{path}: {what}", details={"path": str(path)},
                            hint="ingest warc reads .warc and .warc.gz files")


def _check_complete(record: Any, number: int, path: Path) -> None:
    """Read what is left of the record; fewer bytes than its Content-Length means a truncated file."""
    stream = record.raw_stream
    while stream.read(1 << 16):
        pass
    if getattr(stream, "limit", 0) > 0:
        raise EpistemeError(
            "INVALID_INPUT", f"{path}: record {number} is truncated ({stream.limit} bytes missing)",
            details={"path": str(path), "record": number, "missing": stream.limit},
        )


def _import_record(
    writer: SnapshotWriter, record: Any, number: int, max_bytes: int, skipped: Counter[str]
) -> SourceResult | None:
    headers = record.rec_headers
    kind = record.rec_type
    ours = headers.get_header(H_ID) is not None
    if not (kind == "response" and record.http_headers is not None) and not (kind == "resource" and ours):
        skipped[f"{kind} records"] += 1
        return None
    uri = (headers.get_header("WARC-Target-URI") or "").strip()
    status = 200
    if kind == "response":
        try:
            status = int(record.http_headers.get_statuscode())
        except (TypeError, ValueError):
            status = 0
        if not 200 <= status < 300:
            skipped[f"responses with HTTP status {status // 100}xx"] += 1
            return None
    content = _read_bounded(record.content_stream(), max_bytes)
    if ours:
        return _import_ours(writer, record, number, uri, status, content, max_bytes)
    try:
        url, fragment = normalise_url(uri)
    except UrlError:
        skipped["records with a non-http(s) target URI"] += 1
        return None
    if content is None:
        return _too_large(number, url, max_bytes)
    refused = writer.refusal(url)
    if refused is not None:
        return _refused(number, url, refused)
    media, charset = parse_content_type(record.http_headers.get_header("Content-Type"))
    identity = SnapshotIdentity(
        capture_kind="warc", source=url, final_url=url, content_type=media, charset=charset,
        byte_length=len(content), content_sha256=hashlib.sha256(content).hexdigest(),
    )
    observation = writer.observe(
        identity, content, options={"fragment": fragment} if fragment else None,
        observed_at=_warc_date_to_observed(headers.get_header("WARC-Date")),
        etag=record.http_headers.get_header("ETag"),
        last_modified=record.http_headers.get_header("Last-Modified"), http_status=status,
        attributes={"warcRecordId": headers.get_header("WARC-Record-ID")},
    )
    return SourceResult(
        entry=number, source=url, status=observation.status, snapshot_id=observation.record.id,
        previous_snapshot_id=observation.previous, final_url=url, http_status=status,
        content_type=media, charset=charset, bytes=len(content),
        warnings=charset_warnings(media, charset, content),
    )


def _refused(number: int, source: str, refused: EpistemeError) -> SourceResult:
    """A record of a source ``forget`` removed: failed, with the refusal's message."""
    return SourceResult(entry=number, source=source, status="failed", code=refused.code,
                        message=refused.message, details=refused.details or {})


def _too_large(number: int, source: str, max_bytes: int) -> SourceResult:
    return SourceResult(
        entry=number, source=source, status="failed", code="LIMIT_EXCEEDED",
        message=f"{source}: WARC record payload larger than --max-bytes {max_bytes}",
        details={"kind": "decoded", "limit": max_bytes},
    )


def _import_ours(
    writer: SnapshotWriter, record: Any, number: int, uri: str, status: int, content: bytes | None,
    max_bytes: int,
) -> SourceResult:
    """A record episteme exported: restore its identity exactly (and check the id it claims)."""
    headers = record.rec_headers
    source = headers.get_header(H_SOURCE) or uri
    if content is None:
        return _too_large(number, source, max_bytes)
    identity = SnapshotIdentity(
        capture_kind=headers.get_header(H_KIND) or "warc",
        source=source,
        final_url=headers.get_header(H_FINAL) or None,
        content_type=headers.get_header(H_TYPE) or None,
        charset=headers.get_header(H_CHARSET) or None,
        byte_length=len(content),
        content_sha256=hashlib.sha256(content).hexdigest(),
    )
    refused = writer.refusal(source)
    if refused is not None:
        return _refused(number, source, refused)
    claimed = headers.get_header(H_ID)
    if identity.snapshot_id != claimed:
        return SourceResult(
            entry=number, source=source, status="failed", code="INVALID_INPUT",
            message=f"{source}: WARC record claims snapshot {claimed} but its content makes "
                    f"{identity.snapshot_id} (edited after export?)",
            details={"claimed": claimed, "computed": identity.snapshot_id},
        )
    options = None
    raw_options = headers.get_header(H_OPTIONS)
    if raw_options:
        value = loads_strict(raw_options, source=f"WARC record {number} {H_OPTIONS}")
        options = clean_options(value if isinstance(value, dict) else {})
    http = record.http_headers
    observation = writer.observe(
        identity, content, options=options,
        observed_at=_warc_date_to_observed(headers.get_header("WARC-Date")),
        etag=http.get_header("ETag") if http else None,
        last_modified=http.get_header("Last-Modified") if http else None,
        http_status=status if kind_is_http(identity) else None,
    )
    return SourceResult(
        entry=number, source=source, status=observation.status, snapshot_id=observation.record.id,
        previous_snapshot_id=observation.previous, final_url=identity.final_url,
        content_type=identity.content_type, charset=identity.charset, bytes=len(content),
    )


def kind_is_http(identity: SnapshotIdentity) -> bool:
    return identity.source.startswith(("http://", "https://"))


# export ---------------------------------------------------------------------------------------


def _ordered(catalog: SnapshotCatalog) -> Iterator[tuple[str, SnapshotRecord]]:
    """Per source (sorted): its history oldest first, with the latest last (import restores it)."""
    for source in catalog.sources():
        state = catalog.state(source)
        for snapshot_id in [h for h in state.history if h != state.latest] + [state.latest]:
            yield source, catalog.record(snapshot_id)


def export_warc(home: Home, out: IO[bytes]) -> dict[str, Any]:
    """Write every committed snapshot as a WARC 1.1 record (gzip per record); byte-deterministic."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    catalog = read_catalog(home)
    writer = WARCWriter(out, gzip=True, warc_version="1.1")
    items = list(_ordered(catalog))
    latest_date = max((r.observed_at for _, r in items), default="1970-01-01T00:00:00Z")
    info = f"software: episteme/{__version__}\r\nformat: WARC File Format 1.1\r\n".encode()
    writer.write_record(writer.create_warc_record(
        "", "warcinfo", payload=io.BytesIO(info), length=len(info),
        warc_content_type="application/warc-fields",
        warc_headers_dict={"WARC-Record-ID": _record_id("warcinfo", catalog.fingerprint or ""),
                           "WARC-Date": latest_date},
    ))
    counts: Counter[str] = Counter()
    for source, record in items:
        data = catalog.content(record)
        options = catalog.options(source)
        warc_headers = {
            "WARC-Record-ID": _record_id("snapshot", record.id),
            "WARC-Date": record.observed_at,
            H_KIND: record.capture_kind,
            H_SOURCE: record.source,
            H_ID: record.id,
        }
        for name, value in ((H_FINAL, record.final_url), (H_TYPE, record.content_type),
                            (H_CHARSET, record.charset)):
            if value:
                warc_headers[name] = value
        if options:
            warc_headers[H_OPTIONS] = canonical_text(options)
        content_type = record.content_type or "application/octet-stream"
        if record.charset:
            content_type += f"; charset={record.charset}"
        if record.source.startswith(("http://", "https://")):
            status = record.http_status if record.http_status and 200 <= record.http_status < 300 else 200
            fields = [("Content-Type", content_type), ("Content-Length", str(len(data)))]
            if record.etag:
                fields.append(("ETag", record.etag))
            if record.last_modified:
                fields.append(("Last-Modified", record.last_modified))
            status_line = f"{status} {_REASONS.get(status, 'OK')}"
            http_headers = StatusAndHeaders(status_line, fields, protocol="HTTP/1.1")
            target = record.final_url or record.source
            warc_record = writer.create_warc_record(
                target, "response", payload=io.BytesIO(data), length=len(data),
                http_headers=http_headers, warc_headers_dict=warc_headers,
            )
            counts["response"] += 1
        else:
            warc_record = writer.create_warc_record(
                record.source, "resource", payload=io.BytesIO(data), length=len(data),
                warc_content_type=content_type, warc_headers_dict=warc_headers,
            )
            counts["resource"] += 1
        writer.write_record(warc_record)
    return {"records": len(items) + 1, "responses": counts["response"], "resources": counts["resource"],
            "sources": len(catalog.sources()), "fingerprint": catalog.fingerprint}


def _record_id(kind: str, name: str) -> str:
    return f"<urn:uuid:{uuid.uuid5(RECORD_NAMESPACE, f'{kind}:{name}')}>"
