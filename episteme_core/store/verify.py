"""The audit behind ``episteme verify``: every hash, every index, every log line; every problem listed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from episteme_core.errors import EpistemeError
from episteme_core.records.canonical import loads_strict, sha256_hex
from episteme_core.records.convert import structure
from episteme_core.records.storage import Problem, SnapshotRecord
from episteme_core.store.atomic import is_temp_file
from episteme_core.store.blobs import BlobStore
from episteme_core.store.commits import Stage
from episteme_core.store.home import STAGES, Home
from episteme_core.store.lock import read_owner
from episteme_core.store.processes import hostname, pid_is_alive
from episteme_core.store.sweep import leftover_temp_files
from episteme_core.store.tombstones import parse_line


@attrs.define
class VerifyReport:
    """What was checked and what was wrong."""

    home: str
    checked: dict[str, int] = attrs.field(factory=dict)
    problems: list[Problem] = attrs.field(factory=list)
    notes: list[Problem] = attrs.field(factory=list)

    def problem(self, code: str, path: Any, message: str) -> None:
        self.problems.append(Problem(code=code, path=str(path), message=message))

    def note(self, code: str, path: Any, message: str) -> None:
        self.notes.append(Problem(code=code, path=str(path), message=message))

    def count(self, what: str, n: int = 1) -> None:
        self.checked[what] = self.checked.get(what, 0) + n


def verify_home(home: Home) -> VerifyReport:
    """Check the whole home without changing anything."""
    if not home.root.is_dir():
        raise EpistemeError(
            "INVALID_INPUT", f"home {home.root} does not exist", details={"path": str(home.root)}
        )
    report = VerifyReport(home=str(home.root))
    _verify_config(home, report)
    _verify_log(home, report)
    _verify_lock(home, report)
    blobs = BlobStore(home.blobs_dir)
    _verify_blobs(blobs, report)
    for name in STAGES:
        _verify_stage(Stage(home, name), blobs, report)
    _verify_forgotten(home, blobs, report)
    _note_temp_files(home, report)
    return report


def check_home(home: Home, warn: Callable[[str, str], None]) -> VerifyReport:
    """``verify_home`` as ``episteme verify`` (and its MCP tool) report it: each note through ``warn``,
    and ``INVALID_INPUT`` listing every problem when there is one."""
    from episteme_core.records.convert import unstructure

    report = verify_home(home)
    for note in report.notes:
        warn(note.code, f"{note.path}: {note.message}")
    if report.problems:
        listing = "\n".join(f"  {p.code} {p.path}: {p.message}" for p in report.problems)
        raise EpistemeError(
            "INVALID_INPUT",
            f"{len(report.problems)} problem(s) in {report.home}:\n{listing}",
            details={"home": report.home, "problems": unstructure(report.problems)},
            hint="restore the named files from a backup or re-run the stage that wrote them",
        )
    return report


def _verify_config(home: Home, report: VerifyReport) -> None:
    if home.config_path.exists():
        try:
            home.config()
        except EpistemeError as exc:
            report.problem("CONFIG_INVALID", home.config_path, exc.message)


def _verify_log(home: Home, report: VerifyReport) -> None:
    if not home.log_path.exists():
        return
    with open(home.log_path, "rb") as handle:
        for number, line in enumerate(handle, start=1):
            source = f"{home.log_path}:{number}"
            if not line.endswith(b"\n"):
                report.problem("LOG_TORN_LINE", source, "the log ends in a partial line")
                break
            try:
                parse_line(line, source)
                report.count("logLines")
            except EpistemeError as exc:
                report.problem("LOG_LINE_INVALID", source, exc.message)


def _verify_lock(home: Home, report: VerifyReport) -> None:
    try:
        owner = read_owner(home.lock_path)
    except EpistemeError as exc:
        report.problem("LOCK_INVALID", home.lock_path, exc.message)
        return
    if owner is not None and owner.host == hostname() and not pid_is_alive(owner.pid):
        report.note(
            "STALE_LOCK",
            home.lock_path,
            f"held by dead process {owner.pid}; the next writer breaks it",
        )


def _verify_blobs(blobs: BlobStore, report: VerifyReport) -> None:
    for path in blobs.iter_paths():
        if is_temp_file(path):
            continue
        report.count("blobs")
        if sha256_hex(path.read_bytes()) != path.name:
            report.problem("BLOB_MISMATCH", path, "content does not match the sha256 it is named by")


def _verify_stage(stage: Stage, blobs: BlobStore, report: VerifyReport) -> None:
    try:
        index = stage.read_index(eager=True)  # every bucket read and checked now
    except EpistemeError as exc:
        report.problem("INDEX_INVALID", stage.index_path, exc.message)
        return
    if index is None:
        return
    report.count("stages")
    for entry in index.entries:
        try:
            data = stage.read_bytes(entry)
            report.count("objects")
        except EpistemeError as exc:
            report.problem("OBJECT_INVALID", stage.object_path(entry), exc.message)
            continue
        if stage.name == "snapshots" and entry.path.endswith(".json"):
            _verify_snapshot_blob(stage, entry.key, data, blobs, report)


def _verify_snapshot_blob(
    stage: Stage, key: str, data: bytes, blobs: BlobStore, report: VerifyReport
) -> None:
    source = f"{stage.index_path}#{key}"
    try:
        record = structure(loads_strict(data, source=source), SnapshotRecord, source=source)
    except EpistemeError:
        return  # not a plain snapshot record; the capture stage may store other objects
    if not blobs.has(record.content_sha256):
        report.problem(
            "BLOB_MISSING", blobs.path_for(record.content_sha256), f"bytes of snapshot {key}"
        )


def _verify_forgotten(home: Home, blobs: BlobStore, report: VerifyReport) -> None:
    """Every item a tombstone holds in force must be gone: its blobs, its snapshots, any stage key of
    its source, its paragraph's text in any version of its record, and its log lines redacted. The
    items of a forget still under way (its journal in the home) are a note, not a problem."""
    from episteme_core.records.storage import LogEntry
    from episteme_core.store.tombstones import (
        iter_log,
        key_sha256,
        pending_path,
        read_forgotten,
        read_pending,
    )

    try:
        pending = read_pending(home.root)
    except EpistemeError as exc:
        report.problem("FORGET_JOURNAL_INVALID", pending_path(home.root), exc.message)
        pending = None
    if pending is not None:
        report.note("FORGET_UNFINISHED", pending_path(home.root), "a forget was interrupted; what it has "
                    "not removed yet is still in the home: run episteme forget (or gc) to finish it")
    forgotten = read_forgotten(home.log_path)
    items = [f for f in forgotten.items if pending is None or f.tombstone.id != pending.id]
    if not items:
        return
    report.count("tombstones", len({f.tombstone.id for f in items}))
    snapshots = Stage(home, "snapshots")
    try:
        index = snapshots.read_index()
    except EpistemeError:
        index = None  # reported by the stage check
    entries = {entry.key: entry for entry in index.entries} if index is not None else {}
    sources = index.meta.get("sources") if index is not None else None
    keys: dict[str, str] = {}
    for name in STAGES[:3]:
        try:
            stage_index = Stage(home, name).read_index()
        except EpistemeError:
            continue
        for entry in stage_index.entries if stage_index is not None else []:
            if name != "snapshots":
                keys.setdefault(key_sha256(entry.key), f"{name} {entry.key}")
    for source in sources if isinstance(sources, dict) else {}:
        keys.setdefault(key_sha256(source), f"snapshots {source}")
    lines = dict(iter_log(home.log_path))
    for found in items:
        item = found.item

        def gone(what: str, path: object, where: str = f"tombstone {found.tombstone.id[:12]}") -> None:
            report.problem("FORGOTTEN_PRESENT", path, f"{what}, forgotten ({where}), is still here")

        for sha in item.blobs:
            if blobs.has(sha):
                gone("a blob", blobs.path_for(sha))
        for snapshot in item.snapshots:
            if snapshot in entries:
                gone(f"snapshot {snapshot[:12]}", snapshots.index_path)
        if item.kind == "source" and item.source_sha256 in keys:
            gone("its source", keys[item.source_sha256])
        for number in item.lines:
            line = lines.get(number)
            if isinstance(line, LogEntry) and line.record_id is not None and item.kind == "source":
                gone(f"log line {number}", home.log_path)
        texts = {p.text_sha256 for p in item.paragraphs}
        if item.kind == "paragraphs" and texts:
            for snapshot in _record_snapshots(sources, item.source_sha256):
                if _holds_text(snapshots, entries.get(snapshot), blobs, texts):
                    gone(f"a paragraph's text in snapshot {snapshot[:12]}", snapshots.index_path)


def _record_snapshots(sources: object, digest: str) -> list[str]:
    """Every snapshot in the history of the source whose key hashes to ``digest``."""
    from episteme_core.store.tombstones import key_sha256

    if not isinstance(sources, dict):
        return []
    for source, state in sources.items():
        if key_sha256(source) == digest and isinstance(state, dict):
            history = state.get("history")
            return [h for h in history if isinstance(h, str)] if isinstance(history, list) else []
    return []


def _holds_text(stage: Stage, entry: object, blobs: BlobStore, texts: set[str]) -> bool:
    """Whether the record a snapshot holds has a paragraph whose text hashes to one of ``texts``."""
    import json

    from episteme_core.records.stage_index import StageEntry
    from episteme_core.store.tombstones import key_sha256

    if not isinstance(entry, StageEntry):
        return False
    try:
        record = structure(loads_strict(stage.read_bytes(entry), source=entry.key), SnapshotRecord,
                           source=entry.key)
        body = json.loads(blobs.get(record.content_sha256))
    except (EpistemeError, ValueError):
        return False  # not a record; a damaged one is reported by the stage check
    paragraphs = body.get("paragraphs") if isinstance(body, dict) else None
    return any(isinstance(p, dict) and isinstance(p.get("text"), str) and key_sha256(p["text"]) in texts
               for p in paragraphs or [])


def _note_temp_files(home: Home, report: VerifyReport) -> None:
    """Temp files a killed writer left (the next writer sweeps them): notes, not problems."""
    for path in leftover_temp_files(home):
        report.count("tempFiles")
        report.note("TEMP_FILE", path, "left by an interrupted writer; harmless, the next writer removes it")
