"""Claude Code transcripts: one record ``chat:claude/<project>/<session>`` per session file.

Reads both line schemas (v1.0.x with inline ``isSidechain`` turns, v2.x with
``<session>/subagents/agent-*.jsonl``). Never fatal on a line: unknown types, malformed JSON and a
truncated last line are skipped and counted in ``metadata.skipped``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import attrs

from episteme_core.errors import EpistemeError
from episteme_core.personal.limits import CLAUDE_MAX_BYTES, CLAUDE_MAX_LINE_BYTES, CLAUDE_PROJECTS
from episteme_core.personal.model import (
    Paragraph,
    Record,
    build_record,
    check_record_id,
    from_timestamp,
    parse_time,
)
from episteme_core.personal.plaintext import fs_segment, fs_text, name_is_utf8
from episteme_core.personal.safe_open import Refused, is_symlink, open_checked
from episteme_core.records.canonical import canonical_text

SOURCE = "claude"
DEFAULT_PROJECTS = CLAUDE_PROJECTS
DEFAULT_MAX_LINE_BYTES = CLAUDE_MAX_LINE_BYTES
DEFAULT_MAX_BYTES = CLAUDE_MAX_BYTES
TITLE_CHARS = 120
# Reasons a line is skipped that are worth a LINES_SKIPPED warning (the others are ordinary).
BAD_LINE_REASONS = ("malformed", "truncated", "oversized", "loneSurrogate")
# A JSON escape of a UTF-16 surrogate (\ud800-\udfff): only lines holding one need the full check.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")

Warn = Callable[[str, str], None]


@attrs.define
class Transcript:
    """What one transcript file gave: paragraphs (numbered later), skip counts, session facts."""

    paragraphs: list[Paragraph] = attrs.field(factory=list)
    skipped: dict[str, int] = attrs.field(factory=dict)
    lines: int = 0
    facts: dict[str, Any] = attrs.field(factory=dict)
    versions: set[str] = attrs.field(factory=set)

    def skip(self, reason: str, n: int = 1) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + n


@attrs.define
class ClaudeScan:
    """What one ``ingest claude`` run found."""

    records: list[Record] = attrs.field(factory=list)
    skipped: dict[str, int] = attrs.field(factory=dict)
    sessions_skipped: int = 0
    names_not_utf8: int = 0  # sessions read whose project or file name is not UTF-8

    def extra(self) -> dict[str, Any]:
        """What the ingest report adds besides records and skips."""
        return {"sessionsSkipped": self.sessions_skipped, "namesNotUtf8": self.names_not_utf8}

    def add_skips(self, counts: dict[str, int]) -> None:
        for reason, n in counts.items():
            self.skipped[reason] = self.skipped.get(reason, 0) + n


def iter_lines(handle: BinaryIO, max_line_bytes: int) -> Iterator[tuple[bytes | None, bool]]:
    """Each line as ``(bytes, complete)``; a line over the bound is ``(None, True)`` and never held whole."""
    while True:
        line = handle.readline(max_line_bytes + 1)
        if not line:
            return
        if len(line) > max_line_bytes and not line.endswith(b"\n"):
            while True:  # drain the rest of the oversized line in bounded reads
                rest = handle.readline(1 << 20)
                if not rest or rest.endswith(b"\n"):
                    break
            yield None, True
            continue
        if line.endswith(b"\n"):
            yield line[:-1], True
        else:
            yield line, False


def _text_of_result(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for item in content:
            if isinstance(item, dict) and item.get("type") == "text" and isinstance(item.get("text"), str):
                parts.append(item["text"])
            elif isinstance(item, dict) and item.get("type") == "image":
                parts.append("[image]")
        return "\n\n".join(parts)
    return None


def parse_transcript(
    handle: BinaryIO,
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    agent_file: str | None = None,
    seen: set[str] | None = None,
) -> Transcript:
    """Parse one JSONL transcript (a session or a sub-agent file) into paragraphs and counts."""
    result = Transcript()
    seen = set() if seen is None else seen
    for raw, complete in iter_lines(handle, max_line_bytes):
        result.lines += 1
        if raw is None:
            result.skip("oversized")
            continue
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            result.skip("malformed" if complete else "truncated")
            continue
        if not isinstance(obj, dict):
            result.skip("malformed")
            continue
        if _SURROGATE_ESCAPE.search(raw) and not _is_unicode(obj):
            result.skip("loneSurrogate")  # a cut emoji: no text can hold it, so the line is skipped
            continue
        kind = obj.get("type")
        if kind == "summary":
            made = _summary(obj, raw, seen)
            if isinstance(made, str):
                result.skip(made)
            else:
                result.paragraphs.append(made)
            continue
        if kind not in ("user", "assistant"):
            result.skip(kind if isinstance(kind, str) and kind else "untyped")
            continue
        message = obj.get("message")
        if not isinstance(message, dict):
            result.skip("malformed")
            continue
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            result.skip("malformed")
            continue
        _note_facts(result, obj)
        line_key = obj.get("uuid") if isinstance(obj.get("uuid"), str) and obj.get("uuid") else (
            "sha256:" + hashlib.sha256(raw).hexdigest()[:32]
        )
        time = parse_time(obj["timestamp"]) if isinstance(obj.get("timestamp"), str) else None
        role = message.get("role")
        common: dict[str, Any] = {"role": role if isinstance(role, str) else kind}
        if kind == "assistant" and isinstance(message.get("model"), str):
            common["model"] = message["model"]
        if obj.get("isSidechain") is True or agent_file is not None:
            common["sidechain"] = True
        if isinstance(obj.get("agentId"), str):
            common["agentId"] = obj["agentId"]
        if obj.get("isMeta") is True:
            common["meta"] = True
        for index, block in enumerate(content):
            key = f"{line_key}:{index}"
            if key in seen:
                result.skip("duplicate")
                continue
            made = _paragraph(block, time, common, key)
            if isinstance(made, str):
                result.skip(made)
                continue
            seen.add(key)
            result.paragraphs.append(made)
    return result


def _summary(obj: dict[str, Any], raw: bytes, seen: set[str]) -> Paragraph | str:
    """A ``summary`` line (the title Claude Code wrote for the conversation up to ``leafUuid``) as a
    marked ``summary`` paragraph: a model's words, kept and searchable, left out of ``ask`` by
    default. It has no time of its own."""
    text = obj.get("summary")
    if not isinstance(text, str):
        return "malformed"
    if not text.strip():
        return "emptyText"
    leaf = obj.get("leafUuid")
    key = f"summary:{leaf}" if isinstance(leaf, str) and leaf else (
        "summary:sha256:" + hashlib.sha256(raw).hexdigest()[:32])
    if key in seen:
        return "duplicate"
    seen.add(key)
    attributes: dict[str, Any] = {"role": "summary", "key": key}
    if isinstance(leaf, str) and leaf:
        attributes["leafUuid"] = leaf
    return Paragraph(n=0, text=text, time=None, kind="summary", attributes=attributes)


def _is_unicode(obj: Any) -> bool:
    """True when every string in ``obj`` is valid Unicode (no lone surrogate from a ``\\u`` escape)."""
    try:
        json.dumps(obj, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _note_facts(result: Transcript, obj: dict[str, Any]) -> None:
    for field in ("cwd", "gitBranch", "slug", "sessionId"):
        value = obj.get(field)
        if isinstance(value, str) and value and field not in result.facts:
            result.facts[field] = value
    if isinstance(obj.get("version"), str):
        result.versions.add(obj["version"])


def _paragraph(block: Any, time: str | None, common: dict[str, Any], key: str) -> Paragraph | str:
    """The paragraph for one content block, or the reason it is skipped."""
    if not isinstance(block, dict):
        return "malformedBlock"
    block_type = block.get("type")
    attributes = {**common, "key": key}
    if block_type == "text":
        text = block.get("text")
        kind = "text"
    elif block_type == "thinking":
        text = block.get("thinking")
        kind = "thinking"
    elif block_type == "tool_use":
        name = block.get("name") if isinstance(block.get("name"), str) else "tool"
        try:
            text = f"{name} {canonical_text(block.get('input', {}))}"
        except EpistemeError:
            text = f"{name} {json.dumps(block.get('input'), ensure_ascii=False, sort_keys=True, default=str)}"
        kind = "tool_call"
        attributes["tool"] = name
        if isinstance(block.get("id"), str):
            attributes["toolUseId"] = block["id"]
    elif block_type == "tool_result":
        text = _text_of_result(block.get("content"))
        kind = "tool_result"
        if isinstance(block.get("tool_use_id"), str):
            attributes["toolUseId"] = block["tool_use_id"]
        if block.get("is_error") is True:
            attributes["isError"] = True
    else:
        return f"block:{block_type}" if isinstance(block_type, str) else "malformedBlock"
    if not isinstance(text, str):
        return "malformedBlock"
    if not text.strip():
        return "emptyText"
    return Paragraph(n=0, text=text, time=time, kind=kind, attributes=attributes)


def read_session(
    project_dir: Path,
    session_file: Path,
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    max_bytes: int = DEFAULT_MAX_BYTES,
    warn: Warn | None = None,
) -> Record | None:
    """The record of one session with its sub-agent files; None when it has no paragraphs."""
    warn = warn or (lambda code, message: None)
    raw_session = session_file.name[: -len(".jsonl")]
    project = fs_segment(project_dir.name) or "_"
    session = fs_segment(raw_session) or "_"
    skipped: dict[str, int] = {}
    files = [session_file] + _subagent_files(session_file, skipped, warn)
    seen: set[str] = set()
    paragraphs: list[Paragraph] = []
    facts: dict[str, Any] = {}
    versions: set[str] = set()
    lines = 0
    attached: list[str] = []
    mtime: float | None = None
    left = max_bytes  # the session file and its sub-agent files count together: a session's record
    # is held whole while it is stored and extracted, so its bytes in all are what bound the memory
    for path in files:
        agent = None if path == session_file else path.stem
        try:  # opened once, checked on the descriptor, read no further than the size checked
            # from the projects folder down, no folder followed if it is (or becomes) a symlink
            with open_checked(path, left, beneath=project_dir.parent) as (handle, info):
                parsed = parse_transcript(handle, max_line_bytes=max_line_bytes, agent_file=agent, seen=seen)
        except Refused as refused:
            if agent is None and refused.reason in ("symlink", "notRegular", "missing"):
                raise  # the session file itself is no transcript: the caller counts and tells it
            skipped[refused.reason] = skipped.get(refused.reason, 0) + 1
            message = refused.message
            if refused.reason == "tooLarge" and left < max_bytes:
                message = (f"{fs_text(os.fspath(path))}: with the session's other files, more than "
                           f"{max_bytes} bytes, skipped")
            warn("TRANSCRIPT_SKIPPED", message)
            continue
        left -= info.st_size
        if agent is None:
            mtime = info.st_mtime
        if agent is not None:
            attached.append(fs_text(f"{raw_session}/subagents/{path.name}"))
            for paragraph in parsed.paragraphs:
                paragraph.attributes.setdefault("agentId", agent.removeprefix("agent-"))
        paragraphs.extend(parsed.paragraphs)
        for reason, n in parsed.skipped.items():
            skipped[reason] = skipped.get(reason, 0) + n
        for key, value in parsed.facts.items():
            facts.setdefault(key, value)
        versions |= parsed.versions
        lines += parsed.lines
    if all(p.kind == "summary" for p in paragraphs):  # a title without a conversation cites nothing
        return None
    times = [p.time for p in paragraphs if p.time]
    if mtime is None:  # the session file was not read (too large): its stat, never followed
        mtime = os.lstat(session_file).st_mtime
    time = times[0] if times else from_timestamp(mtime)
    metadata: dict[str, Any] = {
        "project": fs_text(project_dir.name),
        "session": fs_text(raw_session),
        "lines": lines,
        "skipped": skipped,
        "versions": sorted(versions),
        "subagentFiles": attached,
        "sidechainParagraphs": sum(1 for p in paragraphs if p.attributes.get("sidechain")),
        **{k: v for k, v in facts.items() if k != "sessionId"},
    }
    return build_record(
        id=f"chat:claude/{project}/{session}",
        source=SOURCE,
        time=time,
        paragraphs=paragraphs,
        title=_title(paragraphs),
        metadata=metadata,
    )


def _subagent_files(session_file: Path, skipped: dict[str, int], warn: Warn) -> list[Path]:
    """``<session>/subagents/*.jsonl`` in name order; a symlinked session or ``subagents`` folder is
    not followed (its files may lie outside ``--projects``): skipped, counted and told."""
    folder = session_file.with_suffix("")
    for step in (folder, folder / "subagents"):
        if is_symlink(step):
            skipped["symlink"] = skipped.get("symlink", 0) + 1
            warn("TRANSCRIPT_SKIPPED", f"{fs_text(step)}: a symbolic link, skipped")
            return []
        if not step.is_dir():
            return []
    return sorted(p for p in (folder / "subagents").glob("*.jsonl") if not p.name.startswith("."))


def _title(paragraphs: list[Paragraph]) -> str | None:
    for paragraph in paragraphs:
        if (
            paragraph.kind == "text"
            and paragraph.attributes.get("role") == "user"
            and not paragraph.attributes.get("meta")
            and not paragraph.attributes.get("sidechain")
        ):
            first = paragraph.text.strip().split("\n", 1)[0]
            return first[:TITLE_CHARS]
    return None


def scan_projects(
    projects: Path,
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    max_bytes: int = DEFAULT_MAX_BYTES,
    warn: Warn | None = None,
) -> ClaudeScan:
    """Every session under ``projects/<project>/<session>.jsonl``, in name order, all at once."""
    scan = ClaudeScan()
    scan.records.extend(iter_sessions(projects, scan, max_line_bytes=max_line_bytes, max_bytes=max_bytes,
                                      warn=warn))
    return scan


def iter_sessions(
    projects: Path,
    scan: ClaudeScan,
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    max_bytes: int = DEFAULT_MAX_BYTES,
    warn: Warn | None = None,
) -> Iterator[Record]:
    """Each session's record as it is read, its skips counted in ``scan``: an ingest stores one
    session and lets it go before reading the next."""
    warn = warn or (lambda code, message: None)
    if not projects.is_dir():
        raise EpistemeError(
            "INVALID_INPUT",
            f"{fs_text(projects)}: not a folder of Claude Code projects",
            details={"path": fs_text(projects)},
            hint="pass --projects DIR (the folder that holds one folder per project)",
        )
    for project_dir in sorted(projects.iterdir()):
        if project_dir.name.startswith(".") or not project_dir.is_dir():
            continue
        if project_dir.is_symlink():
            scan.add_skips({"symlink": 1})
            warn("TRANSCRIPT_SKIPPED", f"{fs_text(project_dir)}: a symbolic link, skipped")
            continue
        if fs_segment(project_dir.name) is None:
            scan.sessions_skipped += 1
            warn("TRANSCRIPT_SKIPPED", f"{fs_text(project_dir)}: the name cannot be part of a record id, "
                 "skipped")
            continue
        for session_file in sorted(project_dir.glob("*.jsonl")):
            session = session_file.name[: -len(".jsonl")]
            where = fs_text(session_file)
            if session_file.name.startswith(".") or fs_segment(session) is None:
                scan.sessions_skipped += 1
                warn("TRANSCRIPT_SKIPPED", f"{where}: the name cannot be part of a record id, skipped")
                continue
            try:
                check_record_id(f"chat:claude/{fs_segment(project_dir.name)}/{fs_segment(session)}")
                record = read_session(
                    project_dir, session_file, max_line_bytes=max_line_bytes, max_bytes=max_bytes, warn=warn
                )
            except Refused as refused:
                scan.add_skips({refused.reason: 1})
                warn("TRANSCRIPT_SKIPPED", refused.message)
                continue
            except EpistemeError as unfit:  # one session that cannot be a record never fails the run
                scan.sessions_skipped += 1
                warn("TRANSCRIPT_SKIPPED", f"{where}: {unfit.message}, skipped")
                continue
            if record is None:
                scan.sessions_skipped += 1
                continue
            skipped = record.metadata["skipped"]
            scan.add_skips(skipped)
            bad = {k: skipped[k] for k in BAD_LINE_REASONS if skipped.get(k)}
            if bad:
                from episteme_core.records.convert import words  # people read words (loneSurrogate)

                listing = ", ".join(f"{n} {words(reason)}" for reason, n in sorted(bad.items()))
                warn("LINES_SKIPPED", f"{where}: skipped {listing} line(s)")
            if not name_is_utf8(str(session_file.relative_to(projects))):
                scan.names_not_utf8 += 1
                warn("TRANSCRIPT_NAME_NOT_UTF8", f"{where}: the name is not UTF-8; read as {record.id} "
                     "(bytes that are not UTF-8 are written %XX in the id)")
            yield record
