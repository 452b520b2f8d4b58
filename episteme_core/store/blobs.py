"""Content-addressed bytes: stored once under their sha256, verified on every read."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from episteme_core.errors import EpistemeError
from episteme_core.records.canonical import sha256_hex
from episteme_core.store.atomic import atomic_write


def check_sha256(value: str) -> str:
    if len(value) != 64 or any(c not in "0123456789abcdef" for c in value):
        raise EpistemeError(
            "INVALID_INPUT", f"not a sha256 hex digest: {value!r}", details={"sha256": value}
        )
    return value


class BlobStore:
    """``root/ab/abcdef…``: one file per distinct content."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path_for(self, sha256: str) -> Path:
        check_sha256(sha256)
        return self.root / sha256[:2] / sha256

    def put(self, data: bytes) -> str:
        """Store ``data`` (once) and return its sha256."""
        digest = sha256_hex(data)
        path = self.path_for(digest)
        if not path.exists():
            atomic_write(path, data, kind="blob-write")
        return digest

    def has(self, sha256: str) -> bool:
        return self.path_for(sha256).is_file()

    def get(self, sha256: str) -> bytes:
        """The bytes named ``sha256``; a missing or tampered blob is ``INVALID_INPUT`` naming it."""
        path = self.path_for(sha256)
        try:
            data = path.read_bytes()
        except FileNotFoundError as exc:
            raise EpistemeError(
                "INVALID_INPUT", f"{path}: blob is missing", details={"path": str(path)}
            ) from exc
        if sha256_hex(data) != sha256:
            raise EpistemeError(
                "INVALID_INPUT",
                f"{path}: blob does not match its sha256 (tampered or corrupt)",
                details={"path": str(path)},
            )
        return data

    def iter_paths(self) -> Iterator[Path]:
        if not self.root.exists():
            return
        for path in sorted(self.root.glob("*/*")):
            if path.is_file():
                yield path
