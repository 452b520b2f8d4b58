"""Citations as MCP resources: what ``query`` and ``ask`` cite, opened by URI and read verbatim.

Two URI forms, offered as resource templates:

- ``episteme://record/ID`` and ``episteme://record/ID#N``: a personal record, or its Nth paragraph
  (``ID#N`` is a result's ``citation.link``), as ``episteme show ID#N`` prints it;
- ``episteme://doc/URL#BLOCK``: one block of a committed document: ``URL`` is the document's source
  URL percent-encoded (``citation.url``, every reserved character escaped), ``BLOCK`` its block id
  (``citation.blockId``).

A read gives one JSON object: the verbatim text, its citation (snapshot, document, section and block
ids, page and box, span) and ``contentTrust``. It reads committed stages only and writes nothing.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, unquote

import attrs

from episteme_core.errors import EpistemeError
from episteme_core.records.trust import CONTENT_TRUST
from episteme_core.store.home import Home

RECORD_PREFIX = "episteme://record/"
DOC_PREFIX = "episteme://doc/"
MAX_URI_CHARS = 8192
MAX_RESOURCE_BYTES = 4 * 1024 * 1024  # a whole book's record is larger: read it a paragraph at a time

TEMPLATES = (
    {"uri_template": RECORD_PREFIX + "{id}", "name": "record",
     "description": "A personal record (book, chat, commit, ...) or, with #N, its Nth paragraph, verbatim "
                    "with its citation: the citation.link of an ask or query result."},
    {"uri_template": DOC_PREFIX + "{url}#{block}", "name": "document block",
     "description": "One block of a captured document, verbatim with its citation: url is citation.url "
                    "percent-encoded, block is citation.blockId."},
)


def doc_uri(url: str, block_id: str) -> str:
    """The resource URI of a document block."""
    return f"{DOC_PREFIX}{quote(url, safe='')}#{block_id}"


def read_citation(home: Home, uri: str) -> dict[str, Any]:
    """The resource ``uri`` names, as JSON data; ``INVALID_INPUT`` when it names nothing stored."""
    if len(uri) > MAX_URI_CHARS:
        raise EpistemeError("INVALID_INPUT", f"a resource URI of at most {MAX_URI_CHARS} characters",
                            details={"length": len(uri)})
    if uri.startswith(RECORD_PREFIX):
        from episteme_core.personal.library import show

        reference = unquote(uri[len(RECORD_PREFIX):])
        if not reference:
            raise EpistemeError("INVALID_INPUT", "name a record: episteme://record/ID or ID#N")
        return show(home, reference)
    if uri.startswith(DOC_PREFIX):
        encoded, hashed, block_id = uri[len(DOC_PREFIX):].partition("#")
        if not hashed or not encoded or not block_id:
            raise EpistemeError("INVALID_INPUT",
                                "name a block: episteme://doc/URL#BLOCK (URL percent-encoded)",
                                details={"uri": uri[:200]})
        return _block(home, unquote(encoded), block_id)
    raise EpistemeError("INVALID_INPUT", "episteme resources are episteme://record/ID[#N] and "
                        "episteme://doc/URL#BLOCK", details={"uri": uri[:200]})


def _block(home: Home, url: str, block_id: str) -> dict[str, Any]:
    from episteme_core.stages.documents import read_documents

    documents = [d for d in read_documents(home, [url]) if d.source == url]
    if not documents:
        raise EpistemeError("INVALID_INPUT", f"no committed document of {url[:200]!r}",
                            details={"url": url[:200]},
                            hint="episteme sources lists what the store holds")
    document = documents[0]
    for section in document.sections:
        for block in section.blocks:
            if block.id == block_id:
                anchor = block.anchor or section.anchor
                citation = {
                    "url": document.url or document.source, "fragment": anchor,
                    "link": f"{document.url or document.source}#{anchor}" if anchor else document.url,
                    "snapshotId": document.snapshot_id, "sourceSha256": document.source_sha256,
                    "documentId": document.id, "sectionId": section.id, "blockId": block.id,
                    "sectionPath": list(section.path), "page": block.page,
                    "bbox": attrs.asdict(block.bbox) if block.bbox is not None else None,
                    "span": {"start": block.span.start, "end": block.span.end} if block.span else None,
                }
                return {"id": doc_uri(url, block_id), "text": block.text, "kind": block.kind,
                        "normativity": block.normativity, "title": document.title,
                        "heading": section.heading, "citation": citation, "contentTrust": CONTENT_TRUST}
    raise EpistemeError("INVALID_INPUT", f"document {url[:200]!r} has no block {block_id[:100]!r}",
                        details={"url": url[:200], "blockId": block_id[:100]})
