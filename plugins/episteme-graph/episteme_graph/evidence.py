"""``graph evidence``: query and ask results turned into evidence records and the sources they need.

A query citation already carries a W3C TextQuote selector (and a TextPosition one) for the block where
its snippet begins; the record quotes the whole snippet from there, across blocks and paragraphs
when it runs on (``graph verify`` finds such a quote in the document's blocks joined by blank
lines). An ask paragraph is quoted whole. Ids hash the snapshot and the selector, so the same
citation always gives the same record. episteme does not judge support: every record says
``mentions`` unless told otherwise.
"""

from __future__ import annotations

import hashlib
from typing import Any

from episteme_graph import urls

TYPES = {"html": "html", "pdf": "pdf", "text": "txt", "xml": "xml", "record": "record"}


def _fail(message: str) -> Exception:
    from episteme_core.api import EpistemeError

    return EpistemeError(
        "INVALID_INPUT",
        message,
        hint="pipe 'episteme query --json' or 'episteme ask --json' into 'episteme graph evidence'",
    )


def _data(value: Any, name: str) -> tuple[str, dict[str, Any]]:
    """(kind, data) of an envelope or of its data: ``query`` has results, ``ask`` paragraphs."""
    if isinstance(value, dict) and "schemaVersion" in value and "data" in value:
        if not value.get("ok"):
            raise _fail(f"{name}: the envelope reports a failure, not results")
        value = value["data"]
    if isinstance(value, dict) and isinstance(value.get("results"), list):
        return "query", value
    if isinstance(value, dict) and isinstance(value.get("paragraphs"), list):
        return "ask", value
    raise _fail(f"{name}: neither query results nor ask paragraphs")


def _source_entry(
    snapshot_id: str, file: str, kind: str, url: str | None, title: str | None, sha256: str | None
) -> dict[str, Any]:
    entry: dict[str, Any] = {"id": f"snapshot:{snapshot_id}", "file": file or snapshot_id, "type": kind}
    if url and urls.problem(url) is None:
        entry["url"] = url
    if title:
        entry["title"] = title
    if sha256:
        entry["content_sha256"] = sha256
    return entry


def _record(snapshot_id: str, selector: dict[str, Any], excerpt: str, support: str) -> dict[str, Any]:
    from episteme_core.api import canonical_text

    digest = hashlib.sha256(
        canonical_text({"snapshot": snapshot_id, "selector": selector}).encode()
    ).hexdigest()
    return {
        "id": f"ev-{digest[:16]}",
        "source": f"snapshot:{snapshot_id}",
        "selector": selector,
        "support": support,
        "attribution_basis": "source_explicit",
        "excerpt": excerpt,
        "excerpt_sha256": hashlib.sha256(excerpt.encode("utf-8")).hexdigest(),
        "review_status": "unreviewed",
    }


def shown_quote(result: dict[str, Any], first: str) -> str:
    """What a query result shows, from where its citation's quote begins. The citation quotes the
    part of the snippet in the block where it begins (``first``); a snippet that runs on into later
    blocks or paragraphs (joined by a blank line in the passage) is quoted to its end, trailing
    whitespace dropped, but never across a gap: when the result's ``paragraphs`` (a run) skip a
    paragraph of the record (one left out by a filter), the quote stops where the gap begins.
    ``first`` alone when the snippet is missing or does not hold it."""
    snippet, offset = result.get("snippet"), result.get("snippetStart")
    if not isinstance(snippet, str):
        return first
    at = snippet.find(first)
    if at < 0:
        return first
    end = len(snippet)
    if isinstance(offset, int) and not isinstance(offset, bool):
        end = min(end, _gap(result.get("paragraphs"), offset + at, offset + end) - offset)
    shown = snippet[at:end].rstrip()
    return shown if len(shown) > len(first) else first


def _gap(paragraphs: Any, start: int, end: int) -> int:
    """Where ``[start, end)`` of a passage first crosses from one paragraph into one that does not
    follow it in the record (``record#n`` then not ``record#n+1``); ``end`` when it never does."""
    if not isinstance(paragraphs, list):
        return end
    touched: list[tuple[int, int, Any]] = sorted(
        (
            (p["start"], p["end"], p.get("ref"))
            for p in paragraphs
            if isinstance(p, dict)
            and isinstance(p.get("start"), int)
            and isinstance(p.get("end"), int)
            and p["start"] < end
            and start < p["end"]
        ),
        key=lambda t: (t[0], t[1]),
    )
    for (_, before_end, before), (_, _, after) in zip(touched, touched[1:], strict=False):
        if not _follows(before, after):
            return before_end
    return end


def _follows(before: Any, after: Any) -> bool:
    """``after`` is the paragraph right after ``before`` (``r#3`` after ``r#2``), or both are chunks of
    the same source (a run of a document's chunks names its source)."""
    if not isinstance(before, str) or not isinstance(after, str):
        return False
    record, _, number = before.rpartition("#")
    next_record, _, next_number = after.rpartition("#")
    if record and next_record and number.isdigit() and next_number.isdigit():
        return record == next_record and int(next_number) == int(number) + 1
    return before == after


def _is_sha(value: Any) -> bool:
    return isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)


def evidence_from(value: Any, *, name: str = "input", support: str = "mentions") -> dict[str, Any]:
    """Evidence records and source entries for every result of a query or ask output."""
    kind, data = _data(value, name)
    sources: dict[str, dict[str, Any]] = {}
    records: dict[str, dict[str, Any]] = {}
    skipped = 0
    if kind == "query":
        for result in data["results"]:
            citation: Any = result.get("citation") if isinstance(result, dict) else None
            if not isinstance(citation, dict):
                skipped += 1
                continue
            selectors = citation.get("selector")
            if not isinstance(selectors, list) or not _is_sha(citation.get("snapshotId")):
                skipped += 1
                continue
            quote = next(
                (
                    s
                    for s in selectors
                    if isinstance(s, dict)
                    and s.get("type") == "TextQuoteSelector"
                    and isinstance(s.get("exact"), str)
                    and s["exact"]
                ),
                None,
            )
            if quote is None:
                skipped += 1
                continue
            exact = shown_quote(result, quote["exact"])
            selector: dict[str, Any] = {"type": "TextQuoteSelector", "exact": exact}
            for key in ("prefix", "suffix") if exact == quote["exact"] else ("prefix",):
                if isinstance(quote.get(key), str) and quote[key]:
                    selector[key] = quote[key]
            position = next(
                (s for s in selectors if isinstance(s, dict) and s.get("type") == "TextPositionSelector"),
                None,
            )
            if citation.get("positionIn") == "source" and position is not None and exact == quote["exact"]:
                selector["start"], selector["end"] = position.get("start"), position.get("end")
            if isinstance(citation.get("page"), int):
                selector["page"] = citation["page"]
            if isinstance(citation.get("fragment"), str) and citation["fragment"]:
                selector["fragment"] = citation["fragment"]
            snapshot_id = citation["snapshotId"]
            doc_type = result.get("documentType") or result.get("sourceKind") or "unknown"
            sources.setdefault(
                snapshot_id,
                _source_entry(
                    snapshot_id,
                    citation.get("url") or citation.get("recordId") or result.get("source") or "",
                    TYPES.get(doc_type, str(doc_type)),
                    citation.get("url"),
                    result.get("title"),
                    citation.get("sourceSha256") if _is_sha(citation.get("sourceSha256")) else None,
                ),
            )
            record = _record(snapshot_id, selector, exact, support)
            records.setdefault(record["id"], record)
    else:
        for paragraph in data["paragraphs"]:
            citation = paragraph.get("citation") if isinstance(paragraph, dict) else None
            text = paragraph.get("text") if isinstance(paragraph, dict) else None
            if not isinstance(citation, dict) or not _is_sha(citation.get("snapshotId")) or not text:
                skipped += 1
                continue
            snapshot_id = citation["snapshotId"]
            sources.setdefault(
                snapshot_id,
                _source_entry(
                    snapshot_id,
                    citation.get("recordId") or paragraph.get("recordId") or "",
                    "record",
                    citation.get("url"),
                    None,
                    None,
                ),
            )
            record = _record(snapshot_id, {"type": "TextQuoteSelector", "exact": text}, text, support)
            records.setdefault(record["id"], record)
    return {
        "from": kind,
        "sources": [sources[k] for k in sorted(sources)],
        "evidence": sorted(records.values(), key=lambda r: r["id"]),
        "skipped": skipped,
        "contentTrust": "untrusted-source",
    }


def render_text(data: dict[str, Any]) -> str:
    from episteme_core.api import canonical_text

    lines = [
        f"# {len(data['evidence'])} evidence record(s) from {data['from']}, {len(data['sources'])} "
        "source(s); paste into the graph's evidence[] and metadata.sources[]"
    ]
    lines.append(canonical_text({"evidence": data["evidence"], "sources": data["sources"]}))
    return "\n".join(lines)
