"""``episteme query``: ranked, cited evidence from the shards, verbatim and bounded.

Each result is a scored passage (a chunk, or a run of a record's consecutive paragraphs joined by a
blank line) and a snippet cut from it (never more than ``max_chars``, never rewritten): the window
that best matches the query. Its citation resolves to stored bytes: the document's block, the
characters of its text (W3C Web Annotation TextQuoteSelector and TextPositionSelector), and, when
the extractor recorded a verbatim source span, the characters of the decoded source. A run also
lists its paragraphs, each with its own ``record#n``.

Words are matched stemmed; a quoted phrase (``"must not"``) must appear as written, its words in
order, and ``exact`` asks every word to appear as written (both checked on the passage's text).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from episteme_core.errors import EpistemeError
from episteme_core.records.hits import Filters, Hit
from episteme_core.records.trust import CONTENT_TRUST
from episteme_core.search.proximity import RERANK_DEPTH
from episteme_core.search.shardset import ShardSet
from episteme_core.store.home import Home
from episteme_core.text.analyzer import query_term_weights, words

if TYPE_CHECKING:
    from episteme_core.kernel.contracts import SearchableShards
    from episteme_core.kernel.registry import Plugins
    from episteme_core.records.evidence import Chunk
    from episteme_core.search.passages import PassageRows


DEFAULT_LIMIT, MAX_LIMIT = 10, 100
DEFAULT_MAX_CHARS, MIN_MAX_CHARS, MAX_MAX_CHARS = 1200, 80, 20_000
# The deepest page: ranking a page at offset N builds the best 2N units of every shard, so a page past
# this would pass a command's memory bound on a large home (offset 100,000 of 200,000 documents: 478 MB).
MAX_OFFSET = 10_000
RESULT_WINDOW = "RESULT_WINDOW"
CONTEXT_CHARS = 32
MAX_TERM_CHARS = 4096
# Quoted phrases and --exact are checked on the text of candidates in score order, at most this many.
MAX_CHECKED = 5_000
RERANK_POOL = 20  # a second stage reorders the first max(limit, this) results


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
    bbox: dict[str, float] | None  # PDF: the block's box on its page (points, origin top-left)
    record_id: str | None
    paragraph: int | None
    time: str | None
    position_in: str  # "source": selector offsets index the decoded source; "block": the block's text
    span: dict[str, int] | None  # the quote in the decoded source (verbatim blocks), else the block's span
    span_exact: bool  # True when ``span`` holds exactly the quote
    selector: list[dict[str, Any]]


@attrs.frozen
class AlsoAt:
    """Another place holding the very text of a result (a copy of a document under another URL, a
    section unchanged in another version): folded into the result, not shown as a result of its own."""

    source: str
    chunk_id: str
    link: str | None  # where the snippet's first character is there: url#fragment, or record#n
    snapshot_id: str


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
    paragraphs: list[PassageParagraph] | None = None  # a run: its paragraphs, where they sit in it
    rerank_score: float | None = None  # the second stage's score (``--rerank``), which ordered the page
    content_trust: str = CONTENT_TRUST
    diagnostics: list[dict[str, str]] = attrs.field(factory=list)  # the document's, passed through
    limits: list[str] = attrs.field(factory=list)  # what the document's extractor cannot see
    also: list[AlsoAt] = attrs.field(factory=list)  # the other places holding this very text


@attrs.frozen
class PassageParagraph:
    """One paragraph of a run: its reference, chunk, time, and ``[start, end)`` in the run's text."""

    ref: str
    chunk_id: str
    start: int
    end: int
    time: str | None


@attrs.frozen
class Passage:
    """What a hit scores and shows: one chunk's text, or a run of paragraphs joined by a blank line."""

    text: str
    rows: list[dict[str, Any]]  # chunk JSON objects, in reading order
    offsets: list[int]  # where each row's text begins in ``text``
    focus: tuple[int, int] | None = None  # where runs were joined: the span of the one that ranked best
    copies: tuple[list[dict[str, Any]], ...] = ()  # the rows of passages of this very text (folded)

    def row_at(self, position: int) -> int:
        """The index of the row whose text holds (or, between rows, follows) ``position``."""
        for index in range(len(self.offsets) - 1, -1, -1):
            if self.offsets[index] <= position:
                past = position >= self.offsets[index] + len(self.rows[index]["text"])
                if past and index + 1 < len(self.rows):
                    return index + 1
                return index
        return 0


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
    phrases: list[str] = attrs.field(factory=list)  # quoted phrases, as parsed
    exact: bool = False
    total_exact: bool = True  # False: phrases/--exact were checked on MAX_CHECKED candidates only
    rerank: str | None = None  # the second stage that ordered the results (``--rerank NAME``)


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
    from episteme_core.records.hits import epoch_seconds

    if epoch_seconds(value) != epoch_seconds(value):  # NaN: not a date
        raise EpistemeError("INVALID_USAGE", f"--since {value!r} is not an ISO 8601 date or time",
                            hint="for example --since 2026-01-31 or --since 2026-01-31T12:00:00Z")
    return value


def _kernel_analysis(shard_set: Any) -> bool:
    """True when ``shard_set`` analyses a query as the kernel's ``ShardSet`` does: it is one, or it
    fans one out (``FannedShards``, whose class delegates every attribute to the set it wraps)."""
    target = getattr(shard_set, "fanned_from", shard_set)
    return getattr(type(target), "terms", None) is ShardSet.terms


def parse_term(text: str) -> tuple[str, list[str]]:
    """The words to score and the quoted phrases of a ``--term`` (an unmatched quote quotes the rest)."""
    import re

    phrases = [p.strip() for p in re.findall(r'"([^"]*)"?', text) if p.strip()]
    return text.replace('"', " "), phrases


def snippet_window(text: str, terms: list[str] | dict[str, float], max_chars: int,
                   languages: list[str] | None = None,
                   focus: tuple[int, int] | None = None) -> tuple[int, int]:
    """``[start, end)`` of at most ``max_chars`` characters of ``text``: the window that best matches
    the query terms (a list weighs them equally; a dict gives each its IDF), kept on ``focus`` (the
    span of the run that ranked best) where runs were joined."""
    from episteme_core.search.snippets import best_window

    weights = terms if isinstance(terms, dict) else dict.fromkeys(terms, 1.0)
    return best_window(text, weights, max_chars, languages or ["english"], focus)


def _holds(text: str, exact_words: set[str], phrases: list[list[str]]) -> bool:
    """True when ``text`` has every word of ``exact_words`` and every phrase as written (normalized,
    unstemmed; a phrase's words consecutive)."""
    if not exact_words and not phrases:
        return True
    found = words(text)
    if not exact_words <= set(found):
        return False
    for phrase in phrases:
        n = len(phrase)
        if not any(found[i : i + n] == phrase for i in range(len(found) - n + 1) if found[i] == phrase[0]):
            return False
    return True


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
        bbox=block.get("bbox"),
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


def result_for(passage: Passage | dict[str, Any], *, rank: int, score: float, shard: str,
               terms: list[str] | dict[str, float], max_chars: int,
               languages: list[str] | None = None, rerank_score: float | None = None) -> Result:
    """One result: the snippet of a passage (or of one chunk's JSON) and the citation of the chunk
    where the snippet begins; ``rerank_score``, the second stage's score where one ordered it."""
    if isinstance(passage, dict):
        passage = Passage(passage["text"], [passage], [0])
    text = passage.text
    if len(text) <= max_chars:  # the whole text (what ``snippets.best_window`` gives)
        start, end = 0, len(text)
    else:
        start, end = snippet_window(text, terms, max_chars, languages, passage.focus)
    index = passage.row_at(start) if len(passage.rows) > 1 else 0
    row, offset = passage.rows[index], passage.offsets[index]
    own = len(row["text"])
    local_start = min(max(start - offset, 0), own)
    local_end = max(min(end - offset, own), local_start)
    if local_end == local_start and own:  # a snippet of separators only: cite the chunk's first character
        local_start, local_end = min(local_start, own - 1), min(local_start, own - 1) + 1
    paragraphs = None
    if len(passage.rows) > 1:
        paragraphs = [
            PassageParagraph(
                ref=f"{r['recordId']}#{r['paragraph']}" if r.get("recordId") is not None else r["source"],
                chunk_id=r["id"], start=o, end=o + len(r["text"]), time=r.get("time"),
            )
            for r, o in zip(passage.rows, passage.offsets, strict=True)
        ]
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
        citation=cite_row(row, local_start, local_end),
        paragraphs=paragraphs,
        rerank_score=rerank_score,
        diagnostics=list(row.get("diagnostics") or ()),
        limits=list(row.get("limits") or ()),
        also=[_also_at(copy, index, len(row["text"]), local_start, local_end)
              for copy in passage.copies] if passage.copies else [],
    )


def _also_at(rows: list[dict[str, Any]], index: int, own: int, start: int, end: int) -> AlsoAt:
    """Where a copy of a result's passage (its ``rows``) holds the snippet's first characters: its row
    ``index`` at ``[start, end)`` when the copy's rows split the text as the result's do (``own``: the
    length of the result's row), else its first row's start."""
    if index < len(rows) and len(rows[index]["text"]) == own:
        row = rows[index]
    else:
        row, start, end = rows[0], 0, min(1, len(rows[0]["text"]))
    return AlsoAt(source=row["source"], chunk_id=row["id"], link=cite_row(row, start, end).link,
                  snapshot_id=row["snapshotId"])


def query(
    home: Home,
    term: str | None,
    *,
    filters: Filters | None = None,
    limit: int = DEFAULT_LIMIT,
    offset: int = 0,
    max_chars: int = DEFAULT_MAX_CHARS,
    exact: bool = False,
    shard_set: SearchableShards | None = None,
    plugins: Plugins | None = None,
    indexer: str | None = None,
    warn: Callable[..., None] | None = None,
    rerank: Callable[[list[str], list[float]], list[float]] | None = None,
) -> QueryResult:
    """Rank the home's fresh shards for ``term``; a page of cited results sorted (-score, chunk id).

    ``rerank`` (a second stage: passages' texts and scores in, one score per passage out, higher
    better; its ``name`` is reported) reorders the first ``max(limit, RERANK_POOL)`` results before
    the page is cut: a window set by the page's size, not its offset, so pages of one size shown in
    turn hold each result once, and one stage call costs at most ``MAX_LIMIT`` passages (past the
    window, results keep query's order) (``--rerank NAME``: ``ask.rerank.reranker`` makes one from a reader).

    Quoted phrases in ``term`` must appear as written; ``exact`` asks the same of every word. The
    shards are opened by the home's indexer (``indexer``, else config.json's, else bm25, among
    ``plugins``, default the loaded ones); ``shard_set`` (shards already opened: the MCP server's, or
    an index file's) replaces that. An answer from the last commit while a writer is at work is
    reported through ``warn`` (``INDEX_UPDATING``)."""
    text = check_term(term)
    filters = filters or Filters()
    if not 1 <= limit <= MAX_LIMIT or not 0 <= offset <= MAX_OFFSET or not (
        MIN_MAX_CHARS <= max_chars <= MAX_MAX_CHARS
    ):
        raise EpistemeError("INVALID_USAGE", "limit, offset or max-chars out of range")
    if shard_set is None:
        from episteme_core.search.warm import warm_shards

        if plugins is None:
            from episteme_core.kernel.loader import get_plugins

            plugins = get_plugins()
        shard_set = warm_shards(home, plugins, indexer)  # kept open for the process's next query
    from episteme_core.search.indexers import warn_in_flight

    warn_in_flight(shard_set, warn)
    scored, phrases = parse_term(text)
    languages = shard_set.languages
    weighed = query_term_weights(scored, languages)  # every query term (``query_terms_for``), weighed
    # the kernel's set analyses a query as the weights do: its terms are theirs (one analysis, not two)
    terms = list(weighed) if _kernel_analysis(shard_set) else shard_set.terms(scored)
    term_weights = {term: weight for term, weight in weighed.items() if weight != 1.0 and term in terms}
    phrase_words = [words(p) for p in phrases]
    phrase_words = [p for p in phrase_words if p]
    exact_words = set(words(scored)) if exact else set()
    checking = bool(exact_words or phrase_words)
    required = sorted(set(shard_set.terms(" ".join(exact_words | {w for p in phrase_words for w in p}))
                          )) if checking else []

    def empty(reason: str, total: int = 0) -> QueryResult:
        return QueryResult(
            query=text, terms=terms, filters=filters.to_json(), total=total, offset=offset, limit=limit,
            max_chars=max_chars, next_offset=None, results=[], shards=len(shard_set.shards), reason=reason,
            phrases=phrases, exact=exact,
        )

    if not terms:
        return empty("the term has no words to search for (only punctuation or symbols)")
    if filters.source is not None:
        unknown = sorted(set(filters.source) - set(shard_set.sources))
        if len(unknown) == len(set(filters.source)):
            known = ", ".join(shard_set.sources) or "none"
            return empty(f"no shard holds source {', '.join(unknown)} (sources: {known})")
    total_exact = True
    # a second stage reorders the first results: fetch them all from the start, rerank, then page
    window = max(limit, RERANK_POOL)
    start, count = (0, max(offset + limit, window)) if rerank is not None else (offset, limit)
    if checking:
        page, total, total_exact, more = _checked(shard_set, terms, required, filters, start, count,
                                                  exact_words, phrase_words, term_weights)
    else:
        page, total, more = _merged_page(shard_set, terms, filters, start, count, term_weights)
    second: list[float | None] = [None] * len(page)
    if rerank is not None and page:
        page, second, more = _second_stage(page, rerank, window, offset, limit, more)
    if phrases and warn is not None and offset == 0 and total < limit:
        _warn_few_phrase_matches(shard_set, terms, filters, term_weights, phrases, total, warn)
    if not page:
        if total == 0:
            what = " with these filters" if filters.to_json() else ""
            held = (" holding the quoted phrases" if phrases
                    else " holding every word as written" if exact else "")
            return empty(f"no chunk matches{what}{held}")
        return empty(f"offset {offset} is past the last result (there are {total})", total)
    weights = shard_set.idf(terms)
    results = [
        result_for(passage, rank=offset + i, score=hit.score, shard=hit.shard, terms=weights,
                   max_chars=max_chars, languages=languages, rerank_score=reranked_score)
        for i, ((hit, passage), reranked_score) in enumerate(zip(page, second, strict=True), start=1)
    ]
    end = offset + len(page)
    if more and end > MAX_OFFSET:
        more = False  # past the deepest page: no next page to name
        if warn is not None:
            warn(RESULT_WINDOW, f"results past offset {MAX_OFFSET:,} are not paged ({total} units match): "
                 "narrow the query (more words, a quoted phrase, --source, --family, --since)",
                 offset=MAX_OFFSET, total=total)
    return QueryResult(
        query=text, terms=terms, filters=filters.to_json(), total=total, offset=offset, limit=limit,
        max_chars=max_chars, next_offset=end if more else None, results=results,
        shards=len(shard_set.shards), phrases=phrases, exact=exact, total_exact=total_exact,
        rerank=getattr(rerank, "name", "rerank") if rerank is not None else None,
    )


FEW_PHRASE_MATCHES = "FEW_PHRASE_MATCHES"


def _warn_few_phrase_matches(shard_set: SearchableShards, terms: list[str], filters: Filters,
                             weights: dict[str, float], phrases: list[str], total: int,
                             warn: Callable[..., None]) -> None:
    """Say so (``FEW_PHRASE_MATCHES``) when the quoted phrases leave less than a page and the words
    without the quotes match more: a question pasted with quotes in it ("127.", "fly") asks for those
    words as written, which a person or an agent may not have meant. Costs one more search, only then."""
    _, unquoted = shard_set.search(terms, 1, filters, **_weighing(weights))
    if unquoted > total:
        shown = ", ".join(f'"{phrase}"' for phrase in phrases)
        warn(FEW_PHRASE_MATCHES, f"{total} result(s) hold the quoted phrase(s) {shown} as written; "
             f"{unquoted} hold the words without the quotes (drop the quotes to rank them all)",
             phrases=phrases, total=total, unquoted=unquoted)


def _second_stage(page: list[tuple[Hit, Passage]], rerank: Callable[[list[str], list[float]], list[float]],
                  window: int, offset: int, limit: int, more: bool
                  ) -> tuple[list[tuple[Hit, Passage]], list[float | None], bool]:
    """The page ``[offset, offset + limit)`` of ``page`` (the first results, best first) with its first
    ``window`` sorted by the second stage's scores, ties in the first stage's order, and those after
    it in that order; each result's second score (None past the window); whether results follow the
    page. A scorer that returns another number of scores, or one that is not a finite number, is
    ``PROCESSING_FAILED``."""
    import math

    scored = page[:window]
    scores = rerank([passage.text for _, passage in scored], [hit.score for hit, _ in scored])
    if len(scores) != len(scored) or not all(isinstance(x, int | float) and math.isfinite(x) for x in scores):
        raise EpistemeError("PROCESSING_FAILED", f"the reranker {getattr(rerank, 'name', '')!r} gave "
                            f"{len(scores)} scores for {len(scored)} results, or a score that is not a "
                            "number", details={"results": len(scored), "scores": len(scores)})
    reordered = sorted(range(len(scored)), key=lambda i: (-float(scores[i]), i))
    shown = [*reordered, *range(len(scored), len(page))][offset : offset + limit]
    second = [round(float(scores[i]), 6) if i < len(scored) else None for i in shown]
    return ([page[i] for i in shown], second,
            more or len(page) > offset + limit)


def _weighing(weights: dict[str, float] | None) -> dict[str, Any]:
    """``search``'s keyword for term weights: none when every term weighs 1, so a set whose
    ``search`` predates ``weights`` (a plugin's) still answers the queries that need none."""
    return {"weights": weights} if weights else {}


def _merged_page(shard_set: SearchableShards, terms: list[str], filters: Filters, offset: int,
                 limit: int, weights: dict[str, float] | None = None,
                 ) -> tuple[list[tuple[Hit, Passage]], int, bool]:
    """A page of passages, reranked by proximity (``index.proximity``), overlapping runs joined
    (``runs.merge_overlapping``) and passages of the very text of one above them folded into it
    (``_folded_page``), the number of matching units, and whether passages follow the page. Fetches more
    hits until the page is full. ``weights``: terms that weigh other than 1
    (``analyzer.query_term_weights``). Only the page's rows are read as JSON (``passages``); of the
    passages before it, what tells their texts apart (``_folded_page``)."""
    from episteme_core.search.passages import PassageRows
    from episteme_core.search.units import MERGED_CHARS, merge_overlapping

    need = offset + limit
    k = max(2 * need + 10, RERANK_DEPTH)
    bonuses: dict[tuple[str, int], float] = {}  # (shard, unit) -> proximity bonus, kept as k grows
    read = PassageRows(shard_set, terms, shard_set.languages)
    shown = filters if filters.facet_values() or filters.since is not None else None  # what shown_rows checks
    while True:
        hits, total = shard_set.search(terms, k, filters, **_weighing(weights))
        runs = [[(hit.shard, hit.row)] if read.one_row(hit.shard, shown)
                else [(hit.shard, row) for row in read.shard(hit.shard).shown_rows(hit, shown)]
                for hit in hits]
        hits, runs = _reranked(hits, runs, runs, read, bonuses)
        merged = merge_overlapping(runs, read.size, MERGED_CHARS)
        exhausted = len(hits) >= total or k >= MAX_CHECKED
        if len(merged) > need or exhausted:
            page, following = _folded_page(hits, runs, read, merged, offset, limit)
            # full and another text after it (not only copies of those above), or no more hits
            if (len(page) == limit and following) or exhausted:
                break
        k *= 2
    return page, total, following or len(hits) < total


def _folded_page(hits: list[Hit], runs: list[list[tuple[str, int]]], read: PassageRows,
                 merged: list[tuple[int, list[tuple[str, int]]]], offset: int, limit: int,
                 ) -> tuple[list[tuple[Hit, Passage]], bool]:
    """The page ``[offset, offset + limit)`` of the joined passages ``merged`` (best first), a passage
    of the very text of one above it folded into that one (``Passage.copies``: a document held under
    two URLs, a section unchanged between versions, shown once with the other places named), and
    whether a passage of another text follows it in ``merged`` (copies alone after a page are no
    next page: its ``next_offset`` would name an empty one). The page's passages are read as ever
    (``_joined_page``); of those before ``offset`` and after the page only what tells their texts
    apart (``folding.KeptTexts``), so a deep page parses and keeps no row per passage before it. The
    copies of its texts ranked between its end and the next passage of another text are named; one
    ranked below that is not looked for: the next page folds it as this one did."""
    from episteme_core.search.folding import KeptTexts

    kept = KeptTexts(read)
    page: list[tuple[Hit, Passage]] = []
    count, need, walked = 0, offset + limit, 0
    while count < offset and walked < len(merged):  # before the page: only whether each is a copy
        count += kept.fold(merged[walked][1]) is None
        walked += 1
    while count < need and walked < len(merged):
        batch = merged[walked : walked + need - count]
        walked += len(batch)
        for (_, keys), (hit, passage) in zip(batch, _joined_page(hits, runs, read.json, batch), strict=True):
            twin = kept.fold(keys, passage.text)
            if twin is None:
                page.append((hit, passage))
                count += 1
            elif twin >= offset:
                _name_copy(page, twin - offset, passage.rows)
    while walked < len(merged):  # past a full page: up to the first passage that is not a copy
        keys = merged[walked][1]
        walked += 1
        twin = kept.fold(keys)
        if twin is None:
            return page, True
        if twin >= offset:  # a copy of a text the page shows: named there too
            _name_copy(page, twin - offset, [read.json(key) for key in keys])
    return page, False


def _name_copy(page: list[tuple[Hit, Passage]], index: int, rows: list[dict[str, Any]]) -> None:
    """Name ``rows`` (a copy of the text of the page's passage ``index``) in that passage's copies."""
    hit, shown = page[index]
    page[index] = (hit, attrs.evolve(shown, copies=(*shown.copies, rows)))


def _joined_page(hits: list[Hit], runs: list[list[tuple[str, int]]],
                 row_of: Callable[[tuple[str, int]], dict[str, Any]],
                 merged: list[tuple[int, list[tuple[str, int]]]]) -> list[tuple[Hit, Passage]]:
    """Each joined passage (``runs.merge_overlapping``) as the hit of its best run and the passage
    of its rows (``row_of``: a row's JSON); where runs were joined, ``focus`` is the span of the best
    run's rows."""
    page = []
    for rank, keys in merged:
        if len(keys) == 1:  # one chunk: the passage is its text
            row = row_of(keys[0])
            page.append((hits[rank], Passage(row["text"], [row], [0])))
            continue
        chosen = [row_of(key) for key in keys]
        offsets, at = [], 0
        for chunk in chosen:
            offsets.append(at)
            at += len(chunk["text"]) + 2
        focus = None
        if len(keys) > 1:
            best = set(runs[rank])
            inside = [i for i, key in enumerate(keys) if key in best]
            if len(inside) < len(keys):  # joined: the best run's rows are consecutive in the passage
                focus = (offsets[inside[0]], offsets[inside[-1]] + len(chosen[inside[-1]]["text"]))
        text = chosen[0]["text"] if len(chosen) == 1 else "\n\n".join(chunk["text"] for chunk in chosen)
        page.append((hits[rank], Passage(text, chosen, offsets, focus)))
    return page


def prose_factor(rows: list[dict[str, Any]], terms: set[str], languages: list[str]) -> float:
    """What share of its score a passage keeps (``passages.prose_share``): less where the query's
    words it holds sit in a book's non-prose parts."""
    from episteme_core.search.passages import prose_factor as factor

    return factor(rows, terms, languages)


def _reranked(hits: list[Hit], extra: list[Any], keys: list[list[tuple[str, int]]], read: PassageRows,
              cache: dict[tuple[str, int], float]) -> tuple[list[Hit], list[Any]]:
    """``hits`` (best BM25 first) with the first ``RERANK_DEPTH`` scored again with their proximity
    bonus (``keys``: their passages' rows, read by ``read``), best first, and times the prose share
    (a book's contents weigh less); ``extra`` (one item per hit) follows. ``cache`` keeps each
    unit's change of score while a page fetches more hits."""
    from episteme_core.search.proximity import reorder

    bonuses = []
    for i, hit in enumerate(hits[:RERANK_DEPTH]):
        key = (hit.shard, hit.unit)
        found = cache.get(key)
        if found is None:
            found = cache[key] = read.bonus(hit.score, keys[i])
        bonuses.append(found)
    order = reorder([hit.score for hit in hits], bonuses)
    rescored = [Hit(hit.score + bonuses[i], hit.chunk_id, hit.row, hit.shard, hit.unit)
                if i < len(bonuses) and bonuses[i] else hit for i in order for hit in (hits[i],)]
    return rescored, [extra[i] for i in order]


def _checked(shard_set: SearchableShards, terms: list[str], required: list[str], filters: Filters,
             offset: int, limit: int, exact_words: set[str], phrases: list[list[str]],
             weights: dict[str, float] | None = None) -> tuple[list[tuple[Hit, Passage]], int, bool, bool]:
    """A page of passages holding the exact words and phrases, best first, overlapping runs joined
    as other queries join them; the number of holding passages (before joining); whether that number
    is exact; whether passages follow the page (copies folded, ``_folded_page``). Candidates hold
    every required term; the best ``RERANK_DEPTH`` are reranked by proximity; their text is checked
    in score order, at most ``MAX_CHECKED`` of them."""
    from episteme_core.search.passages import PassageRows
    from episteme_core.search.units import MERGED_CHARS, merge_overlapping

    hits, candidates = shard_set.search(terms, MAX_CHECKED, filters, required=required, **_weighing(weights))
    read = PassageRows(shard_set, terms, shard_set.languages)
    runs_of = [[(hit.shard, row) for row in read.shard(hit.shard).shown_rows(hit, filters)]
               for hit in hits[:RERANK_DEPTH]]
    hits, known = _reranked(hits, [*runs_of, *([None] * (len(hits) - len(runs_of)))], runs_of, read, {})
    holding: list[Hit] = []
    runs: list[list[tuple[str, int]]] = []
    for hit, ready in zip(hits, known, strict=True):
        keys = ready if ready is not None else [
            (hit.shard, row) for row in read.shard(hit.shard).shown_rows(hit, filters)]
        rows = [read.json(key) for key in keys]
        text = rows[0]["text"] if len(rows) == 1 else "\n\n".join(row["text"] for row in rows)
        if _holds(text, exact_words, phrases):
            holding.append(hit)
            runs.append(keys)
    merged = merge_overlapping(runs, lambda key: len(read.json(key)["text"]), MERGED_CHARS)
    page, following = _folded_page(holding, runs, read, merged, offset, limit)
    return page, len(holding), candidates <= MAX_CHECKED, following


def paragraph_spans(refs: list[str], source: str) -> str:
    """``RECORD#3–#5, #9``: a run's paragraph references with consecutive numbers joined; empty when
    the run is a document's chunks (each names only the source the citation line shows already)."""
    groups: list[list[Any]] = []  # [record, first, last]
    for ref in refs:
        record, _, tail = ref.rpartition("#")
        if ref == source or not record or not tail.isdigit():
            continue
        n = int(tail)
        if groups and groups[-1][0] == record and groups[-1][2] == n - 1:
            groups[-1][2] = n
        else:
            groups.append([record, n, n])
    spans = []
    for i, (record, first, last) in enumerate(groups):
        name = "" if i and groups[i - 1][0] == record else record
        spans.append(f"{name}#{first}" if first == last else f"{name}#{first}–#{last}")
    return ", ".join(spans)


def render(result: QueryResult) -> str:
    """Human text: a header, then per result heading and score, the snippet, and the citation."""
    count = f"{result.total}" if result.total_exact else f"at least {result.total}"
    lines = [
        f"{count} result(s) for “{result.query}” (offset {result.offset}, limit {result.limit}).",
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
        for copy in item.also:
            lines.append(f"   also, the same text: {copy.link or copy.source} "
                         f"(snapshot {copy.snapshot_id[:12]})")
        if item.paragraphs:
            shown = [p.ref for p in item.paragraphs
                     if p.end > item.snippet_start and p.start < item.snippet_end]
            spans = paragraph_spans(shown, item.source)
            if spans:
                lines.append(f"   paragraphs shown: {spans} "
                             "(each its own citation; episteme show REF prints one)")
    if result.next_offset is not None:
        lines.append("")
        lines.append(f"Next: --offset {result.next_offset}")
    return "\n".join(lines)
