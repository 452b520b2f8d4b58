"""Decoding and paragraph splitting shared by books and intent: BOM, CRLF, legacy encodings."""

from __future__ import annotations

import codecs
import os
import re
from array import array

# Bytes Windows-1252 leaves undefined; text holding them is not Windows-1252.
_CP1252_UNDEFINED = frozenset(b"\x81\x8d\x8f\x90\x9d")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")


def _legacy_byte(byte: int) -> str:
    if byte in _CP1252_UNDEFINED:
        return bytes([byte]).decode("latin-1")
    return bytes([byte]).decode("cp1252")


def _repair(error: UnicodeError) -> tuple[str, int]:
    assert isinstance(error, UnicodeDecodeError)
    bad = error.object[error.start:error.end]
    return "".join(_legacy_byte(b) for b in bad), error.end


codecs.register_error("episteme-cp1252", _repair)


def decode_text(data: bytes) -> tuple[str, str]:
    """Decode ``data`` and name the encoding used.

    BOMs first; then strict UTF-8; text that is not UTF-8 is read as Windows-1252 (Latin-1 for the
    five bytes it leaves undefined). A file that mixes UTF-8 with stray Windows-1252 bytes (some
    Project Gutenberg files do) keeps its UTF-8 and reads only the stray bytes as Windows-1252:
    ``utf-8+windows-1252``.
    """
    if data.startswith(codecs.BOM_UTF8):
        body = data[len(codecs.BOM_UTF8):]
        text, encoding = decode_text(body)
        return text, "utf-8-sig" if encoding == "utf-8" else encoding
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors="replace"), "utf-16"
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    mixed = data.decode("utf-8", errors="episteme-cp1252")
    pure = data.decode("cp1252", errors="episteme-cp1252")
    # Equal unless some non-ASCII text came from valid multi-byte UTF-8 sequences: "mixed".
    if mixed == pure:
        return pure, "windows-1252"
    return mixed, "utf-8+windows-1252"


def normalise_newlines(text: str) -> str:
    """CRLF and lone CR become LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def looks_binary(data: bytes) -> bool:
    """A NUL byte in the first 8 KiB (UTF-16 with a BOM aside) marks a binary file."""
    head = data[:8192]
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return False
    return b"\x00" in head


def split_paragraphs(
    text: str, *, first_line: int = 1, markdown: bool = False
) -> list[tuple[str, int]]:
    """Paragraphs at blank lines, each ``(text, line number)``; Markdown fences stay whole."""
    starts, ends, lines = paragraph_spans(text, first_line=first_line, markdown=markdown)
    return [(text[start:end], line) for start, end, line in zip(starts, ends, lines, strict=True)]


def paragraph_spans(
    text: str, *, first_line: int = 1, markdown: bool = False
) -> tuple[array[int], array[int], array[int]]:
    """Where ``split_paragraphs``'s paragraphs lie in ``text``: their start and end offsets and first
    line numbers, as arrays. A paragraph is a run of lines that are not blank (or lie inside a
    Markdown fence), so its text is the slice ``text[start:end]``; no string is kept per line or per
    paragraph (a book of a million short paragraphs keeps three numbers each)."""
    starts: array[int] = array("q")
    ends: array[int] = array("q")
    lines: array[int] = array("q")
    opened = -1  # where the paragraph being read starts; -1 between paragraphs
    closed = 0
    opened_line = first_line
    in_fence = False
    position = 0
    number = first_line
    size = len(text)
    while True:
        end = text.find("\n", position)
        if end == -1:
            end = size
        line = text[position:end]
        if markdown and _FENCE.match(line):
            in_fence = not in_fence
        if not in_fence and (not line or line.isspace()):
            if opened >= 0:
                starts.append(opened)
                ends.append(closed)
                lines.append(opened_line)
                opened = -1
        else:
            if opened < 0:
                opened, opened_line = position, number
            closed = end
        if end == size:
            break
        position = end + 1
        number += 1
    if opened >= 0:
        starts.append(opened)
        ends.append(closed)
        lines.append(opened_line)
    return starts, ends, lines


def parse_front_matter(text: str, *, strict: bool = False) -> tuple[dict[str, str], str, int, str]:
    """Split ``---`` front matter off the top of ``text``: its ``key: value`` fields, the rest of the
    text, how many lines it took, and its raw text (kept so nothing of the source is lost).

    ``strict`` (plain-text files): only a block made entirely of ``key: value`` lines counts.
    """
    if not text.startswith("---\n"):
        return {}, text, 0, ""
    end = text.find("\n---", 3)
    while end != -1 and text[end + 4:end + 5] not in ("\n", ""):
        end = text.find("\n---", end + 4)
    if end == -1:
        return {}, text, 0, ""
    block = text[4:end]
    fields: dict[str, str] = {}
    for line in block.split("\n"):
        key, sep, value = line.partition(":")
        if sep and key.strip() and not key.startswith((" ", "\t", "-", "#")):
            fields[key.strip().lower()] = value.strip().strip("'\"")
        elif strict and line.strip():
            return {}, text, 0, ""
    if strict and not fields:
        return {}, text, 0, ""
    rest = text[end + 4:]
    if rest.startswith("\n"):
        rest = rest[1:]
    consumed = text[:end + 4].count("\n") + 1
    return fields, rest, consumed, block


# File-system names -------------------------------------------------------------------------------
# On POSIX a file name is bytes; Python holds bytes that are not UTF-8 as lone surrogates
# (U+DC80-U+DCFF, "surrogateescape"), which no JSON, record id or message can carry.

_ESCAPED = re.compile("[\udc80-\udcff]")


def name_is_utf8(name: str) -> bool:
    """True when the file-system name ``name`` was valid UTF-8 (holds no surrogate escape)."""
    return _ESCAPED.search(name) is None


def fs_text(name: str | os.PathLike[str]) -> str:
    """A file-system name or path as printable Unicode: bytes that are not UTF-8 become ``\\xNN``."""
    text = os.fspath(name)
    if name_is_utf8(text):
        return text
    return os.fsencode(text).decode("utf-8", "backslashreplace")


def fs_segment(name: str) -> str | None:
    """``id_segment`` of a file-system name, its bytes that are not UTF-8 percent-encoded (``%E9``).

    ``id_segment`` already writes ``%`` itself as ``%25``, so the id stays unambiguous and stable:
    the same name always gives the same id, and two names never share one.
    """
    from episteme_core.personal.model import id_segment

    segment = id_segment(name)
    if segment is None or name_is_utf8(segment):
        return segment
    return _ESCAPED.sub(lambda m: f"%{ord(m.group()) - 0xDC00:02X}", segment)
