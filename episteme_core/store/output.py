"""Where an export's bytes go: a file written atomically, or memory for ``--out -``.

Exporters only produce bytes (``export(args, ctx, out)`` writes to ``out``); this module owns the
target: a temp file beside it, fsync'd and renamed into place (so a reader sees the old file or the
new one, never a part), or a buffer whose bytes come back as the envelope's ``data.artifact``.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any

import attrs

# Media types whose bytes come back in ``data.artifact`` as text (UTF-8); others as base64.
TEXT_MEDIA_SUFFIXES = ("json", "+json", "+xml", "/xml")


@attrs.frozen
class Exported:
    """What an export wrote: the exporter's summary, size, sha256, and the bytes when kept in memory."""

    summary: dict[str, Any]
    size: int
    sha256: str
    path: Path | None
    data: bytes | None


class _Counting:
    """A write-only wrapper that hashes and counts what passes through to ``inner``."""

    def __init__(self, inner: IO[bytes]) -> None:
        self.inner = inner
        self.digest = hashlib.sha256()
        self.size = 0

    def write(self, data: bytes) -> int:
        self.digest.update(data)
        self.size += len(data)
        return self.inner.write(data)

    def flush(self) -> None:
        self.inner.flush()


Produce = Callable[[IO[bytes]], Mapping[str, Any]]


def export_bytes(produce: Produce, out: str) -> Exported:
    """Run ``produce(stream)`` into ``out``: a path (atomic replace) or ``-`` (kept in memory)."""
    from episteme_core.store.atomic import fsync_dir, temp_path_for

    if out == "-":
        buffer = io.BytesIO()
        counting = _Counting(buffer)
        summary = dict(produce(counting))  # type: ignore[arg-type]
        return Exported(summary, counting.size, counting.digest.hexdigest(), None, buffer.getvalue())
    target = Path(out).expanduser().absolute()
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = temp_path_for(target)
    try:
        with open(temp, "xb") as handle:
            counting = _Counting(handle)
            summary = dict(produce(counting))  # type: ignore[arg-type]
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, target)
        fsync_dir(target.parent)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
    return Exported(summary, counting.size, counting.digest.hexdigest(), target, None)


def artifact(exporter: str, media_type: str, data: bytes) -> dict[str, Any]:
    """The ``data.artifact`` of ``--out -``: the bytes as UTF-8 text when the media type is text and
    they decode, else base64, with their size and sha256 (``schema/artifact.schema.json``)."""
    base = media_type.split(";", 1)[0].strip().lower()
    text: str | None = None
    if base.startswith("text/") or base.endswith(TEXT_MEDIA_SUFFIXES):
        with contextlib.suppress(UnicodeDecodeError):
            text = data.decode("utf-8")
    return {
        "artifactType": "export",
        "exporter": exporter,
        "mediaType": media_type,
        "encoding": "utf-8" if text is not None else "base64",
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "data": text if text is not None else base64.b64encode(data).decode("ascii"),
    }
