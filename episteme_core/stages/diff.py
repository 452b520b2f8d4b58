"""``episteme diff``: documents, sections and blocks added, removed and changed between two corpora.

Both sides are committed documents stages (two homes). Documents match by source key; sections by
id (unique in a document; a section changes when its heading, place or any of its blocks does);
blocks by id, within the document. A document is ``changed`` when its
labels changed (everything but id and sections: ``metadataChanged``) or any section or block did.
The artifact is canonical JSON with sorted lists and a fingerprint, so equal corpora give equal
bytes; it holds no paths and no clock.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from episteme_core.errors import EpistemeError
from episteme_core.records.canonical import fingerprint
from episteme_core.store.home import Home

ARTIFACT_TYPE = "corpus-diff"
SCHEMA_VERSION = "1"


def _keyed(items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Items by id; a repeated id gets ``#2``, ``#3`` so nothing is lost."""
    result: dict[str, dict[str, Any]] = {}
    for item in items:
        key = str(item.get("id"))
        if key in result:
            n = 2
            while f"{key}#{n}" in result:
                n += 1
            key = f"{key}#{n}"
        result[key] = item
    return result


def _compare(old: dict[str, Any], new: dict[str, Any]) -> dict[str, list[str]]:
    return {
        "added": sorted(set(new) - set(old)),
        "removed": sorted(set(old) - set(new)),
        "changed": sorted(k for k in set(old) & set(new) if fingerprint(old[k]) != fingerprint(new[k])),
    }


def _parts(document: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    sections = document.get("sections") or []
    blocks = [block for section in sections for block in section.get("blocks") or []]
    labels = {k: v for k, v in document.items() if k not in ("id", "sections")}
    bare = [
        {k: v for k, v in s.items() if k != "blocks"}
        | {"blocks": [fingerprint(b) for b in s.get("blocks") or []]}
        for s in sections
    ]
    return labels, _keyed(bare), _keyed(blocks)


def _load(home: Home, side: str) -> tuple[dict[str, dict[str, Any]], str]:
    from episteme_core.stages.documents import documents_stage

    if not home.root.is_dir():
        raise EpistemeError(
            "INVALID_INPUT", f"--{side} {home.root}: no such home", details={"path": str(home.root)}
        )
    stage = documents_stage(home)
    index = stage.read_index()
    if index is None:
        raise EpistemeError(
            "INVALID_INPUT", f"--{side} {home.root}: has no extracted documents",
            details={"path": str(home.root)}, hint="run episteme extract (or pipeline) there first",
        )
    from episteme_core.records.evidence import document_from_json

    documents = {}
    for entry in index.entries:
        data = stage.read_json(entry)
        document_from_json(data, source=str(stage.object_path(entry)))  # checks shape and id
        documents[entry.key] = data
    return documents, index.fingerprint


def diff_homes(old_root: Path, new_root: Path) -> dict[str, Any]:
    """The diff artifact from the corpus at ``old_root`` to the one at ``new_root``."""
    old, old_fp = _load(Home(old_root), "from")
    new, new_fp = _load(Home(new_root), "to")
    summary = {what: {"added": 0, "removed": 0, "changed": 0} for what in ("documents", "sections", "blocks")}
    entries = []
    for source in sorted(set(old) | set(new)):
        before, after = old.get(source), new.get(source)
        if before is not None and after is not None and before.get("id") == after.get("id"):
            continue
        empty: dict[str, Any] = {}
        b_labels, b_sections, b_blocks = _parts(before) if before else (empty, empty, empty)
        a_labels, a_sections, a_blocks = _parts(after) if after else (empty, empty, empty)
        sections = _compare(b_sections, a_sections)
        blocks = _compare(b_blocks, a_blocks)
        status = "added" if before is None else "removed" if after is None else "changed"
        summary["documents"][status] += 1
        for what, found in (("sections", sections), ("blocks", blocks)):
            for change, keys in found.items():
                summary[what][change] += len(keys)
        entries.append({
            "source": source,
            "status": status,
            "fromDocument": before.get("id") if before else None,
            "toDocument": after.get("id") if after else None,
            "fromSnapshot": before.get("snapshotId") if before else None,
            "toSnapshot": after.get("snapshotId") if after else None,
            "metadataChanged": status != "changed" or fingerprint(b_labels) != fingerprint(a_labels),
            "sections": sections,
            "blocks": blocks,
        })
    artifact: dict[str, Any] = {
        "schemaVersion": SCHEMA_VERSION,
        "artifactType": ARTIFACT_TYPE,
        "from": {"documentsFingerprint": old_fp, "documents": len(old)},
        "to": {"documentsFingerprint": new_fp, "documents": len(new)},
        "summary": summary,
        "documents": entries,
    }
    artifact["fingerprint"] = fingerprint(artifact)
    return artifact


def render(artifact: dict[str, Any], output: str | None) -> str:
    s = artifact["summary"]
    lines = [
        "Documents: {added} added, {removed} removed, {changed} changed.".format(**s["documents"]),
        "Sections: {added} added, {removed} removed, {changed} changed.".format(**s["sections"]),
        "Blocks: {added} added, {removed} removed, {changed} changed.".format(**s["blocks"]),
    ]
    for entry in artifact["documents"]:
        sec = entry["sections"]
        lines.append(
            f"  {entry['status']:8} {entry['source']} (sections +{len(sec['added'])} -{len(sec['removed'])} "
            f"~{len(sec['changed'])})"
        )
    if output:
        lines.append(f"Diff: {output}")
    return "\n".join(lines)
