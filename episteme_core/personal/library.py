"""``sources`` and ``show``: readers over the snapshots catalog, the log and the shards; never write."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from episteme_core.errors import EpistemeError
from episteme_core.personal.model import Paragraph, Record, check_record_id
from episteme_core.personal.stored import is_record, load_record
from episteme_core.records.trust import CONTENT_TRUST

if TYPE_CHECKING:
    from episteme_core.records.storage import SnapshotRecord
    from episteme_core.stages.snapshots import SnapshotCatalog
    from episteme_core.store.home import Home

STALE_HINT = "run episteme ingest"
_REF = re.compile(r"^(?P<id>[^#]+)(?:#(?P<n>[^#]*))?$")


# sources ------------------------------------------------------------------------------------


def list_sources(home: Home, warn: Callable[..., None] | None = None) -> dict[str, Any]:
    """Each capture kind in the store: records, paragraphs, bytes, time span, shards, behind.

    With ``warn``, sources whose shards are behind the log are also reported as ``SHARDS_BEHIND``."""
    from episteme_core.personal.shard_status import shard_status
    from episteme_core.stages.snapshots import read_catalog
    from episteme_core.store.log import Log

    catalog = read_catalog(home)
    rows: dict[str, dict[str, Any]] = {}
    for source in catalog.sources():
        state = catalog.state(source)
        latest = catalog.record(state.latest)
        row = rows.setdefault(latest.capture_kind, _empty_row(latest.capture_kind))
        row["records"] += 1
        row["snapshots"] += len(state.history)
        row["bytes"] += latest.byte_length
        if is_record(latest):
            summary = _summary(catalog, latest)
            row["paragraphs"] = (row["paragraphs"] or 0) + summary["paragraphs"]
            row["markedParagraphs"] = (row["markedParagraphs"] or 0) + summary["markedParagraphs"]
            first, last = summary["firstTime"], summary["lastTime"]
        else:
            first = last = latest.observed_at
        if first is None or last is None:
            row["undated"] += 1  # a record whose text tells no time: no part of any span
            continue
        span = row["timeSpan"]
        if span is None:
            row["timeSpan"] = {"from": first, "to": last}
        else:
            span["from"] = min(span["from"], first)
            span["to"] = max(span["to"], last)
    status = shard_status(home, catalog)
    for kind, shard in status.by_source.items():
        row = rows.setdefault(kind, _empty_row(kind))
        row.update(shard)
    for kind, row in rows.items():
        if row["records"] and kind not in status.by_source:
            row.update({"shards": 0, "shardStatus": "missing", "behind": True})
    ordered = [rows[kind] for kind in sorted(rows)]
    behind = any(row["behind"] for row in ordered)
    if behind and warn is not None:
        late = [row["source"] for row in ordered if row["behind"]]
        warn("SHARDS_BEHIND", f"shards of {', '.join(late)} are behind the log: {STALE_HINT}", sources=late)
    return {
        "sources": ordered,
        "records": sum(row["records"] for row in ordered),
        "logPosition": Log(home.log_path).position(),
        "shardsBuiltFrom": status.log_position,
        "behind": behind,
        "contentTrust": CONTENT_TRUST,
    }


def _empty_row(kind: str) -> dict[str, Any]:
    return {
        "source": kind,
        "records": 0,
        "snapshots": 0,
        "paragraphs": None,
        "markedParagraphs": None,
        "bytes": 0,
        "timeSpan": None,
        "undated": 0,
        "shards": 0,
        "shardBytes": 0,
        "shardStatus": "missing",
        "behind": False,
    }


def _summary(catalog: SnapshotCatalog, snapshot: SnapshotRecord) -> dict[str, Any]:
    """Counts and span from the snapshot's attributes, else (older snapshots) from the record."""
    attributes = snapshot.attributes
    keys = ("paragraphs", "markedParagraphs", "firstTime", "lastTime")
    if all(key in attributes for key in keys):
        return {key: attributes[key] for key in keys}
    from episteme_core.personal.stored import summary_attributes

    return summary_attributes(load_record(catalog, snapshot))


def render_sources(data: dict[str, Any]) -> str:
    """The human table of ``sources``."""
    if not data["sources"]:
        return "no sources yet (run episteme ingest <source> or episteme snapshot)"
    lines = []
    for row in data["sources"]:
        span = row["timeSpan"]
        when = f"{span['from'][:10]}..{span['to'][:10]}" if span else "-"
        if row.get("undated"):
            when += f" ({row['undated']} undated)"
        paragraphs = "-" if row["paragraphs"] is None else str(row["paragraphs"])
        lines.append(
            f"{row['source']:<8} {row['records']:>6} records {paragraphs:>8} paragraphs "
            f"{row['bytes']:>12} bytes  {when}  {row['shards']} shard(s) {row['shardStatus']}"
        )
    if data["behind"]:
        lines.append(f"shards are behind the log: {STALE_HINT}")
    lines.extend(_sources_legend(data["sources"]))
    return "\n".join(lines)


# What the capture kinds that are not records hold, as the legend under the table names them.
DOCUMENT_KINDS = {
    "file": "files captured by manual-ingest, each stored as the URL its map names",
    "http": "pages fetched by snapshot",
    "warc": "responses imported by ingest warc",
}


def _sources_legend(rows: list[dict[str, Any]]) -> list[str]:
    """A line per document kind in the table, and what ``-`` means when one shows."""
    kinds = [row["source"] for row in rows if row["source"] in DOCUMENT_KINDS]
    dashes = any(row["paragraphs"] is None for row in rows)
    if not kinds and not dashes:
        return []
    legend = [""] + [f"{kind:<8} {DOCUMENT_KINDS[kind]}" for kind in kinds]
    if dashes:
        legend.append("-        not counted: paragraphs are counted for records (books, chats, commits);")
        legend.append("         a file, page or response is a document of sections and blocks, dated when it")
        legend.append("         was captured")
    return legend


# show ---------------------------------------------------------------------------------------


def parse_reference(text: str) -> tuple[str, int | None]:
    """``ID`` or ``ID#N`` (N from 1); anything else is ``INVALID_INPUT``."""
    match = _REF.match(text)
    if match is None:
        raise EpistemeError(
            "INVALID_INPUT", f"{text[:200]!r} is not a record id or RECORD#N",
            details={"reference": text[:200]},
        )
    record_id = check_record_id(match.group("id"))
    raw_n = match.group("n")
    if raw_n is None:
        return record_id, None
    if not raw_n.isdigit() or not raw_n.isascii() or int(raw_n) < 1 or len(raw_n) > 9:
        raise EpistemeError(
            "INVALID_INPUT", f"{text[:200]!r}: the paragraph number must be a whole number from 1",
            details={"reference": text[:200]},
        )
    return record_id, int(raw_n)


def show(
    home: Home, reference: str, *, snapshot: str | None = None, stale_ok: bool = False
) -> dict[str, Any]:
    """The record ``ID`` (or paragraph ``ID#N``) verbatim with its citation; refuses stale shards."""
    from episteme_core.personal.shard_status import shard_status
    from episteme_core.stages.snapshots import read_catalog

    record_id, n = parse_reference(reference)
    catalog = read_catalog(home)
    if not catalog.has_source(record_id):
        raise EpistemeError(
            "INVALID_INPUT", f"no record {record_id!r} in the store",
            details={"id": record_id}, hint="episteme sources lists what the store holds",
        )
    state = catalog.state(record_id)
    if snapshot is not None:
        if snapshot not in state.history:
            raise EpistemeError(
                "INVALID_INPUT", f"record {record_id!r} has no snapshot {snapshot[:80]!r}",
                details={"id": record_id, "history": list(state.history)},
            )
        chosen = catalog.record(snapshot)
    else:
        chosen = catalog.record(state.latest)
    if not is_record(chosen):
        raise EpistemeError(
            "INVALID_INPUT", f"{record_id!r} is a {chosen.capture_kind} snapshot, not a record",
            details={"id": record_id, "captureKind": chosen.capture_kind},
            hint="query cites documents by URL; show prints personal records",
        )
    if not stale_ok and snapshot is None:
        status = shard_status(home, catalog)
        kind = status.by_source.get(chosen.capture_kind)
        if kind is None or kind["behind"]:
            raise EpistemeError(
                "STALE_INDEX",
                f"the shards of {chosen.capture_kind} are behind the log, so what show prints may "
                "not be what query and ask cite",
                details={"source": chosen.capture_kind, "id": record_id},
                hint=STALE_HINT,
            )
    record = load_record(catalog, chosen)
    citation = {
        "recordId": record.id,
        "source": record.source,
        "snapshotId": chosen.id,
        "contentSha256": chosen.content_sha256,
        "latest": chosen.id == state.latest,
    }
    if n is None:
        return {
            "id": record.id,
            "record": _record_json(record),
            "citation": {**citation, "cite": record.id, "time": record.time},
            "contentTrust": CONTENT_TRUST,
        }
    paragraph = record.paragraph(n)
    from episteme_core.personal.model import FORGOTTEN_KIND

    if paragraph.kind == FORGOTTEN_KIND:
        raise EpistemeError(
            "INVALID_INPUT",
            f"paragraph {n} of {record.id} was forgotten (episteme forget): its text is gone",
            details={"id": record.id, "n": n},
        )
    return {
        "id": f"{record.id}#{n}",
        "paragraph": _paragraph_json(paragraph),
        "title": record.title,
        "citation": {**citation, "cite": f"{record.id}#{n}", "n": n, "time": paragraph.time or record.time},
        "contentTrust": CONTENT_TRUST,
    }


def _record_json(record: Record) -> dict[str, Any]:
    from episteme_core.records.convert import unstructure

    data: dict[str, Any] = unstructure(record)
    return data


def _paragraph_json(paragraph: Paragraph) -> dict[str, Any]:
    from episteme_core.records.convert import unstructure

    data: dict[str, Any] = unstructure(paragraph)
    data["marked"] = paragraph.marked
    return data


def render_show(data: dict[str, Any]) -> str:
    """People's view: the text verbatim, then the citation."""
    citation = data["citation"]
    snapshot = citation["snapshotId"][:12]
    if "paragraph" in data:
        paragraph = data["paragraph"]
        return (
            f"{paragraph['text']}\n\n-- {citation['cite']} ({citation['time'] or 'undated'}, "
            f"{paragraph['kind']}, "
            f"snapshot {snapshot})"
        )
    record = data["record"]
    head = (f"{record['id']}: {record.get('title') or ''} ({record['time'] or 'undated'}, "
            f"{len(record['paragraphs'])} ")
    head += f"paragraphs, snapshot {snapshot})"
    parts = [head]
    for paragraph in record["paragraphs"]:
        label = " ".join(
            str(x) for x in (
                f"[{record['id']}#{paragraph['n']}]", paragraph.get("time"),
                paragraph["attributes"].get("role"),
                paragraph["kind"] if paragraph["kind"] != "text" else None,
            ) if x
        )
        parts.append(f"{label}\n{paragraph['text']}")
    return "\n\n".join(parts)
