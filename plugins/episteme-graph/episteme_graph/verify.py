"""``graph verify``: each evidence selector resolved against the bytes recorded in the home.

Every result is ``found`` (where the selector says), ``found-elsewhere`` (with the true position),
``not-found``, or ``unverifiable`` (the source is not in the home, or the selector kind cannot be
checked). It never writes anything.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from episteme_graph import model
from episteme_graph.load import DEFAULT_MAX_BYTES, LoadedGraph, load
from episteme_graph.paths import join
from episteme_graph.textviews import JOIN, Views, find_snapshot, views_of

if TYPE_CHECKING:
    from episteme_core.api import Home

STATUSES = ("found", "found-elsewhere", "not-found", "unverifiable")
MAX_OCCURRENCES = 1000
_SNAPSHOT_SOURCE = re.compile(r"^snapshot:([0-9a-f]{64})$")
_SPACE = re.compile(r"\s+")
_CELL = re.compile(r"^([A-Z]+)([1-9][0-9]*)$")


def parse_bindings(values: list[str]) -> dict[str, str]:
    """``SOURCE=SNAPSHOT`` pairs from ``--bind``."""
    from episteme_core.api import EpistemeError

    bound: dict[str, str] = {}
    for value in values:
        source, sep, snapshot = value.partition("=")
        if not sep or not source or not re.fullmatch(r"[0-9a-f]{64}", snapshot):
            raise EpistemeError("INVALID_USAGE", f"--bind {value!r}: give SOURCE_ID=<64-hex snapshot id>")
        bound[source] = snapshot
    return bound


def _occurrences(text: str, needle: str) -> list[int]:
    found: list[int] = []
    if not needle:
        return found
    at = text.find(needle)
    while at >= 0 and len(found) < MAX_OCCURRENCES:
        found.append(at)
        at = text.find(needle, at + 1)
    return found


def _context_ok(text: str, at: int, exact: str, prefix: str, suffix: str) -> bool:
    return text[:at].endswith(prefix) and text[at + len(exact) :].startswith(suffix)


def _result(status: str, **fields: Any) -> dict[str, Any]:
    return {"status": status, **{k: v for k, v in fields.items() if v is not None}}


def check_quote(selector: dict[str, Any], views: Views) -> dict[str, Any]:
    exact = model.text(selector.get("exact"))
    prefix, suffix = model.text(selector.get("prefix")), model.text(selector.get("suffix"))
    start, end = selector.get("start"), selector.get("end")
    page, fragment = selector.get("page"), selector.get("fragment")
    if not exact:
        return _result("not-found", reason="the quote is empty")
    text = views.source_text
    if text is not None:
        occurrences = _occurrences(text, exact)
        if occurrences:
            good = [at for at in occurrences if _context_ok(text, at, exact, prefix, suffix)]
            if isinstance(start, int) and not isinstance(start, bool):
                claimed_ok = start in good and (end is None or end == start + len(exact))
                if claimed_ok:
                    return _result(
                        "found",
                        at={"in": "source", "start": start, "end": start + len(exact)},
                        occurrences=len(occurrences),
                    )
                true = (good or occurrences)[0]
                return _result(
                    "found-elsewhere",
                    at={"in": "source", "start": true, "end": true + len(exact)},
                    claimed={"start": start, "end": end},
                    occurrences=len(occurrences),
                    reason="the quote is not at the position the selector states",
                )
            if good and page is None and fragment is None:
                return _result(
                    "found",
                    at={"in": "source", "start": good[0], "end": good[0] + len(exact)},
                    occurrences=len(occurrences),
                )
            if not good:
                at = occurrences[0]
                return _result(
                    "found-elsewhere",
                    at={"in": "source", "start": at, "end": at + len(exact)},
                    occurrences=len(occurrences),
                    reason="the quote occurs, but not between its prefix and suffix",
                )
    blocks = [b for b in views.blocks if exact in b.text]
    if blocks:
        in_context = [
            b
            for b in blocks
            if any(_context_ok(b.text, at, exact, prefix, suffix) for at in _occurrences(b.text, exact))
        ]
        chosen = (in_context or blocks)[0]
        where = {
            "in": "document",
            "blockId": chosen.id,
            "start": chosen.text.find(exact),
            "end": chosen.text.find(exact) + len(exact),
            "page": chosen.page,
        }
        where = {k: v for k, v in where.items() if v is not None}
        return _verdict(where, in_context or blocks, page, fragment, bool(in_context))
    if JOIN in exact:
        across = _across_blocks(views, exact, prefix, suffix, page, fragment)
        if across is not None:
            return across
    if text is not None and _occurrences(text, exact):
        return _result(
            "found",
            at={"in": "source"},
            reason="page or fragment hints cannot be checked without a committed document of this snapshot",
        )
    squeezed = _SPACE.sub(" ", exact).strip()
    haystacks = ([text] if text is not None else []) + [b.text for b in views.blocks]
    if squeezed and any(squeezed in _SPACE.sub(" ", h) for h in haystacks):
        return _result("found", match="whitespace", reason="found once runs of whitespace are collapsed")
    return _result("not-found", reason="the quote occurs nowhere in the recorded source")


def _across_blocks(
    views: Views, exact: str, prefix: str, suffix: str, page: Any, fragment: Any
) -> dict[str, Any] | None:
    """A quote that runs across blocks, found in the document text with its blocks joined by a blank
    line (as a query passage shows them); None when it is not there."""
    occurrences = _occurrences(views.joined, exact)
    if not occurrences:
        return None
    good = [at for at in occurrences if _context_ok(views.joined, at, exact, prefix, suffix)]
    at = (good or occurrences)[0]
    spanned = views.spanned(at, at + len(exact))
    first, last = views.blocks[spanned[0]], views.blocks[spanned[-1]]
    where = {
        "in": "document",
        "blockId": first.id,
        "start": at - views.starts[spanned[0]],
        "lastBlockId": last.id,
        "end": at + len(exact) - views.starts[spanned[-1]],
        "page": first.page,
    }
    where = {k: v for k, v in where.items() if v is not None}
    touched = [views.blocks[i] for i in spanned]
    return _verdict(where, touched, page, fragment, bool(good), match="across-blocks")


def _verdict(where: dict[str, Any], blocks: list[Any], page: Any, fragment: Any, in_context: bool,
             match: str | None = None) -> dict[str, Any]:
    """A quote found ``where``, in ``blocks``: ``found`` when those blocks are on the stated page and
    inside the stated fragment and the quote stands between its prefix and suffix, else
    ``found-elsewhere`` naming the first hint that fails."""
    if isinstance(page, int) and not any(b.page == page for b in blocks):
        return _result(
            "found-elsewhere",
            at=where,
            claimed={"page": page},
            reason="the quote is not on the page the selector states",
        )
    if isinstance(fragment, str) and fragment.lstrip("#") not in {a for b in blocks for a in b.anchors}:
        return _result(
            "found-elsewhere",
            at=where,
            claimed={"fragment": fragment},
            reason="the quote is not inside the fragment the selector states",
        )
    if not in_context:
        return _result(
            "found-elsewhere", at=where, reason="the quote occurs, but not between its prefix and suffix"
        )
    return _result("found", at=where, match=match)


def check_position(selector: dict[str, Any], excerpt: str | None, views: Views) -> dict[str, Any]:
    start, end = selector.get("start"), selector.get("end")
    text = views.source_text
    if text is None:
        return _result("unverifiable", reason="the snapshot has no source text (binary content)")
    if not (isinstance(start, int) and isinstance(end, int)) or not 0 <= start <= end:
        return _result("not-found", reason="the range is malformed")
    if end > len(text):
        return _result("not-found", reason=f"the range ends past the source text ({len(text)} characters)")
    if excerpt is None:
        return _result("found", at={"in": "source", "start": start, "end": end}, match="range")
    if text[start:end] == excerpt:
        return _result("found", at={"in": "source", "start": start, "end": end})
    occurrences = _occurrences(text, excerpt)
    if occurrences:
        return _result(
            "found-elsewhere",
            at={"in": "source", "start": occurrences[0], "end": occurrences[0] + len(excerpt)},
            claimed={"start": start, "end": end},
            reason="the excerpt is at another position",
        )
    return _result("not-found", reason="the excerpt occurs nowhere in the source text")


def check_page(selector: dict[str, Any], excerpt: str | None, views: Views) -> dict[str, Any]:
    page = selector.get("page")
    if views.page_count is None:
        return _result("unverifiable", reason="no committed document with pages for this snapshot")
    if not isinstance(page, int) or not 1 <= page <= views.page_count:
        return _result("not-found", reason=f"no page {page} (the document has {views.page_count})")
    if excerpt is None:
        return _result("found", at={"in": "document", "page": page}, match="page")
    pages = sorted({b.page for b in views.blocks if b.page is not None and excerpt in b.text})
    if page in pages:
        return _result("found", at={"in": "document", "page": page})
    if pages:
        return _result(
            "found-elsewhere",
            at={"in": "document", "page": pages[0]},
            claimed={"page": page},
            reason="the excerpt is on another page",
        )
    return _result("not-found", reason="the excerpt occurs on no page")


def check_fragment(selector: dict[str, Any], excerpt: str | None, views: Views) -> dict[str, Any]:
    fragment = model.text(selector.get("fragment")).lstrip("#")
    exists = fragment in views.anchors
    if excerpt is None:
        return _result(
            "found" if exists else "not-found",
            at={"in": "document", "fragment": fragment},
            reason=None if exists else "no element or block has this id",
        )
    inside = [b for b in views.blocks if fragment in b.anchors and excerpt in b.text]
    if inside:
        return _result("found", at={"in": "document", "fragment": fragment, "blockId": inside[0].id})
    elsewhere = [b for b in views.blocks if excerpt in b.text]
    if elsewhere:
        return _result(
            "found-elsewhere",
            at={"in": "document", "blockId": elsewhere[0].id},
            claimed={"fragment": fragment},
            reason="the excerpt is outside the fragment",
        )
    if exists and views.source_text is not None and excerpt in views.source_text:
        return _result(
            "found",
            at={"in": "source", "fragment": fragment},
            reason="the fragment exists and the excerpt is in the source",
        )
    return _result(
        "not-found",
        reason="the excerpt occurs nowhere"
        if exists
        else "neither the fragment nor the excerpt is in the recorded source",
    )


def _column(letters: str) -> int:
    value = 0
    for char in letters:
        value = value * 26 + ord(char) - 64
    return value - 1


def check_csv(selector: dict[str, Any], excerpt: str | None, views: Views) -> dict[str, Any]:
    if views.source_text is None or selector.get("sheet") != "data":
        return _result("unverifiable", reason="only the single sheet 'data' of a CSV source can be checked")
    cells = model.text(selector.get("cell_range")).split(":")
    parsed = [_CELL.match(c) for c in cells]
    if not 1 <= len(cells) <= 2 or not all(parsed):
        return _result("not-found", reason="the cell range is malformed")
    coords = [(_column(m.group(1)), int(m.group(2)) - 1) for m in parsed if m]
    (c1, r1), (c2, r2) = coords[0], coords[-1]
    try:
        rows = list(csv.reader(io.StringIO(views.source_text, newline=""), strict=True))
    except csv.Error as exc:
        return _result("unverifiable", reason=f"the source is not CSV ({exc})")
    if r2 >= len(rows) or r1 > r2 or c1 > c2:
        return _result("not-found", reason="the cell range lies outside the table")
    value = "\n".join("\t".join(rows[r][c1 : c2 + 1]) for r in range(r1, r2 + 1))
    if excerpt is None or value == excerpt:
        return _result("found", at={"in": "source", "cellRange": selector["cell_range"]})
    return _result("not-found", reason="the cells hold other text than the excerpt")


def check_pointer(selector: dict[str, Any], excerpt: str | None, views: Views) -> dict[str, Any]:
    if views.source_text is None:
        return _result("unverifiable", reason="the snapshot has no source text")
    try:
        value: Any = json.loads(views.source_text)
    except ValueError:
        return _result("unverifiable", reason="the source is not JSON")
    pointer = model.text(selector.get("json_pointer"))
    if pointer and not pointer.startswith("/"):
        return _result("not-found", reason="a JSON pointer starts with /")
    for token in pointer.split("/")[1:] if pointer else []:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict) and token in value:
            value = value[token]
        elif isinstance(value, list) and token.isdigit() and int(token) < len(value):
            value = value[int(token)]
        else:
            return _result("not-found", reason=f"the pointer {pointer!r} names nothing")
    shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    if excerpt is None or shown == excerpt:
        return _result("found", at={"in": "source", "jsonPointer": pointer})
    return _result("not-found", reason="the value differs from the excerpt")


def check_selector(selector: dict[str, Any], excerpt: str | None, views: Views) -> dict[str, Any]:
    kind = selector.get("type")
    if kind == "TextQuoteSelector":
        return check_quote(selector, views)
    if kind == "TextPositionSelector":
        return check_position(selector, excerpt, views)
    if kind == "PageSelector":
        return check_page(selector, excerpt, views)
    if kind == "FragmentSelector":
        return check_fragment(selector, excerpt, views)
    if kind == "CsvSelector":
        return check_csv(selector, excerpt, views)
    if kind == "JsonPointerSelector":
        return check_pointer(selector, excerpt, views)
    return _result("unverifiable", reason=f"{kind} selectors cannot be checked against stored bytes")


def _targets(graph: Any) -> list[tuple[str, str | None, str, dict[str, Any], str | None]]:
    """(JSON path, evidence id, source id, selector, excerpt) of every selector in the graph."""
    found = []
    value = graph.get("evidence") if isinstance(graph, dict) else None
    for i, evidence in enumerate(value if isinstance(value, list) else []):
        if isinstance(evidence, dict) and isinstance(evidence.get("selector"), dict):
            excerpt = evidence.get("excerpt") if isinstance(evidence.get("excerpt"), str) else None
            found.append(
                (
                    join(["evidence", i, "selector"]),
                    model.text(evidence.get("id")) or None,
                    model.text(evidence.get("source")),
                    evidence["selector"],
                    excerpt,
                )
            )
    nodes = graph.get("nodes") if isinstance(graph, dict) else None
    for i, node in enumerate(nodes if isinstance(nodes, list) else []):
        citations = node.get("citations") if isinstance(node, dict) else None
        for j, citation in enumerate(citations if isinstance(citations, list) else []):
            if isinstance(citation, dict) and isinstance(citation.get("selector"), dict):
                found.append(
                    (
                        join(["nodes", i, "citations", j, "selector"]),
                        None,
                        model.text(citation.get("source")),
                        citation["selector"],
                        None,
                    )
                )
    return found


def verify_loaded(graph: LoadedGraph, home: Home, bind: dict[str, str] | None = None) -> dict[str, Any]:
    """Check every selector of ``graph`` against ``home``; the report as a dict."""
    from episteme_core.api import read_catalog

    catalog = read_catalog(home)
    bind = bind or {}
    sources = model.by_id(model.sources(graph.value))
    cache: dict[str, Views] = {}
    results = []
    for path, evidence_id, source_id, selector, excerpt in _targets(graph.value):
        entry = sources.get(source_id, {})
        snapshot_id, how = None, None
        if source_id in bind:
            snapshot_id, how = find_snapshot(catalog, snapshot_id=bind[source_id]), "bind"
        elif _SNAPSHOT_SOURCE.match(source_id):
            snapshot_id, how = find_snapshot(catalog, snapshot_id=source_id.split(":", 1)[1]), "snapshot id"
        elif isinstance(entry.get("content_sha256"), str):
            sha = entry["content_sha256"].lower().removeprefix("sha256:")
            snapshot_id, how = (
                find_snapshot(catalog, sha256=sha, url=model.text(entry.get("url")) or None),
                "content sha256",
            )
        base = {
            "path": path,
            "evidence": evidence_id,
            "source": source_id,
            "selectorType": selector.get("type"),
        }
        if snapshot_id is None:
            results.append(
                {
                    **base,
                    **_result(
                        "unverifiable",
                        reason="the home holds no recorded bytes for "
                        "this source" + (f" (looked up by {how})" if how else ""),
                    ),
                }
            )
            continue
        if snapshot_id not in cache:
            cache[snapshot_id] = views_of(home, catalog, snapshot_id)
        outcome = check_selector(selector, excerpt, cache[snapshot_id])
        results.append({**base, "snapshotId": snapshot_id, "matchedBy": how, **outcome})
    counts = {status: sum(r["status"] == status for r in results) for status in STATUSES}
    return {
        "file": graph.name,
        "home": str(home.root),
        "selectors": len(results),
        "counts": counts,
        "results": results,
        "semanticSupportEvaluated": False,
        "statement": "a found selector proves the source holds the quoted text, not that it supports "
        "the claim",
    }


def verify(
    graph: str | Path | bytes,
    home: Home,
    bind: dict[str, str] | None = None,
    *,
    name: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> dict[str, Any]:
    """Verify a graph (a path, ``-``, or its bytes) against ``home`` and return the report."""
    return verify_loaded(load(graph, name=name, max_bytes=max_bytes), home, bind)


def render_text(report: dict[str, Any], limit: int | None = None) -> str:
    lines = [report["file"]]
    shown = report["results"] if limit is None else report["results"][:limit]
    for result in shown:
        where = result.get("at", {})
        place = ", ".join(f"{k} {v}" for k, v in where.items()) if where else ""
        reason = f" — {result['reason']}" if result.get("reason") else ""
        lines.append(
            f"  {result['status']}: {result['path']} ({result.get('selectorType')})"
            f"{' at ' + place if place else ''}{reason}"
        )
    if limit is not None and len(report["results"]) > limit:
        lines.append(f"  … {len(report['results']) - limit} more (see --json)")
    counts = report["counts"]
    lines.append(
        f"{report['selectors']} selector(s): {counts['found']} found, {counts['found-elsewhere']} "
        f"found elsewhere, {counts['not-found']} not found, {counts['unverifiable']} unverifiable"
    )
    lines.append(f"note: {report['statement']}")
    return "\n".join(lines)
