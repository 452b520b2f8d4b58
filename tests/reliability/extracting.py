"""Run one extractor on bytes in this process (no home): the document, validated."""

from __future__ import annotations

from typing import Any

from episteme_core.extract.family import Family
from episteme_core.records.canonical import sha256_hex
from episteme_core.records.evidence import Document
from episteme_core.records.extraction import ExtractRequest
from episteme_core.records.storage import SnapshotRecord
from episteme_core.testing import validate


def request(data: bytes, content_type: str, **options: Any) -> ExtractRequest:
    record = SnapshotRecord(id="0" * 64, capture_kind="file", source="https://example.org/x",
                            final_url=None, content_type=content_type, charset=None,
                            byte_length=len(data), content_sha256=sha256_hex(data),
                            observed_at="2020-01-01T00:00:00Z")
    return ExtractRequest(record=record, content=data, family=Family(), options=dict(options))


def extract(extractor: Any, data: bytes, content_type: str, *, check: bool = True, **options: Any,
            ) -> Document:
    """The document ``extractor`` makes of ``data``; validated against the schema unless not ``check``
    (a schema check of 100,000 blocks takes a minute)."""
    document: Document = extractor.extract(request(data, content_type, **options))
    if check:
        validate(document.to_json(), "document")
    return document


def codes(document: Document) -> list[str]:
    return [d.code for d in document.diagnostics]
