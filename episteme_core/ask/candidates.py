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
from episteme_core.records.trust import MARKED_KINDS
from episteme_core.search.proximity import RERANK_DEPTH

SEPARATOR = "\n\n"


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


def is_marked(chunk: Any) -> bool:
    """Claude thinking, tool calls, tool results and summaries: left out of answers unless asked for."""
    attributes = getattr(chunk, "attributes", None) or {}
    if attributes.get("marked"):
        return True
    return any(getattr(b, "kind", None) in MARKED_KINDS for b in getattr(chunk, "blocks", None) or ())


def stored_paragraph(shard: Shard, chunk_id: str, score: float, chunk: Any) -> StoredParagraph:
    """What a chunk of a shard becomes in an answer: its exact text and its citation."""
    record_id = getattr(chunk, "record_id", None) or getattr(chunk, "source", None) or chunk_id
    n = getattr(chunk, "paragraph", None)
    cite = getattr(chunk, "cite", None)
    ref = f"{record_id}#{n}" if n is not None else (cite or record_id)
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
        citation={k: v for k, v in citation.items() if v is not None},
    )


def candidates_of(shard: Shard, question: str, wanted: int, *, since: str | None,
                  include_marked: bool, idf: dict[str, float] | None = None,
                  terms: Sequence[str] | None = None) -> list[CandidatePassage]:
    """The shard's best ``wanted`` passages for ``question``, filters applied, the best BM25 ones
    reranked by the proximity of the question's ``terms`` as ``query`` ranks them
    (``index.proximity``).

    A shard's own ``passages`` ranks them; else its ``ranked`` over ``terms`` (the question's terms
    as its indexer analyzes them), each unit's shown chunks a passage; else each chunk ``search``
    finds. ``since`` goes to the index as a filter and is checked again on every paragraph; marked
    paragraphs (thinking, tool calls and results) are dropped unless asked for (a passage left with
    none is skipped, so more passages are fetched)."""
    filters = None
    if since is not None:
        from episteme_core.records.hits import Filters

        filters = Filters(since=since)
    floor = parse_time(since) if since else None
    k = max(wanted if include_marked else wanted * 4, RERANK_DEPTH)  # the proximity rerank reads as deep
    passages = getattr(shard, "passages", None)
    ranked = getattr(shard, "ranked", None)
    if callable(passages):
        found = passages(question, k, filters, idf=idf)
    elif callable(ranked) and terms is not None:
        hits, _ = ranked(terms, k, filters, idf=idf)
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
    merged = merge_overlapping([ids for _, ids in found], lambda c: len(chunks[c].text), MERGED_CHARS)
    out: list[CandidatePassage] = []
    for rank, chunk_ids in merged:
        score = found[rank][0]
        kept = []
        for chunk_id in chunk_ids:
            chunk = chunks[chunk_id]
            if not include_marked and is_marked(chunk):
                continue
            if floor is not None and not _at_or_after(getattr(chunk, "time", None), floor):
                continue
            kept.append(stored_paragraph(shard, str(chunk_id), score, chunk))
        kept = focused(kept, set(terms), languages)
        if kept:
            out.append(CandidatePassage(tuple(kept), float(score)))
            if len(out) >= wanted:
                break
    return out


def focused(paragraphs: list[StoredParagraph], terms: set[str],
            languages: Sequence[str]) -> list[StoredParagraph]:
    """The paragraphs of a passage that hold a term of the question, and each one's neighbours.

    A run is scored as a whole so that an answer is found by the words around it; its paragraphs
    that hold none of the question's terms and stand next to none that do (a list of contents
    beside the chapter that answers) are context nobody asked for, and they would take the answer's
    budget. A passage none of whose paragraphs holds a term (found by its title or path) is kept
    whole."""
    if len(paragraphs) < 3:
        return paragraphs
    from episteme_core.text.analyzer import query_terms_for

    holds = [not terms.isdisjoint(query_terms_for(p.text, languages)) for p in paragraphs]
    if not any(holds):
        return paragraphs
    last = len(paragraphs) - 1
    return [p for i, p in enumerate(paragraphs)
            if holds[i] or (i > 0 and holds[i - 1]) or (i < last and holds[i + 1])]


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
