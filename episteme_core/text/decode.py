"""Bytes to text: the codec a snapshot's bytes decode with, and the one normalised decoding.

Decoding: the snapshot's charset (else UTF-8); a BOM is dropped and CRLF/CR become LF before
anything else, so every character span counts characters of that normalised text. Bytes that do not
decode are replaced (U+FFFD), with a diagnostic when a builder is given. Capture checks declared
charsets with ``text_codec``; extraction and chunking decode with ``decode``.
"""

from __future__ import annotations

import codecs
from typing import Protocol


class Diagnoses(Protocol):
    """Where ``decode`` reports an unknown charset or replaced bytes (a ``DocumentBuilder``)."""

    def diagnose(self, code: str, level: str, message: str) -> object: ...


def encoding_for(content: bytes, charset: str | None) -> str:
    """The codec ``decode`` uses: a BOM's, else the charset's (known to Python), else UTF-8."""
    if content.startswith(codecs.BOM_UTF8):
        return "utf-8"
    if content.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    if charset:
        name = text_codec(charset)
        if name is not None:
            return name
    return "utf-8"


def text_codec(charset: str) -> str | None:
    """Python's name for ``charset`` when it decodes bytes to text; None for an unknown name and
    for codecs that are not text encodings (``base64``, ``rot13``, ``hex``, ...)."""
    try:
        name = codecs.lookup(charset).name
        b"x".decode(name, "replace")  # a bytes-to-bytes codec refuses (empty input would not)
    except (LookupError, TypeError, ValueError):
        return None
    return name


def decode(content: bytes, charset: str | None, builder: Diagnoses | None = None) -> str:
    """Bytes to normalised text (BOM dropped, CRLF/CR to LF); undecodable bytes are replaced."""
    encoding = encoding_for(content, charset)
    if content.startswith(codecs.BOM_UTF8):
        content = content[len(codecs.BOM_UTF8):]
    elif charset and encoding != "utf-16" and builder is not None and text_codec(charset) is None:
        builder.diagnose("UNKNOWN_CHARSET", "warning", f'unknown charset "{charset}", decoded as UTF-8')
    try:
        text = content.decode(encoding)
    except UnicodeDecodeError as exc:
        text = content.decode(encoding, errors="replace")
        if builder is not None:
            builder.diagnose(
                "INVALID_ENCODING", "error",
                f"bytes that are not valid {encoding} (first at byte {exc.start}) were replaced "
                "with U+FFFD",
            )
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n").replace("\r", "\n")
