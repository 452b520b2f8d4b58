"""Where an export's bytes go: a file written atomically, or memory for ``--out -``.

Exporters only produce bytes (``export(args, ctx, out)`` writes to ``out``, an ``ExportStream``); this
module owns the target: a temp file beside it, fsync'd and renamed into place (so a reader sees the old
file or the new one, never a part), or a buffer whose bytes come back as the envelope's
``data.artifact``. A target that is a folder, or whose folder is missing, is refused before anything
is written.
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


class ExportStream(io.BufferedIOBase):
    """The binary stream an exporter writes to: a real ``io.BufferedIOBase``, so ``io.TextIOWrapper``,
    ``csv`` (through a text wrapper), ``gzip.GzipFile`` and ``tarfile`` work on it. It counts and hashes
    what passes through. Closing it (as a text wrapper does when it goes away) flushes and ends the
    exporter's writing; the file itself is finished by the export's owner, atomically."""

    def __init__(self, inner: IO[bytes]) -> None:
        super().__init__()
        self._inner = inner
        self._digest = hashlib.sha256()
        self.size = 0

    @property
    def sha256(self) -> str:
        return self._digest.hexdigest()

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        if self.closed:
            raise ValueError("write to a closed export stream")
        view = memoryview(data).cast("B")
        self._digest.update(view)
        self.size += len(view)
        self._inner.write(view)
        return len(view)

    def flush(self) -> None:
        if not self.closed:
            self._inner.flush()


Produce = Callable[[ExportStream], Mapping[str, Any]]


def check_target(out: str, *, option: str = "--out") -> Path:
    """The file ``out`` names, refused (``INVALID_USAGE``, with a hint) when it is a folder, when its
    folder is missing (nothing creates folders on the way) or when a file stands where a folder must."""
    from episteme_core.errors import EpistemeError

    target = Path(out).expanduser().absolute()
    if target.is_dir():
        raise EpistemeError("INVALID_USAGE", f"{option} {out} is a folder, not a file",
                            details={"path": str(target)},
                            hint=f"name a file in it, for example {option} {Path(out) / 'export.out'}")
    for parent in target.parents:
        if parent.exists():
            if not parent.is_dir():
                raise EpistemeError("INVALID_USAGE", f"{option} {out}: {parent} is a file, not a folder",
                                    details={"path": str(target), "file": str(parent)},
                                    hint="choose a path whose folders exist")
            break
    if not target.parent.is_dir():
        raise EpistemeError("INVALID_USAGE", f"{option} {out}: the folder {target.parent} does not exist",
                            details={"path": str(target), "folder": str(target.parent)},
                            hint=f"create it first (mkdir -p {target.parent}); exports never create folders")
    return target


def export_bytes(produce: Produce, out: str) -> Exported:
    """Run ``produce(stream)`` into ``out``: a path (atomic replace) or ``-`` (kept in memory).

    ``stream`` is an ``ExportStream``; a path is checked first (``check_target``)."""
    from episteme_core.store.atomic import fsync_dir, temp_path_for

    if out == "-":
        buffer = io.BytesIO()
        stream = ExportStream(buffer)
        summary = dict(produce(stream))
        return Exported(summary, stream.size, stream.sha256, None, buffer.getvalue())
    target = check_target(out)
    temp = temp_path_for(target)
    try:
        with open(temp, "xb") as handle:
            stream = ExportStream(handle)
            summary = dict(produce(stream))
            stream.flush()
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, target)
        fsync_dir(target.parent)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
    return Exported(summary, stream.size, stream.sha256, target, None)


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
