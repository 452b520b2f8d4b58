"""``episteme diff``: a change review of two corpora: documents, sections and blocks added, removed,
changed and moved, with each changed block's text before and after and its words that changed.

Both sides are committed documents stages (two homes). Documents match by source key. Blocks match
by identity and text, in this order: the same id and the same text; then the same text under
another id (in reading order, for repeated texts); then the same id with other text; whatever is
left is added or removed. A matched block whose text is unchanged is ``moved`` when anything else
about it differs (its offsets in the source, its section, its id), and is not reported otherwise:
one word changed early in a document shifts every later offset, and that is a move, not a change.
A ``changed`` block carries its text before and after (each cut at ``max_chars``, ``truncated``
saying so) and a word-level summary (the words removed and added, as runs). Sections match by id:
``changed`` when their heading or the sequence of their blocks' texts differs, ``moved`` when only
their place or offsets do. A document is ``changed`` when any of that, or its labels (everything
but id and sections: ``metadataChanged``), differ. The artifact is canonical JSON with sorted
lists and a fingerprint, so equal corpora give equal bytes; it holds no paths and no clock.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from episteme_core.errors import EpistemeError
from episteme_core.records.canonical import fingerprint
from episteme_core.store.home import Home

ARTIFACT_TYPE = "corpus-diff"
SCHEMA_VERSION = "2"  # 2: moved blocks and sections; changed blocks with their text and word edits
DEFAULT_MAX_CHARS = 1200
MAX_EDITS = 50  # word runs listed per changed block (the counts cover them all)
_WORD = re.compile(r"\S+")
Item = dict[str, Any]


def _keyed(items: list[Item]) -> dict[str, Item]:
    """Items by id; a repeated id gets ``#2``, ``#3`` so nothing is lost."""
    result: dict[str, Item] = {}
    for item in items:
        key = str(item.get("id"))
        if key in result:
            n = 2
            while f"{key}#{n}" in result:
                n += 1
            key = f"{key}#{n}"
        result[key] = item
    return result


def _blocks(document: Item | None) -> list[tuple[str, Item]]:
    """A document's blocks in reading order, each with the id of its section."""
    if document is None:
        return []
    return [(str(section.get("id")), block) for section in document.get("sections") or []
            for block in section.get("blocks") or []]


def match_blocks(before: list[tuple[str, Item]], after: list[tuple[str, Item]]
                 ) -> tuple[list[tuple[int, int]], list[int], list[int]]:
    """Pairs (index before, index after) of matched blocks, and the unmatched indexes of each side:
    by id and text, then by text alone (reading order), then by id alone."""
    pairs: list[tuple[int, int]] = []
    left = set(range(len(before)))
    right = set(range(len(after)))

    def take(key: Any) -> None:
        waiting: dict[Any, list[int]] = {}
        for j in sorted(right):
            waiting.setdefault(key(after[j][1]), []).append(j)
        for i in sorted(left):
            queue = waiting.get(key(before[i][1]))
            if queue:
                j = queue.pop(0)
                pairs.append((i, j))
                left.discard(i)
                right.discard(j)

    take(lambda block: (block.get("id"), block.get("text")))
    take(lambda block: ("text", block.get("text")))
    take(lambda block: ("id", block.get("id")))
    return sorted(pairs, key=lambda pair: pair[1]), sorted(left), sorted(right)


def word_edits(before: str, after: str, max_chars: int) -> dict[str, Any]:
    """The words that changed from ``before`` to ``after``: runs of removed and added words (at most
    ``MAX_EDITS``, each side cut at ``max_chars``) and how many words each side lost and gained."""
    import difflib

    a, b = _WORD.findall(before), _WORD.findall(after)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    edits: list[dict[str, str]] = []
    removed = added = 0
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        removed += i2 - i1
        added += j2 - j1
        if len(edits) < MAX_EDITS:
            edits.append({"removed": " ".join(a[i1:i2])[:max_chars], "added": " ".join(b[j1:j2])[:max_chars]})
    return {"edits": edits, "wordsRemoved": removed, "wordsAdded": added}


def _cut(text: str | None, max_chars: int) -> tuple[str | None, bool]:
    if text is None or len(text) <= max_chars:
        return text, False
    return text[:max_chars], True


def diff_blocks(before: list[tuple[str, Item]], after: list[tuple[str, Item]], max_chars: int
                ) -> tuple[dict[str, list[str]], list[Item]]:
    """The block ids added, removed, changed and moved (after ids, removed ones before), and one
    entry per changed, added or removed block with its text (bounded) and word edits."""
    pairs, gone, new = match_blocks(before, after)
    found: dict[str, list[str]] = {"added": [], "removed": [], "changed": [], "moved": []}
    changes: list[Item] = []
    for i, j in pairs:
        (old_section, old), (section, block) = before[i], after[j]
        if old.get("text") != block.get("text"):
            found["changed"].append(str(block.get("id")))
            text_before, cut_before = _cut(old.get("text"), max_chars)
            text_after, cut_after = _cut(block.get("text"), max_chars)
            changes.append({"status": "changed", "block": block.get("id"), "fromBlock": old.get("id"),
                            "section": section, "fromSection": old_section, "before": text_before,
                            "after": text_after, "truncated": cut_before or cut_after,
                            **word_edits(str(old.get("text") or ""), str(block.get("text") or ""),
                                         max_chars)})
        elif fingerprint(old) != fingerprint(block) or old_section != section:
            found["moved"].append(str(block.get("id")))
    for status, side, indexes in (("removed", before, gone), ("added", after, new)):
        for index in indexes:
            section, block = side[index]
            found[status].append(str(block.get("id")))
            text, cut = _cut(block.get("text"), max_chars)
            words = len(_WORD.findall(str(block.get("text") or "")))
            changes.append({"status": status, "block": block.get("id"), "fromBlock": None, "section": section,
                            "fromSection": None, "before": text if status == "removed" else None,
                            "after": text if status == "added" else None, "truncated": cut, "edits": [],
                            "wordsRemoved": words if status == "removed" else 0,
                            "wordsAdded": words if status == "added" else 0})
    for key in found:
        found[key].sort()
    changes.sort(key=lambda c: (str(c["block"]), c["status"], str(c["fromBlock"])))
    return found, changes


def _sections(document: Item | None) -> dict[str, Item]:
    return _keyed(list(document.get("sections") or [])) if document else {}


def diff_sections(before: Item | None, after: Item | None) -> dict[str, list[str]]:
    """Section ids added, removed, changed (heading or block texts) and moved (anything else)."""
    old, new = _sections(before), _sections(after)
    found: dict[str, list[str]] = {
        "added": sorted(set(new) - set(old)), "removed": sorted(set(old) - set(new)),
        "changed": [], "moved": []}

    def text_of(section: Item) -> Any:
        return [section.get("heading"), section.get("level"),
                [block.get("text") for block in section.get("blocks") or []]]

    for key in sorted(set(old) & set(new)):
        if fingerprint(text_of(old[key])) != fingerprint(text_of(new[key])):
            found["changed"].append(key)
        elif fingerprint(old[key]) != fingerprint(new[key]):
            found["moved"].append(key)
    return found


def _load(home: Home, side: str) -> tuple[dict[str, Item], str]:
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


def _counts() -> dict[str, int]:
    return {"added": 0, "removed": 0, "changed": 0, "moved": 0}


def diff_homes(old_root: Path, new_root: Path, *, max_chars: int = DEFAULT_MAX_CHARS) -> dict[str, Any]:
    """The diff artifact from the corpus at ``old_root`` to the one at ``new_root``; each text it
    holds is cut at ``max_chars`` characters."""
    old, old_fp = _load(Home(old_root), "from")
    new, new_fp = _load(Home(new_root), "to")
    summary = {"documents": {"added": 0, "removed": 0, "changed": 0}, "sections": _counts(),
               "blocks": _counts()}
    entries = []
    for source in sorted(set(old) | set(new)):
        before, after = old.get(source), new.get(source)
        if before is not None and after is not None and before.get("id") == after.get("id"):
            continue
        sections = diff_sections(before, after)
        blocks, changes = diff_blocks(_blocks(before), _blocks(after), max_chars)
        status = "added" if before is None else "removed" if after is None else "changed"
        labels = [{k: v for k, v in side.items() if k not in ("id", "sections")} if side else {}
                  for side in (before, after)]
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
            "metadataChanged": status != "changed" or fingerprint(labels[0]) != fingerprint(labels[1]),
            "sections": sections,
            "blocks": blocks,
            "changes": changes,
        })
    artifact: dict[str, Any] = {
        "schemaVersion": SCHEMA_VERSION,
        "artifactType": ARTIFACT_TYPE,
        "from": {"documentsFingerprint": old_fp, "documents": len(old)},
        "to": {"documentsFingerprint": new_fp, "documents": len(new)},
        "maxChars": max_chars,
        "summary": summary,
        "documents": entries,
    }
    artifact["fingerprint"] = fingerprint(artifact)
    return artifact


def _indent(text: str | None, mark: str) -> str:
    lines = (text or "").splitlines() or [""]
    return "\n".join(f"      {mark} {line}" for line in lines)


def render(artifact: dict[str, Any], output: str | None) -> str:
    """The review for people: the counts, then per document each changed block's words and text."""
    s = artifact["summary"]
    lines = [
        "Documents: {added} added, {removed} removed, {changed} changed.".format(**s["documents"]),
        "Sections: {added} added, {removed} removed, {changed} changed, {moved} moved."
        .format(**s["sections"]),
        "Blocks: {added} added, {removed} removed, {changed} changed, {moved} moved.".format(**s["blocks"]),
    ]
    for entry in artifact["documents"]:
        sec, blocks = entry["sections"], entry["blocks"]
        lines.append(
            f"  {entry['status']:8} {entry['source']} (sections +{len(sec['added'])} -{len(sec['removed'])} "
            f"~{len(sec['changed'])}; blocks +{len(blocks['added'])} -{len(blocks['removed'])} "
            f"~{len(blocks['changed'])}, {len(blocks['moved'])} moved)"
        )
        for change in entry["changes"]:
            where = f"{change['block']} in {change['section']}"
            if change["status"] == "changed":
                words = "; ".join(f"{edit['removed'] or '(nothing)'} -> {edit['added'] or '(nothing)'}"
                                  for edit in change["edits"])
                lines.append(f"    ~ {where}: {words}")
                lines.append(_indent(change["before"], "-"))
                lines.append(_indent(change["after"], "+"))
            elif entry["status"] == "changed":  # a whole added or removed document: not block by block
                mark = "+" if change["status"] == "added" else "-"
                lines.append(f"    {mark} {where}")
                lines.append(_indent(change["after"] if mark == "+" else change["before"], mark))
    if output:
        lines.append(f"Diff: {output}")
    return "\n".join(lines)
