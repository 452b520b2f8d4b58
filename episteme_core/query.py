"""``episteme query``: ranked, cited evidence from the shards, verbatim and bounded.

Each result is a snippet cut from one chunk's text (never more than ``max_chars``, never rewritten)
with a citation that resolves to stored bytes: the document's block, the characters of its text
(W3C Web Annotation TextQuoteSelector and TextPositionSelector), and, when the extractor recorded
a verbatim source span, the characters of the decoded source.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from episteme_core.errors import EpistemeError
from episteme_core.index.analyzer import query_terms
from episteme_core.index.shards import Filters, ShardSet, open_shards
from episteme_core.store.home import Home

if TYPE_CHECKING:
    from episteme_core.chunk import Chunk

# The query path reads chunk rows as JSON (no record building, no document model import): a cold
# ``episteme query`` pays only for what it prints.
CONTENT_TRUST = "untrusted-source"

DEFAULT_LIMIT, MAX_LIMIT = 10, 100
DEFAULT_MAX_CHARS, MIN_MAX_CHARS, MAX_MAX_CHARS = 1200, 80, 20_000
MAX_OFFSET = 1_000_000
CONTEXT_CHARS = 32
MAX_TERM_CHARS = 4096


@attrs.frozen
class Citation:
    """Where a quote comes from, precisely enough to find its characters again."""

    url: str | None
    fragment: str | None
    link: str | None  # url#fragment, or record#n
    snapshot_id: str
    source_sha256: str
    document_id: str
    section_id: str
    block_id: str
    page: int | None
    record_id: str | None
    paragraph: int | None
    time: str | None
    position_in: str  # "source": selector offsets index the decoded source; "block": the block's text
    span: dict[str, int] | None  # the quote in the decoded source (verbatim blocks), else the block's span
    span_exact: bool  # True when ``span`` holds exactly the quote
    selector: list[dict[str, Any]]


@attrs.frozen
class Result:
    """One ranked chunk: its score, a bounded verbatim snippet, and the citation of that snippet."""

    rank: int
    score: float
    chunk_id: str
    shard: str
    source: str
    source_kind: str
    title: str
    heading: str
    section_path: list[str]
    family: str
    authority: str
    document_type: str | None
    normativity: str
    snippet: str
    snippet_start: int  # [start, end) of the snippet in the chunk's text
    snippet_end: int
    chunk_chars: int
    part: dict[str, int]
    citation: Citation
    content_trust: str = CONTENT_TRUST
    diagnostics: list[dict[str, str]] = attrs.field(factory=list)  # the document's, passed through
    limits: list[str] = attrs.field(factory=list)  # what the document's extractor cannot see


@attrs.frozen
class QueryResult:
    """A page of results and what it took to get them."""

    query: str
    terms: list[str]
    filters: dict[str, Any]
    total: int
    offset: int
    limit: int
    max_chars: int
    next_offset: int | None
    results: list[Result]
    shards: int
    reason: str | None = None  # why the page is empty, when it is


def check_term(term: str | None) -> str:
    if term is None or not term.strip():
        raise EpistemeError(
            "INVALID_USAGE", "give the words to look for with --term", hint="Run 'episteme query --help'."
        )
    if len(term) > MAX_TERM_CHARS:
        raise EpistemeError(
            "INVALID_USAGE", f"--term is longer than {MAX_TERM_CHARS} characters",
            details={"maxChars": MAX_TERM_CHARS},
        )
    return term


def check_since(value: str | None) -> str | None:
    """``--since`` as given when it is an ISO 8601 date or time (or absent); else ``INVALID_USAGE``."""
    if value is None:
        return None
    from episteme_core.index.build import epoch_seconds

    if epoch_seconds(value) != epoch_seconds(value):  # NaN: not a date
        raise EpistemeError("INVALID_USAGE", f"--since {value!r} is not an ISO 8601 date or time",
                            hint="for example --since 2026-01-31 or --since 2026-01-31T12:00:00Z")
    return value


def snippet_window(text: str, terms: list[str], max_chars: int) -> tuple[int, int]:
    """``[start, end)`` of at most ``max_chars`` characters of ``text``, around the first term found."""
    if len(text) <= max_chars:
        return 0, len(text)
    at = _first_match(text, terms)
    start = max(0, min(at - max_chars // 3, len(text) - max_chars))
    end = min(len(text), start + max_chars)
    if start > 0:  # begin at a word when one starts close by
        space = text.find(" ", start, min(start + 40, end))
        if space >= 0:
            start = space + 1
    if end < len(text):
        space = text.rfind(" ", max(start, end - 40), end)
        if space > start:
            end = space
    return start, end


def _first_match(text: str, terms: list[str]) -> int:
    """Where the first word holding a query term starts (words normalized as the analyzer does)."""
    import re

    from episteme_core.index.analyzer import normalize

    for match in re.finditer(r"\S+", text):
        word = match.group()
        folded = word.lower() if word.isascii() else normalize(word)
        if any(term in folded for term in terms):
            return match.start()
    return 0


def _primary(row: dict[str, Any], start: int, end: int) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = row["blocks"]
    for block in blocks:
        length = block["end"] - block["start"]
        if block["offset"] + length > start and block["offset"] < end:
            return block
    return blocks[0]


def cite(chunk: Chunk, start: int, end: int) -> Citation:
    """The citation of ``chunk.text[start:end]``, narrowed to the one block where it begins."""
    return cite_row(chunk.to_json(), start, end)


def cite_row(row: dict[str, Any], start: int, end: int) -> Citation:
    """``cite`` over a chunk's JSON (what shards store)."""
    block = _primary(row, start, end)
    text: str = row["text"]
    offset, length = block["offset"], block["end"] - block["start"]
    lo = max(start, offset)
    hi = min(end, offset + length)
    exact = text[lo:hi]
    in_block = (block["start"] + lo - offset, block["start"] + hi - offset)
    prefix = text[max(offset, lo - CONTEXT_CHARS) : lo]
    suffix = text[hi : min(offset + length, hi + CONTEXT_CHARS)]
    block_span = block.get("span")
    verbatim = bool(block.get("verbatim")) and block_span is not None
    if verbatim and block_span is not None:
        base = block_span["start"]
        position = {"type": "TextPositionSelector", "start": base + in_block[0], "end": base + in_block[1]}
        span: dict[str, Any] | None = {"start": base + in_block[0], "end": base + in_block[1]}
    else:
        position = {"type": "TextPositionSelector", "start": in_block[0], "end": in_block[1]}
        span = dict(block_span) if block_span else None
    fragment = block.get("anchor") or row.get("fragment")
    url = row.get("url")
    if row.get("recordId") is not None and row.get("paragraph") is not None:
        link: str | None = f"{row['recordId']}#{row['paragraph']}"
    elif url:
        link = f"{url}#{fragment}" if fragment else url
    else:
        link = None
    return Citation(
        url=url,
        fragment=fragment,
        link=link,
        snapshot_id=row["snapshotId"],
        source_sha256=row["sourceSha256"],
        document_id=row["documentId"],
        section_id=row["sectionId"],
        block_id=block["blockId"],
        page=block.get("page"),
        record_id=row.get("recordId"),
        paragraph=row.get("paragraph"),
        time=block.get("time") or row.get("time"),
        position_in="source" if verbatim else "block",
        span=span,
        span_exact=verbatim,
        selector=[
            {"type": "TextQuoteSelector", "exact": exact, "prefix": prefix, "suffix": suffix},
            position,
        ],
    )


def result_for(row: dict[str, Any], *, rank: int, score: float, shard: str, terms: list[str],
               max_chars: int) -> Result:
    """One result from a chunk's JSON (a shard row)."""
    text: str = row["text"]
    start, end = snippet_window(text, terms, max_chars)
    return Result(
        rank=rank,
        score=round(score, 6),
        chunk_id=row["id"],
        shard=shard,
        source=row["source"],
        source_kind=row["sourceKind"],
        title=row["title"],
        heading=row["heading"],
        section_path=list(row["sectionPath"]),
        family=row["family"],
        authority=row["authority"],
        document_type=row.get("documentType"),
        normativity=row["normativity"],
        snippet=text[start:end],
        snippet_start=start,
        snippet_end=end,
        chunk_chars=len(text),
        part={"index": row["part"]["index"], "count": row["part"]["count"]},
        citation=cite_row(row, start, end),
        diagnostics=list(row.get("diagnostics") or ()),
        limits=list(row.get("limits") or ()),
    )


def query(
    home: Home,
    term: str | None,
    *,
    filters: Filters | None = None,
    limit: int = DEFAULT_LIMIT,
    offset: int = 0,
    max_chars: int = DEFAULT_MAX_CHARS,
    shard_set: ShardSet | None = None,
) -> QueryResult:
    """Rank the home's fresh shards for ``term``; a page of cited results sorted (-score, chunk id).

    ``shard_set`` (shards already opened and checked fresh, as the MCP server keeps them) replaces
    opening the home's shards for this one query."""
    text = check_term(term)
    filters = filters or Filters()
    if not 1 <= limit <= MAX_LIMIT or not 0 <= offset <= MAX_OFFSET or not (
        MIN_MAX_CHARS <= max_chars <= MAX_MAX_CHARS
    ):
        raise EpistemeError("INVALID_USAGE", "limit, offset or max-chars out of range")
    if shard_set is None:
        shard_set = open_shards(home)
    terms = query_terms(text)

    def empty(reason: str, total: int = 0) -> QueryResult:
        return QueryResult(
            query=text, terms=terms, filters=filters.to_json(), total=total, offset=offset, limit=limit,
            max_chars=max_chars, next_offset=None, results=[], shards=len(shard_set.shards), reason=reason,
        )

    if not terms:
        return empty("the term has no words to search for (only punctuation or symbols)")
    if filters.source is not None:
        unknown = sorted(set(filters.source) - set(shard_set.sources))
        if len(unknown) == len(set(filters.source)):
            known = ", ".join(shard_set.sources) or "none"
            return empty(f"no shard holds source {', '.join(unknown)} (sources: {known})")
    hits, total = shard_set.search(terms, offset + limit, filters)
    page = hits[offset : offset + limit]
    if not page:
        if total == 0:
            what = " with these filters" if filters.to_json() else ""
            return empty(f"no chunk matches{what}")
        return empty(f"offset {offset} is past the last result (there are {total})", total)
    results = [
        result_for(shard_set.shard(hit.shard).row_json(hit.row), rank=offset + i, score=hit.score,
                   shard=hit.shard, terms=terms, max_chars=max_chars)
        for i, hit in enumerate(page, start=1)
    ]
    end = offset + len(page)
    return QueryResult(
        query=text, terms=terms, filters=filters.to_json(), total=total, offset=offset, limit=limit,
        max_chars=max_chars, next_offset=end if end < total else None, results=results,
        shards=len(shard_set.shards),
    )


def render(result: QueryResult) -> str:
    """Human text: a header, then per result heading and score, the snippet, and the citation."""
    lines = [
        f"{result.total} result(s) for “{result.query}” (offset {result.offset}, limit {result.limit}).",
    ]
    if result.reason:
        lines.append(result.reason)
    for item in result.results:
        where = " › ".join(item.section_path) if item.section_path else item.heading
        lines.append("")
        lines.append(f"{item.rank}. {where or item.title}  [{item.score:.3f}] [{item.content_trust}]")
        snippet = " ".join(item.snippet.split())
        before = "…" if item.snippet_start > 0 else ""
        after = "…" if item.snippet_end < item.chunk_chars else ""
        lines.append(f"   {before}{snippet}{after}")
        cite_ = item.citation
        page = f"; page {cite_.page}" if cite_.page is not None else ""
        lines.append(
            f"   {cite_.link or item.source} "
            f"(snapshot {cite_.snapshot_id[:12]}; chunk {item.chunk_id[:12]}{page})"
        )
    if result.next_offset is not None:
        lines.append("")
        lines.append(f"Next: --offset {result.next_offset}")
    return "\n".join(lines)
