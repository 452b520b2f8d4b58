"""Intent: ``$EPISTEME_HOME/intent.md`` as the record ``intent``, one paragraph per heading."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from episteme_core.errors import EpistemeError
from episteme_core.personal.model import Paragraph, Record, build_record, from_timestamp, parse_time
from episteme_core.personal.plaintext import decode_text, normalise_newlines, parse_front_matter
from episteme_core.personal.safe_open import Refused, read_checked
from episteme_core.records.canonical import sha256_hex

SOURCE = "intent"
RECORD_ID = "intent"
FILE_NAME = "intent.md"
MAX_BYTES = 16 * 1024 * 1024

# The title runs to its last character that is not a space, tab or # (possessive runs: linear).
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.(?:[ \t#]*+[^ \t#\n])*+)[ \t#]*$")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")


def split_sections(text: str, first_line: int = 1) -> list[tuple[str, str | None, int]]:
    """``(text, heading, line)`` for the text before the first heading and each heading's section."""
    sections: list[tuple[list[str], str | None, int]] = []
    current: list[str] = []
    heading: str | None = None
    start = first_line
    in_fence = False
    for number, line in enumerate(text.split("\n"), start=first_line):
        if _FENCE.match(line):
            in_fence = not in_fence
        found = None if in_fence else _HEADING.match(line)
        if found:
            sections.append((current, heading, start))
            current, heading, start = [line], found.group(2).strip(), number
        else:
            current.append(line)
    sections.append((current, heading, start))
    out = []
    for lines, title, line_no in sections:
        while lines and not lines[-1].strip():
            lines.pop()
        while lines and not lines[0].strip():
            lines.pop(0)
            line_no += 1
        if lines:
            out.append(("\n".join(lines), title, line_no))
    return out


def read_intent(path: Path) -> Record:
    """The intent record; a missing or unreadable file is ``INVALID_INPUT`` naming it."""
    try:  # opened once, checked on the descriptor, read no further than the size checked
        data, info = read_checked(path, MAX_BYTES)
    except Refused as refused:
        if refused.reason == "missing":
            raise EpistemeError(
                "INVALID_INPUT", f"{path}: no intent file", details={"path": str(path)},
                hint=f"write your intent as Markdown in {path}",
            ) from None
        if refused.reason == "tooLarge":
            raise EpistemeError(
                "LIMIT_EXCEEDED", f"{path}: larger than {MAX_BYTES} bytes",
                details={"path": str(path), "limit": MAX_BYTES},
            ) from None
        if refused.reason in ("symlink", "notRegular"):
            raise EpistemeError(
                "INVALID_INPUT", f"{path}: not a regular file (symbolic links are refused)",
                details={"path": str(path)},
            ) from None
        raise EpistemeError("INVALID_INPUT", refused.message.removesuffix(", skipped"),
                            details={"path": str(path)}) from None
    decoded, encoding = decode_text(data)
    text = normalise_newlines(decoded)
    front, body, consumed, raw_front = parse_front_matter(text)
    time = parse_time(front["date"]) if front.get("date") else None
    metadata: dict[str, Any] = {
        "encoding": encoding, "bytes": len(data), "sha256": sha256_hex(data),
        "timeFrom": "frontMatter" if time else "mtime",
    }
    if consumed:
        metadata["frontMatter"] = front
        metadata["frontMatterText"] = raw_front
    if time is None:
        time = from_timestamp(info.st_mtime)
    paragraphs = []
    for index, (section, heading, line) in enumerate(split_sections(body, consumed + 1), start=1):
        attributes: dict[str, Any] = {"line": line}
        if heading is not None:
            attributes["heading"] = heading
        paragraphs.append(Paragraph(n=index, text=section, time=time, kind="text", attributes=attributes))
    title = front.get("title") or next(
        (p.attributes["heading"] for p in paragraphs if "heading" in p.attributes), "intent"
    )
    return build_record(
        id=RECORD_ID, source=SOURCE, time=time, paragraphs=paragraphs, title=title, metadata=metadata
    )
