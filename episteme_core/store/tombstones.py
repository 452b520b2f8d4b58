"""The tombstones ``forget`` leaves in the log, read back: what is forgotten, by hash.

A tombstone (a log line of status ``forgotten``) names each source or paragraph it removed by the
sha256 of its key, with the snapshot ids, blobs and log lines it took away. It stays in force until
a capture of that source made with ``--allow-forgotten`` lets it back in: that capture's log line
carries the code ``FORGOTTEN_ALLOWED`` and lifts the items of its source. Capture refuses a source
in force (``refusal``), a record's paragraphs in force are stored redacted, and ``verify`` reports
anything an item in force names that is still in the home.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import attrs

from episteme_core.errors import EpistemeError
from episteme_core.records.convert import structure
from episteme_core.records.storage import ForgottenItem, LogEntry, Tombstone

ALLOWED_CODE = "FORGOTTEN_ALLOWED"  # the code of a capture --allow-forgotten let back in
_MARK = b'"status":"forgotten"'


def key_sha256(key: str) -> str:
    """How a tombstone names a source key or a paragraph's text: the sha256 of its UTF-8."""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def parse_line(line: bytes, source: str) -> LogEntry | Tombstone:
    """One whole log line as an observation or a tombstone (``INVALID_INPUT`` naming ``source``)."""
    from episteme_core.records.canonical import loads_strict

    value = loads_strict(line, source=source)
    if isinstance(value, dict) and value.get("status") == "forgotten":
        return structure(value, Tombstone, source=source)
    return structure(value, LogEntry, source=source)


def iter_log(path: Path) -> Iterator[tuple[int, LogEntry | Tombstone]]:
    """Every whole line of the log at ``path`` with its number (1-based); a torn last line is none."""
    try:
        handle = open(path, "rb")
    except FileNotFoundError:
        return
    with handle:
        for number, line in enumerate(handle, start=1):
            if not line.endswith(b"\n"):
                return
            yield number, parse_line(line, f"{path}:{number}")


@attrs.frozen
class InForce:
    """One item of a tombstone that no later capture lifted, with the tombstone that holds it."""

    tombstone: Tombstone
    item: ForgottenItem


@attrs.define
class Forgotten:
    """What the log's tombstones hold in force, by the sha256 of each source key."""

    items: list[InForce] = attrs.field(factory=list)
    tombstones: dict[str, Tombstone] = attrs.field(factory=dict)  # every tombstone, by id

    def sources(self) -> dict[str, InForce]:
        """Sources forgotten whole, by key sha256."""
        return {f.item.source_sha256: f for f in self.items if f.item.kind == "source"}

    def paragraphs(self, key: str) -> set[str]:
        """The text sha256s of the paragraphs of record ``key`` that are forgotten."""
        digest = key_sha256(key)
        return {p.text_sha256 for f in self.items
                if f.item.kind == "paragraphs" and f.item.source_sha256 == digest for p in f.item.paragraphs}

    def of_source(self, key: str) -> list[InForce]:
        """Every item in force about ``key`` (the source itself, or paragraphs of it)."""
        digest = key_sha256(key)
        return [f for f in self.items if f.item.source_sha256 == digest]

    def refusal(self, key: str) -> EpistemeError | None:
        """The refusal of a capture of ``key`` when it is forgotten whole (else None)."""
        found = self.sources().get(key_sha256(key))
        if found is None:
            return None
        return EpistemeError(
            "INVALID_INPUT",
            f"{key[:300]} was forgotten ({found.tombstone.time}, tombstone {found.tombstone.id[:12]}); "
            "it is not captured again",
            details={"source": key[:300], "tombstone": found.tombstone.id},
            hint="pass --allow-forgotten to capture it again on purpose",
        )


def read_forgotten(path: Path) -> Forgotten:
    """The tombstones of the log at ``path`` and the items still in force. A log without any
    tombstone is read as bytes only (one search), so a capture pays next to nothing for it."""
    found = Forgotten()
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return found
    if _MARK not in data:
        return found
    end = data.rfind(b"\n") + 1
    active: list[InForce] = []
    for number, line in enumerate(data[:end].split(b"\n")[:-1], start=1):
        if _MARK in line:
            try:
                entry = parse_line(line, f"{path}:{number}")
            except EpistemeError:
                continue  # verify reports it
            if isinstance(entry, Tombstone):
                found.tombstones[entry.id] = entry
                active.extend(InForce(entry, item) for item in entry.items)
            continue
        if not active or ALLOWED_CODE.encode() not in line:
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        record = value.get("recordId") if isinstance(value, dict) else None
        if value.get("code") == ALLOWED_CODE and isinstance(record, str):
            digest = key_sha256(record)
            active = [f for f in active if f.item.source_sha256 != digest]
    found.items = active
    return found




PENDING_NAME = "forgetting.json"  # the journal of a forget under way: its tombstone, written first


def pending_path(root: Path) -> Path:
    return root / PENDING_NAME


def read_pending(root: Path) -> Tombstone | None:
    """The tombstone of a forget that was interrupted (its journal in the home), or None."""
    path = pending_path(root)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    entry = parse_line(data, str(path))
    if not isinstance(entry, Tombstone):
        raise EpistemeError("INVALID_INPUT", f"{path}: not a tombstone", details={"path": str(path)})
    return entry


__all__ = ["ALLOWED_CODE", "PENDING_NAME", "Forgotten", "InForce", "iter_log", "key_sha256", "parse_line",
           "pending_path", "read_forgotten", "read_pending"]
