"""The audit behind ``episteme verify``: every hash, every index, every log line; every problem listed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from episteme_core.errors import EpistemeError
from episteme_core.records.canonical import loads_strict, sha256_hex
from episteme_core.records.convert import structure
from episteme_core.records.storage import LogEntry, Problem, SnapshotRecord
from episteme_core.store.atomic import is_temp_file
from episteme_core.store.blobs import BlobStore
from episteme_core.store.commits import Stage
from episteme_core.store.home import STAGES, Home
from episteme_core.store.lock import read_owner
from episteme_core.store.processes import hostname, pid_is_alive
from episteme_core.store.sweep import leftover_temp_files


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
                structure(loads_strict(line, source=source), LogEntry, source=source)
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


def _note_temp_files(home: Home, report: VerifyReport) -> None:
    """Temp files a killed writer left (the next writer sweeps them): notes, not problems."""
    for path in leftover_temp_files(home):
        report.count("tempFiles")
        report.note("TEMP_FILE", path, "left by an interrupted writer; harmless, the next writer removes it")
