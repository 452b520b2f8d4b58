"""``episteme snapshot``: fetch every manifest entry within its bounds and record what changed.

Exit policy: a run with some failures commits the successes, reports every
failure in ``data.sources`` and as a warning, and succeeds (exit 0). It fails, committing nothing,
when every source failed, or at the first failure under ``--fail-fast``; the exit status is then the
failed source's code (for "all failed", the first failure's code).
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from episteme_core.capture.http import Fetched, Fetcher, FetchSettings, parse_content_type
from episteme_core.capture.manifest import ManifestEntry
from episteme_core.errors import Cancelled, EpistemeError
from episteme_core.records.convert import unstructure
from episteme_core.records.storage import SnapshotIdentity
from episteme_core.stages.snapshots import SnapshotWriter, make_identity
from episteme_core.store.home import Home

ProgressFn = Callable[[str, int, int | None, str, str], None]
WarnFn = Callable[..., None]
TEXTUAL = ("text/", "application/xhtml+xml", "application/xml", "application/json", "+xml", "+json")


@attrs.frozen
class SourceResult:
    """What happened to one source: ``captured``, ``unchanged`` or ``failed`` (with a code)."""

    entry: int
    source: str
    status: str
    snapshot_id: str | None = None
    previous_snapshot_id: str | None = None
    final_url: str | None = None
    http_status: int | None = None
    content_type: str | None = None
    charset: str | None = None
    bytes: int | None = None
    attempts: int | None = None
    local_path: str | None = None
    code: str | None = None
    message: str | None = None
    details: dict[str, Any] | None = None
    warnings: list[dict[str, str]] = attrs.field(factory=list)


@attrs.frozen
class RunReport:
    """A capture run: one result per source, counts, and whether (and what) it committed."""

    command: str
    sources: list[SourceResult]
    counts: dict[str, int]
    committed: bool
    fingerprint: str | None
    unchanged_listed: bool = True  # False: the rows of unchanged sources were left out (counted only)

    def data(self) -> dict[str, Any]:
        data: dict[str, Any] = unstructure(self)
        return data

    def text(self, verb: str) -> str:
        c = self.counts
        lines = [
            f"{verb} {len(self.sources)} source(s): {c['captured']} new, {c['unchanged']} unchanged, "
            f"{c['failed']} failed."
        ]
        for result in self.sources:
            if result.status == "failed":
                lines.append(f"  failed: {result.code}: {result.message}")
        lines.append("Committed." if self.committed else "Nothing to commit (no change).")
        return "\n".join(lines)


def counts_of(results: Sequence[SourceResult]) -> dict[str, int]:
    counts = {"captured": 0, "unchanged": 0, "failed": 0}
    for result in results:
        counts[result.status] += 1
    return counts


def charset_warnings(
    content_type: str | None, charset: str | None, data: bytes, *, final: bool = True
) -> list[dict[str, str]]:
    """Warn when a declared charset is unknown (decoded as UTF-8) or does not decode the bytes.

    ``final=False`` when ``data`` is only the start of the content (a cut character is fine).
    """
    if not charset:
        return []
    from episteme_core.text.decode import text_codec

    name = text_codec(charset)
    if name is None:
        return [{"code": "CHARSET_UNKNOWN",
                 "message": f"declared charset {charset!r} is unknown; text will be decoded as UTF-8"}]
    textual = content_type is not None and any(t in content_type for t in TEXTUAL)
    if textual:
        try:
            codecs.getincrementaldecoder(name)().decode(data, final=final)
        except UnicodeDecodeError as exc:
            return [{"code": "CHARSET_MISMATCH",
                     "message": f"bytes are not valid {charset} (at byte {exc.start}); "
                                "text will be decoded with replacement characters"}]
    return []


def finish(
    writer: SnapshotWriter, command: str, results: list[SourceResult], *, all_failed_fails: bool = True,
    unlisted: int | None = None,
) -> RunReport:
    """Commit unless every source failed (then raise the first failure, committing nothing).

    ``unlisted``: the count of unchanged sources whose rows were left out of ``results`` (None:
    every source has its row)."""
    counts = counts_of(results)
    counts["unchanged"] += unlisted or 0
    if all_failed_fails and results and counts["failed"] == sum(counts.values()):
        first = results[0]
        raise EpistemeError(
            first.code or "SOURCE_UNAVAILABLE",
            f"all {len(results)} source(s) failed; first: {first.message}",
            details={"sources": [unstructure(r) for r in results], "counts": counts},
        )
    index = writer.commit()
    fingerprint = index.fingerprint if index else writer.catalog.fingerprint
    return RunReport(command, results, counts, index is not None, fingerprint,
                     unchanged_listed=unlisted is None)


def fail_fast_error(result: SourceResult, results: list[SourceResult]) -> EpistemeError:
    return EpistemeError(
        result.code or "SOURCE_UNAVAILABLE",
        f"{result.message} (--fail-fast: nothing committed)",
        details={**(result.details or {}), "sources": [unstructure(r) for r in results]},
    )


def snapshot_sources(
    home: Home,
    entries: Sequence[ManifestEntry],
    settings: FetchSettings,
    *,
    fail_fast: bool = False,
    progress: ProgressFn | None = None,
    warn: WarnFn | None = None,
    command: str = "snapshot",
    fetcher_factory: Callable[[FetchSettings], Fetcher] = Fetcher,
) -> RunReport:
    """Fetch each entry and record it; call inside ``with ctx.writing():``."""
    report = progress or (lambda *a: None)
    total = len(entries)
    results: list[SourceResult] = []
    with SnapshotWriter(home, command) as writer, fetcher_factory(settings) as fetcher:
        for number, entry in enumerate(entries, start=1):
            report("snapshot", number - 1, total, "started", entry.url)

            def on_retry(attempt: int, wait: float, reason: str, _url: str = entry.url,
                         _n: int = number) -> None:
                report("snapshot", _n - 1, total, "retrying",
                       f"{_url}: retry {attempt} in {wait:.2f}s after {reason}")

            try:
                result = _snapshot_one(writer, fetcher, entry, on_retry)
            except Cancelled:
                raise  # SIGINT/SIGTERM end the run (nothing committed), never one source
            except EpistemeError as error:
                result = SourceResult(
                    entry=entry.index, source=entry.url, status="failed", code=error.code,
                    message=error.message, details=error.details,
                )
                if not (error.details or {}).get("tombstone"):  # a refused forgotten URL is not logged
                    writer.note_failure(entry.url, "http", error.code)
            results.append(result)
            report("snapshot", number, total, "failed" if result.status == "failed" else "completed",
                   f"{entry.url}: {result.status}")
            if result.status == "failed" and fail_fast:
                raise fail_fast_error(result, results)
            if warn is not None:
                for item in result.warnings:
                    warn(item["code"], f"{entry.url}: {item['message']}", source=entry.url)
        outcome = finish(writer, command, results)
    if warn is not None:  # only when the run succeeds; otherwise the error lists every failure
        for result in outcome.sources:
            if result.status == "failed":
                warn("SOURCE_FAILED", result.message or "", source=result.source, sourceCode=result.code)
    return outcome


def _snapshot_one(
    writer: SnapshotWriter, fetcher: Fetcher, entry: ManifestEntry,
    on_retry: Callable[[int, float, str], None],
) -> SourceResult:
    refused = writer.refusal(entry.url)
    if refused is not None:
        raise refused  # before any fetch: a forgotten source is not downloaded again
    latest = writer.latest(entry.url)
    validators = latest if latest is not None and latest.capture_kind == "http" else None
    fetched = fetcher.fetch(
        entry.url,
        etag=validators.etag if validators else None,
        last_modified=validators.last_modified if validators else None,
        on_retry=on_retry,
    )
    if fetched.not_modified:
        if latest is None or validators is None:
            raise EpistemeError(
                "SOURCE_UNAVAILABLE", f"{entry.url}: HTTP 304 but no snapshot is recorded",
                details={"url": entry.url, "status": 304},
            )
        observation = writer.keep(entry.url, entry.options)
        record = observation.record
        return SourceResult(
            entry=entry.index, source=entry.url, status="unchanged", snapshot_id=record.id,
            previous_snapshot_id=record.id, final_url=record.final_url, http_status=304,
            content_type=record.content_type, charset=record.charset, bytes=record.byte_length,
            attempts=fetched.attempts,
        )
    return _record(writer, entry, fetched)


def _record(writer: SnapshotWriter, entry: ManifestEntry, fetched: Fetched) -> SourceResult:
    assert fetched.content is not None
    data = fetched.content
    content_type, charset = parse_content_type(fetched.headers.get("content-type"))
    identity: SnapshotIdentity = make_identity(
        "http", entry.url, data, final_url=fetched.final_url, content_type=content_type, charset=charset
    )
    attributes: dict[str, Any] = {}
    if fetched.redirects:
        attributes["redirects"] = list(fetched.redirects)
    observation = writer.observe(
        identity, data, options=entry.options, etag=fetched.headers.get("etag"),
        last_modified=fetched.headers.get("last-modified"), http_status=fetched.status,
        attributes=attributes,
    )
    return SourceResult(
        entry=entry.index, source=entry.url, status=observation.status,
        snapshot_id=observation.record.id, previous_snapshot_id=observation.previous,
        final_url=fetched.final_url, http_status=fetched.status, content_type=content_type,
        charset=charset, bytes=len(data), attempts=fetched.attempts,
        warnings=charset_warnings(content_type, charset, data),
    )
