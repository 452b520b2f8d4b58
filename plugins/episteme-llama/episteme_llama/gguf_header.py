"""Read a GGUF file's header and metadata without llama.cpp, so a bad file gets a precise error.

llama.cpp reports every failed load as the same "failed to load model"; reading the header first
tells a file that is not GGUF at all, a truncated or corrupt header, and the architecture the file
declares apart. Only the metadata is read (values of large arrays are skipped, not kept), within
the file's size, so a corrupt length cannot make this read or allocate beyond the file.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import Any, BinaryIO

import attrs

MAGIC = b"GGUF"
MAX_STRING_BYTES = 16 << 20  # a metadata string longer than this is corrupt (chat templates are ~10 KB)
MAX_KEYS = 1 << 16
# GGUF value types: id -> struct format of one item (None: string, array).
_FIXED = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9
KEPT = (
    "general.architecture", "general.name", "general.file_type", "tokenizer.ggml.model",
    "tokenizer.chat_template",
)


class GgufError(ValueError):
    """The file is not a readable GGUF file; the message says why."""


@attrs.frozen
class GgufInfo:
    """What the header says: format version, counts, and the few metadata values the reader uses."""

    version: int
    tensors: int
    metadata: dict[str, Any]

    @property
    def architecture(self) -> str | None:
        value = self.metadata.get("general.architecture")
        return value if isinstance(value, str) else None

    @property
    def name(self) -> str | None:
        value = self.metadata.get("general.name")
        return value if isinstance(value, str) else None

    def context_length(self) -> int | None:
        value = self.metadata.get(f"{self.architecture}.context_length")
        return value if isinstance(value, int) else None

    @property
    def chat_template(self) -> str | None:
        value = self.metadata.get("tokenizer.chat_template")
        return value if isinstance(value, str) else None


class _Reader:
    def __init__(self, handle: BinaryIO, size: int) -> None:
        self.handle = handle
        self.size = size

    def take(self, count: int) -> bytes:
        if count < 0 or self.handle.tell() + count > self.size:
            raise GgufError(f"header is truncated or corrupt (a field runs past the end at byte "
                            f"{self.handle.tell()} of {self.size})")
        return self.handle.read(count)

    def skip(self, count: int) -> None:
        if count < 0 or self.handle.tell() + count > self.size:
            raise GgufError("header is truncated or corrupt (an array runs past the end of the file)")
        self.handle.seek(count, os.SEEK_CUR)

    def unpack(self, fmt: str) -> Any:
        return struct.unpack("<" + fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self) -> str:
        length = self.unpack("Q")
        if length > MAX_STRING_BYTES:
            raise GgufError(f"header is corrupt (a string of {length} bytes)")
        raw = self.take(length)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise GgufError("header is corrupt (a string is not UTF-8)") from exc

    def value(self, kind: int) -> Any:
        """One value; an array's items are skipped (None is returned for it)."""
        if kind in _FIXED:
            return self.unpack(_FIXED[kind])
        if kind == _STRING:
            return self.string()
        if kind == _ARRAY:
            item_kind = self.unpack("I")
            count = self.unpack("Q")
            if item_kind in _FIXED:
                self.skip(count * struct.calcsize(_FIXED[item_kind]))
            elif item_kind == _STRING:
                for _ in range(count):
                    length = self.unpack("Q")
                    self.skip(length)
            else:
                raise GgufError(f"header is corrupt (array of unknown type {item_kind})")
            return None
        raise GgufError(f"header is corrupt (value of unknown type {kind})")


def read_header(path: str | Path) -> GgufInfo:
    """The header of the GGUF file at ``path``; ``GgufError`` when it is not GGUF or is corrupt."""
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        reader = _Reader(handle, size)
        if size < 4 or handle.read(4) != MAGIC:
            handle.seek(0)
            start = handle.read(8)
            raise GgufError(f"not a GGUF file (it starts with {start!r}, a GGUF file with b'GGUF')")
        handle.seek(4)
        version = reader.unpack("I")
        if version not in (2, 3):
            raise GgufError(f"GGUF version {version} is not supported (2 and 3 are; version 1 files are "
                            "obsolete, and a huge number means a big-endian file)")
        tensors = reader.unpack("Q")
        keys = reader.unpack("Q")
        if keys > MAX_KEYS:
            raise GgufError(f"header is corrupt ({keys} metadata keys)")
        metadata: dict[str, Any] = {}
        for _ in range(keys):
            key = reader.string()
            kind = reader.unpack("I")
            value = reader.value(kind)
            if key in KEPT or key.endswith(".context_length"):
                metadata[key] = value
        return GgufInfo(version=version, tensors=tensors, metadata=metadata)
