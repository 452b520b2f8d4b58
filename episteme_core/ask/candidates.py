"""Candidates for ``ask``: each shard's best passages for the question, as stored paragraphs.

A shard of the index scores runs of consecutive paragraphs of one record (``index.runs``), so a
paragraph is found by the words of its neighbours; a candidate is such a run (or one chunk), offered
to readers as one labelled text, the run's paragraphs joined by a blank line. When a reader names
it, the answer holds each of its paragraphs, verbatim, with its own ``record#n``.

Overlapping runs that both rank are joined into one candidate (``index.runs.merge_overlapping``). A
shard handed in by tests (any object with ``name``, ``source``, ``search`` and ``chunk``) may offer
``passages(question, k, filters)`` too; without it each chunk it finds is a candidate of its own.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Protocol

import attrs

from episteme_core.ask.answer import StoredParagraph, parse_time
from episteme_core.records.trust import MARKED_KINDS, OFFERED_MARKED_KINDS
from episteme_core.search.proximity import RERANK_DEPTH

SEPARATOR = "\n\n"
# What ``ask`` offers of the marked paragraphs: tool output by default, everything, or none.
OFFER, INCLUDE, EXCLUDE = "offer", "include", "exclude"


class Shard(Protocol):
    name: str
    source: str

    def search(self, text: str, k: int, filters: Any = None) -> Sequence[tuple[str, float]]: ...

    def chunk(self, chunk_id: str) -> Any: ...


@attrs.frozen
class CandidatePassage:
    """What a reader is offered under one label: a run of paragraphs (or one), best first by BM25."""

    paragraphs: tuple[StoredParagraph, ...]
    score: float
    # the passage as the answer shows it when it names it first, in ``wide`` characters (``widened``);
    # None when no width was asked
    wide: tuple[StoredParagraph, ...] | None = None

    @property
    def text(self) -> str:
        return SEPARATOR.join(p.text for p in self.paragraphs)

    @property
    def ref(self) -> str:
        """The reference of its first paragraph (``record#n``)."""
        return self.paragraphs[0].ref

    @property
    def time(self) -> str | None:
        return self.paragraphs[0].time


def marked_kind(chunk: Any) -> str | None:
    """A chunk's marked kind (``records.trust.MARKED_KINDS``: thinking, tool output, a book's
    contents, ...), ``"marked"`` when it is marked without a known kind; None for prose."""
    attributes = getattr(chunk, "attributes", None) or {}
    kind = attributes.get("paragraphKind")
    if kind in MARKED_KINDS:
        return str(kind)
    if attributes.get("marked"):
        return "marked"
    return next((str(b.kind) for b in getattr(chunk, "blocks", None) or ()
                 if getattr(b, "kind", None) in MARKED_KINDS), None)


def is_offered(kind: str | None, marked: str) -> bool:
    """Whether ``ask`` offers a paragraph of marked ``kind`` (None: prose) under policy ``marked``:
    ``offer`` (default) prose and tool output, ``include`` everything, ``exclude`` prose only."""
    if kind is None or marked == INCLUDE:
        return True
    return marked == OFFER and kind in OFFERED_MARKED_KINDS


def stored_paragraph(shard: Shard, chunk_id: str, score: float, chunk: Any) -> StoredParagraph:
    """What a chunk of a shard becomes in an answer: its exact text and its citation."""
    record_id = getattr(chunk, "record_id", None) or getattr(chunk, "source", None) or chunk_id
    n = getattr(chunk, "paragraph", None)
    cite = getattr(chunk, "cite", None)
    ref = f"{record_id}#{n}" if n is not None else (cite or record_id)
    kind = marked_kind(chunk)
    citation = {
        "ref": ref,
        "recordId": record_id,
        "paragraph": n,
        "url": getattr(chunk, "url", None),
        "fragment": getattr(chunk, "fragment", None),
        "snapshotId": getattr(chunk, "snapshot_id", None),
        "documentId": getattr(chunk, "document_id", None),
        "chunkId": chunk_id,
        "shard": shard.name,
    }
    return StoredParagraph(
        ref=ref, record_id=record_id, n=n, text=chunk.text, time=getattr(chunk, "time", None),
        source=shard.source, shard=shard.name, chunk_id=chunk_id, score=float(score),
        citation={k: v for k, v in citation.items() if v is not None}, marked=kind,
    )


def paragraphs_of(shard: Shard, chunk_id: str, score: float, chunk: Any) -> list[StoredParagraph]:
    """What a chunk offers an answer: a record's paragraph whole; a document's chunk block by block
    (each block's characters of the chunk's text, cited by its anchor and block id), so an answer
    can hold the block that bears on a question without the rest of a long chunk."""
    whole = stored_paragraph(shard, chunk_id, score, chunk)
    blocks = getattr(chunk, "blocks", None) or ()
    if whole.n is not None or len(blocks) < 2:
        return [whole]
    out = []
    url = getattr(chunk, "url", None)
    for block in blocks:
        start = int(block.offset)
        end = start + int(block.end) - int(block.start)
        text = chunk.text[start:end]
        if not text.strip():
            continue
        anchor = getattr(block, "anchor", None) or getattr(chunk, "fragment", None)
        ref = f"{url}#{anchor}" if url and anchor else whole.ref
        citation = {**whole.citation, "ref": ref, "fragment": anchor, "blockId": block.block_id,
                    "page": getattr(block, "page", None)}
        out.append(attrs.evolve(whole, ref=ref, text=text, span=(start, end), stored_chars=len(chunk.text),
                                citation={k: v for k, v in citation.items() if v is not None}))
    return out or [whole]


def candidates_of(shard: Shard, question: str, wanted: int, *, since: str | None,
                  marked: str = OFFER, idf: dict[str, float] | None = None,
                  terms: Sequence[str] | None = None, collection: Any = None,
                  wide: int | None = None) -> list[CandidatePassage]:
    """The shard's best ``wanted`` passages for ``question``, filters applied, the best BM25 ones
    reranked by the proximity of the question's ``terms`` as ``query`` ranks them
    (``index.proximity``).

    A shard's own ``passages`` ranks them; else its ``ranked`` over ``terms`` (the question's terms
    as its indexer analyzes them), each unit's shown chunks a passage; else each chunk ``search``
    finds. ``since`` goes to the index as a filter and is checked again on every paragraph; marked
    paragraphs the policy ``marked`` does not offer (``is_offered``) are dropped (a passage left with
    none is skipped, so more passages are fetched). Each paragraph says whether it bears on the
    question (``bearing``): the answer shows those, and all of the passage it names first. ``collection``
    (the shard set's statistics over every shard asked) scores the shard as part of one index."""
    filters = None
    if since is not None:
        from episteme_core.records.hits import Filters

        filters = Filters(since=since)
    floor = parse_time(since) if since else None
    k = max(wanted if marked == INCLUDE else wanted * 4, RERANK_DEPTH)  # the proximity rerank reads as deep
    passages = getattr(shard, "passages", None)
    ranked = getattr(shard, "ranked", None)
    scoring = {"idf": idf} if collection is None else {"idf": idf, "collection": collection}
    if callable(passages):
        found = passages(question, k, filters, **scoring)
    elif callable(ranked) and terms is not None:
        hits, _ = ranked(terms, k, filters, **scoring)
        found = [(hit.score, [shard.row_json(row)["id"] for row in shard.shown_rows(hit, filters)])  # type: ignore[attr-defined]
                 for hit in hits]
    else:
        found = [(score, (chunk_id,)) for chunk_id, score in shard.search(question, k, filters)]
    from episteme_core.search.units import MERGED_CHARS, merge_overlapping

    found = [(score, list(ids)) for score, ids in found if score > 0]
    chunks: dict[str, Any] = {}
    for _, chunk_ids in found:
        for chunk_id in chunk_ids:
            if chunk_id not in chunks:
                chunks[chunk_id] = shard.chunk(chunk_id)
    languages = getattr(shard, "languages", None) or ["english"]
    if terms is None:
        from episteme_core.text.analyzer import query_terms_for

        terms = query_terms_for(question, languages)
    found = reranked(found, lambda ids: SEPARATOR.join(chunks[c].text for c in ids), terms, languages)
    weights = term_weights(shard, terms, idf)
    merged = merge_overlapping([ids for _, ids in found], lambda c: len(chunks[c].text), MERGED_CHARS)
    out: list[CandidatePassage] = []
    for rank, chunk_ids in merged:
        score = found[rank][0]
        kept = []
        for chunk_id in chunk_ids:
            chunk = chunks[chunk_id]
            if not is_offered(marked_kind(chunk), marked):
                continue
            if floor is not None and not _at_or_after(getattr(chunk, "time", None), floor):
                continue
            kept.extend(paragraphs_of(shard, str(chunk_id), score, chunk))
        kept = weighed(kept, weights, languages)  # what does not bear: for the answer's first passage
        compact = [excerpted(p, weights, languages) for p in kept]
        wider = widened(kept, compact, wide) if wide else None
        kept = compact
        if kept:
            out.append(CandidatePassage(tuple(kept), float(score), wider))
            if len(out) >= wanted:
                break
    return out


# The best run of question terms (scored as a snippet's) lies within this many characters; the
# paragraphs holding it bear on the question (measured on the dev set: 300 to 600 hold the same).
BEARING_SPAN = 450


def term_weights(shard: Shard, terms: Sequence[str], idf: dict[str, float] | None) -> dict[str, float]:
    """Each question term's weight for ``bearing``: its idf over the shards asked (``idf``), else
    over this shard, else 1."""
    if idf is not None:
        return {t: idf.get(t, 0.0) for t in terms}
    own = idf_over([shard], terms)
    return own if own is not None else dict.fromkeys(terms, 1.0)


def bearing(paragraphs: list[StoredParagraph], weights: dict[str, float],
            languages: Sequence[str]) -> list[StoredParagraph]:
    """The paragraphs of a passage that bear on the question: those holding its best run of
    question terms (the run within ``BEARING_SPAN`` characters that scores highest, as a snippet's
    is scored), and the neighbours that continue one of them (``continues``).

    A run is scored as a whole so that an answer is found by the words around it, but an answer
    shows what bears on the question, not the run. A passage that holds no term (found by its title
    or path) shows its first paragraph."""
    return [p for p in weighed(paragraphs, weights, languages) if p.bearing]


def weighed(paragraphs: list[StoredParagraph], weights: dict[str, float],
            languages: Sequence[str]) -> list[StoredParagraph]:
    """The passage's ``paragraphs``, each marked with whether it bears on the question (``bearing``:
    the rule of the function of that name) and with the weight of the question's terms it holds
    (``held``: which of them the answer names first, ``answer.named_order``), both from one analysis
    of the passage's text. A passage of one paragraph is returned as it is (it bears; alone, its
    order does not matter)."""
    if len(paragraphs) < 2:
        return paragraphs
    from episteme_core.search.snippets import held_weights, run_of, term_matches

    text = SEPARATOR.join(p.text for p in paragraphs)
    matches = term_matches(text, weights, languages) if weights else []
    spans, at = [], 0
    for p in paragraphs:
        spans.append((at, at + len(p.text)))
        at += len(p.text) + len(SEPARATOR)
    run = run_of(matches, BEARING_SPAN)
    if run is None:
        chosen = {0}
    else:
        chosen = continued(paragraphs, {i for i, (start, end) in enumerate(spans)
                                        if start < run[1] and run[0] < end})
    held = held_weights(matches, spans)
    return [attrs.evolve(p, bearing=i in chosen, held=held[i]) for i, p in enumerate(paragraphs)]


EXCERPT_FROM = 1000  # a paragraph longer than this is shown as its best window...
EXCERPT_CHARS = 700  # ...of this many characters


def excerpted(paragraph: StoredParagraph, weights: dict[str, float],
              languages: Sequence[str]) -> StoredParagraph:
    """A paragraph longer than ``EXCERPT_FROM`` characters as its best window of ``EXCERPT_CHARS``
    (the query-biased window a snippet is, from a sentence start; a verbatim slice with its span),
    so that one long tool output or page does not take a whole answer's budget; others as they are."""
    if len(paragraph.text) <= EXCERPT_FROM:
        return paragraph
    from episteme_core.search.snippets import best_window

    start, end = best_window(paragraph.text, weights, EXCERPT_CHARS, languages)
    base = paragraph.span[0] if paragraph.span else 0
    stored = paragraph.stored_chars if paragraph.span else len(paragraph.text)
    return attrs.evolve(paragraph, text=paragraph.text[start:end], span=(base + start, base + end),
                        stored_chars=stored)


def widened(paragraphs: Sequence[StoredParagraph], compact: Sequence[StoredParagraph],
             chars: int) -> tuple[StoredParagraph, ...]:
    """The passage as the answer shows it when it names it first, in ``chars`` characters: all its
    paragraphs, whole (a long one too), when they fit; else what its ``compact`` form shows (the
    bearing paragraphs and the one that holds the most of the question's terms; ``compact[i]`` is
    ``paragraphs[i]`` as offered), a long one's window widened
    around what it showed into the room the others leave (``window_around``: from the sentence it
    began in, the room after it), a verbatim slice with its span; and the paragraphs between its
    first shown paragraph and its last, as offered, when all of them fit the room still left."""
    if len(SEPARATOR.join(p.text for p in paragraphs)) <= chars:
        return tuple(paragraphs)
    from episteme_core.search.snippets import window_around

    # the paragraph holding the most of the question's terms too: a run can span two short
    # paragraphs' ends while one paragraph holds more of the question, spread wider than a run
    most = max(range(len(compact)), key=lambda i: compact[i].held)
    chosen = [i for i, c in enumerate(compact) if c.bearing or i == most]
    room = chars - sum(len(compact[i].text) for i in chosen)
    out: dict[int, StoredParagraph] = {}
    for i in chosen:
        p, c = paragraphs[i], compact[i]
        if c.span == p.span or room <= 0:  # shown whole, or no room left to widen it
            out[i] = c
            continue
        lo = _offset_in(p, c)
        start, end = window_around(p.text, (lo, lo + len(c.text)), len(c.text) + room)
        if start > lo or end < lo + len(c.text):
            out[i] = c
            continue
        out[i] = p if (start, end) == (0, len(p.text)) else _sliced(p, start, end)
        room -= (end - start) - len(c.text)
    # the paragraphs between what it shows, when they all fit the room left: the stretch from its
    # first shown paragraph to its last reads on (a dialogue's lines between two that bear)
    between = [i for i in range(chosen[0], chosen[-1]) if i not in out]
    if sum(len(compact[i].text) for i in between) <= room:
        out.update((i, compact[i]) for i in between)
    return tuple(out[i] for i in sorted(out))


def _offset_in(paragraph: StoredParagraph, shown: StoredParagraph) -> int:
    """Where ``shown`` (``paragraph`` or its excerpt) starts in ``paragraph``'s text."""
    if shown.span is None:
        return 0
    return shown.span[0] - (paragraph.span[0] if paragraph.span else 0)


def _sliced(paragraph: StoredParagraph, start: int, end: int) -> StoredParagraph:
    """The characters ``[start, end)`` of a paragraph's text, with its span in the stored text."""
    base = paragraph.span[0] if paragraph.span else 0
    stored = paragraph.stored_chars if paragraph.span else len(paragraph.text)
    return attrs.evolve(paragraph, text=paragraph.text[start:end], span=(base + start, base + end),
                        stored_chars=stored)


_SENTENCE_END = tuple(".!?;)]}\"'\u201d\u2019\u00bb")


def continued(paragraphs: Sequence[StoredParagraph], chosen: set[int]) -> set[int]:
    """``chosen`` and the neighbours that continue a chosen paragraph: the next one when a chosen one
    ends mid-sentence, the one before when a chosen one starts mid-sentence (a lower-case start)."""
    out = set(chosen)
    for i in sorted(chosen):
        text = paragraphs[i].text.rstrip()
        if i + 1 < len(paragraphs) and text and not text.endswith(_SENTENCE_END):
            out.add(i + 1)
        head = paragraphs[i].text.lstrip()[:1]
        if i > 0 and head.islower():
            out.add(i - 1)
    return out


def reranked(found: list[tuple[float, list[str]]], text_of: Callable[[list[str]], str],
             terms: Sequence[str], languages: Sequence[str]) -> list[tuple[float, list[str]]]:
    """``found`` (score, chunk ids), best BM25 first, with the first ``RERANK_DEPTH`` given their
    proximity bonus for the query ``terms`` (``index.proximity``), best first."""
    from episteme_core.search.proximity import reorder, text_bonus

    wanted = set(terms)
    bonuses = [text_bonus(text_of(ids), wanted, languages) for _, ids in found[:RERANK_DEPTH]]
    order = reorder([score for score, _ in found], bonuses)
    return [(found[i][0] + (bonuses[i] if i < len(bonuses) else 0.0), found[i][1]) for i in order]


def _at_or_after(value: str | None, floor: datetime) -> bool:
    moment = parse_time(value)
    return moment is not None and moment >= floor


def idf_over(shards: Sequence[Any], terms: Sequence[str]) -> dict[str, float] | None:
    """Each term's BM25 idf over ``shards`` taken as one index (None when they cannot count terms)."""
    if not shards or not all(callable(getattr(s, "document_frequency", None)) for s in shards):
        return None
    units = sum(int(getattr(s, "units", getattr(s, "rows", 0))) for s in shards)
    out = {}
    for term in terms:
        df = sum(int(s.document_frequency(term)) for s in shards)
        out[term] = math.log(1 + (units - df + 0.5) / (df + 0.5))
    return out


def coverage_function(shards: Sequence[Shard], question: str) -> Callable[[str], float]:
    """``text -> coverage``: the IDF-weighted share of the question's terms a passage holds, with
    IDF (BM25's) over all ``shards`` together; equal weights when the shards cannot count terms."""
    from episteme_core.text.analyzer import query_terms

    terms = query_terms(question)
    weights = idf_over(shards, terms) or dict.fromkeys(terms, 1.0)
    whole = sum(weights.values())
    if whole <= 0:
        return lambda text: 1.0

    def cover(text: str) -> float:
        held = set(query_terms(text))
        return round(sum(w for t, w in weights.items() if t in held) / whole, 6)

    return cover
