"""``ask`` as a library function: candidates from BM25 per shard, readers name, the answer is built.

The same function serves ``episteme ask``, ``episteme eval`` and the MCP server (``command`` says
which, for telemetry). Shards come from the index (``episteme_core.index.open_shards``), or are
handed in by tests and laws (any object with ``name``, ``source``, ``search(text, k, filters)``
and ``chunk(chunk_id)``).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Protocol

import attrs

from episteme_core.ask.answer import AnswerParagraph, Named, Omitted, StoredParagraph, assemble, parse_time
from episteme_core.ask.reader import Candidate, Reader, ReaderSpec, ReadRequest
from episteme_core.defaults import DEFAULT_BUDGET as DEFAULT_BUDGET  # defined once, for the CLI too
from episteme_core.defaults import DEFAULT_CANDIDATES as DEFAULT_CANDIDATES
from episteme_core.errors import EpistemeError

MAX_QUESTION_CHARS = 4_000
MARKED_KINDS = frozenset({"thinking", "tool_call", "tool_result"})
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
Warn = Callable[..., None]


class Shard(Protocol):
    name: str
    source: str

    def search(self, text: str, k: int, filters: Any = None) -> Sequence[tuple[str, float]]: ...

    def chunk(self, chunk_id: str) -> Any: ...


@attrs.frozen
class AskOptions:
    """One question and how to answer it."""

    question: str
    filter: tuple[str, ...] | None = None
    since: str | None = None
    reader: str | None = None
    budget: int = DEFAULT_BUDGET
    candidates: int = DEFAULT_CANDIDATES
    include_marked: bool = False


@attrs.frozen
class ShardReport:
    name: str
    source: str
    candidates: int
    named: int
    reader: str
    fallback: bool
    invented: list[str]


@attrs.frozen
class ReaderReport:
    name: str
    kind: str
    slots: int
    healthy: bool


@attrs.frozen
class AskResult:
    """The structured answer; ``schema/ask-result.schema.json``."""

    question: str
    filter: list[str] | None
    since: str | None
    budget: int
    chars: int
    paragraphs: list[AnswerParagraph]
    omitted: list[Omitted]
    shards: list[ShardReport]
    readers: list[ReaderReport]
    duration_ms: int
    ranked: list[str]
    content_trust: str = "untrusted-source"


# -- input checks -----------------------------------------------------------------------------------
def check_question(question: str) -> str:
    text = question.strip()
    if not text:
        raise EpistemeError("INVALID_USAGE", "the question is empty",
                            hint='ask a question: episteme ask "..."')
    if len(text) > MAX_QUESTION_CHARS:
        raise EpistemeError(
            "INVALID_USAGE", f"the question is longer than {MAX_QUESTION_CHARS} characters",
            details={"chars": len(text), "max": MAX_QUESTION_CHARS},
        )
    return text


def parse_since(text: str) -> str:
    """``YYYY-MM-DD`` (midnight UTC) or an ISO 8601 time, as a UTC time string; else INVALID_USAGE."""
    value = text.strip()
    moment = parse_time(value) if (_DATE.match(value) or "T" in value or " " in value) else None
    if moment is None:
        raise EpistemeError(
            "INVALID_USAGE",
            f"--since {text!r} is not a date",
            details={"since": text},
            hint="give a date such as 2024-05-01 or a time such as 2024-05-01T12:00:00Z",
        )
    return moment.isoformat().replace("+00:00", "Z")


def parse_filter(text: str) -> tuple[str, ...]:
    names = tuple(sorted({part.strip() for part in text.split(",") if part.strip()}))
    if not names:
        raise EpistemeError("INVALID_USAGE", "--filter names no source", hint="e.g. --filter books,claude")
    return names


# -- shards and candidates ----------------------------------------------------------------------------
def open_home_shards(home: Any) -> list[Shard]:
    """The home's shards; missing or stale ones are refused (``STALE_INDEX``: run episteme ingest)."""
    from episteme_core.index import open_shards

    try:
        shard_set = open_shards(home)
    except EpistemeError as exc:
        if exc.code != "STALE_INDEX":
            raise
        raise EpistemeError(
            "STALE_INDEX", f"{exc.message}; run episteme ingest", details=exc.details,
            hint="run episteme ingest (or episteme index) so that ask answers from current evidence",
        ) from exc
    return list(shard_set.shards)


def _is_marked(chunk: Any) -> bool:
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


def candidates_of(shard: Shard, options: AskOptions, since: datetime | None) -> list[StoredParagraph]:
    """The shard's best ``options.candidates`` paragraphs for the question, filters applied.

    ``since`` goes to the index as a filter and is checked again on every chunk; marked paragraphs
    (thinking, tool calls and results) are skipped unless asked for, so more hits are fetched."""
    filters = _filters(options)
    wanted = options.candidates
    k = wanted if options.include_marked else wanted * 4
    found: list[StoredParagraph] = []
    for chunk_id, score in shard.search(options.question, k, filters):
        if score <= 0:
            continue
        chunk = shard.chunk(chunk_id)
        if not options.include_marked and _is_marked(chunk):
            continue
        if since is not None:
            moment = parse_time(getattr(chunk, "time", None))
            if moment is None or moment < since:
                continue
        found.append(stored_paragraph(shard, chunk_id, score, chunk))
        if len(found) >= wanted:
            break
    return found


def _filters(options: AskOptions) -> Any:
    if options.since is None:
        return None
    from episteme_core.index import Filters

    return Filters(since=options.since)


def _document_frequency(shard: Any, term: str) -> tuple[int, int]:
    """(paragraphs holding ``term``, paragraphs) in ``shard``; (0, 0) when it cannot say."""
    counter = getattr(shard, "document_frequency", None)
    if callable(counter):
        return int(counter(term)), int(shard.rows)
    term_id = getattr(shard, "term_id", None)
    if not callable(term_id) or not hasattr(shard, "file"):
        return 0, 0
    tid = term_id(term)
    if tid is None:
        return 0, int(shard.rows)
    start, stop = shard.file.slice("postingsStart", tid, tid + 2)
    return int(stop) - int(start), int(shard.rows)


def coverage_function(shards: Sequence[Shard], question: str) -> Callable[[str], float]:
    """``text -> coverage``: the IDF-weighted share of the question's terms a paragraph holds, with
    IDF (BM25's) over all ``shards`` together; equal weights when the shards cannot count terms."""
    import math

    from episteme_core.index.analyzer import query_terms

    terms = query_terms(question)
    weights: dict[str, float] = {}
    for term in terms:
        df = total = 0
        for shard in shards:
            d, n = _document_frequency(shard, term)
            df += d
            total += n
        weights[term] = math.log(1 + (total - df + 0.5) / (df + 0.5)) if total else 1.0
    whole = sum(weights.values())
    if whole <= 0:
        return lambda text: 1.0

    def cover(text: str) -> float:
        held = set(query_terms(text))
        return round(sum(w for t, w in weights.items() if t in held) / whole, 6)

    return cover


# -- readers ----------------------------------------------------------------------------------------
def open_readers(home: Any, plugins: Any, name: str | None) -> list[Reader]:
    """The readers for this question: ``--reader NAME`` (a configured name or a reader kind), else
    every configured reader, else the builtin bm25."""
    from episteme_core.ask.config import reader_specs

    specs = reader_specs(home.config())
    if name is not None:
        chosen = [s for s in specs if s.name == name]
        if not chosen:
            kinds = {c.name for c in plugins.all("reader")}
            if name not in kinds:
                known = ", ".join(sorted({*(s.name for s in specs), *kinds}))
                raise EpistemeError(
                    "INVALID_USAGE", f"unknown reader {name!r} (known: {known})", details={"reader": name}
                )
            chosen = [ReaderSpec(name=name, kind=name)]
        specs = chosen
    if not specs:
        specs = [ReaderSpec(name="bm25", kind="bm25")]
    readers: list[Reader] = []
    try:
        for spec in specs:
            kind = plugins.get("reader", spec.kind)
            readers.append(kind.open(spec))
    except Exception:
        for reader in readers:
            reader.close()
        raise
    return readers


# -- the question -----------------------------------------------------------------------------------
def ask(
    home: Any,
    options: AskOptions,
    *,
    plugins: Any,
    warn: Warn,
    shards: Sequence[Shard] | None = None,
    command: str = "ask",
    label: str | None = None,
    readers: Sequence[Reader] | None = None,
) -> AskResult:
    """Answer one question with the home's shards (or ``shards``); one telemetry line per call.

    ``readers`` (opened readers) replaces the configured pool: for tests, laws and embedding code."""
    from episteme_core import telemetry

    started = time.monotonic()
    state: dict[str, Any] = {}
    error: str | None = None
    try:
        result = _ask(home, options, plugins, warn, shards, readers, state, started)
        return result
    except EpistemeError as exc:
        error = exc.code
        raise
    except Exception:
        error = "INTERNAL_ERROR"
        raise
    finally:
        result_obj: AskResult | None = state.get("result")
        line = _telemetry_line(command, options, state, result_obj, started, error, label)
        telemetry.record(home.root, line)


def _ask(home: Any, options: AskOptions, plugins: Any, warn: Warn, shards: Sequence[Shard] | None,
         given: Sequence[Reader] | None, state: dict[str, Any], started: float) -> AskResult:
    from episteme_core.ask.pool import Pool

    registered = {s.name for s in plugins.all("source")}
    not_registered = sorted(set(options.filter or ()) - registered)
    try:
        all_shards = list(shards) if shards is not None else open_home_shards(home)
    except EpistemeError as exc:
        if exc.code == "STALE_INDEX" and not_registered:
            raise _unknown_sources(not_registered, registered) from exc
        raise
    since = parse_time(options.since) if options.since else None
    if options.filter is not None:
        held = {s.source for s in all_shards}
        unknown = sorted(set(not_registered) - held)
        if unknown:
            raise _unknown_sources(unknown, registered | held)
        missing = sorted(set(options.filter) - held)
        if missing:
            warn("NO_SHARDS", f"no shards hold source(s) {', '.join(missing)}; run episteme ingest")
        all_shards = [s for s in all_shards if s.source in options.filter]
    all_shards.sort(key=lambda s: (s.source, s.name))
    requests: list[ReadRequest] = []
    by_shard: dict[str, dict[str, StoredParagraph]] = {}
    for shard in all_shards:
        found = candidates_of(shard, options, since)
        by_shard[shard.name] = {f"p{i}": p for i, p in enumerate(found, start=1)}
    cover = coverage_function(all_shards, options.question)
    coverages = {
        (name, lab): cover(p.text) for name, found in by_shard.items() for lab, p in found.items()
    }
    best = max(coverages.values(), default=0.0)
    for shard in all_shards:
        labelled = by_shard[shard.name]
        requests.append(ReadRequest(
            question=options.question, shard=shard.name, source=shard.source,
            candidates=tuple(
                Candidate(label=lab, text=p.text, score=p.score, ref=p.ref, time=p.time,
                          coverage=coverages[(shard.name, lab)])
                for lab, p in labelled.items()
            ),
            best_coverage=best,
        ))
    state["requests"] = requests
    readers = list(given) if given is not None else open_readers(home, plugins, options.reader)
    pool = Pool(readers, warn)
    try:
        if any(r.candidates for r in requests):
            pool.prepare(options.question, [r.shard for r in requests if r.candidates])
        reads = pool.read_all(requests)
    finally:
        if given is None:
            pool.close()
    state["reads"] = reads
    state["readers"] = readers
    named: list[Named] = []
    reports: list[ShardReport] = []
    for request, read in zip(requests, reads, strict=True):
        labelled = by_shard[request.shard]
        best = max((p.score for p in labelled.values()), default=0.0) or 1.0
        for rank, lab in enumerate(read.labels):
            p = labelled[lab]
            named.append(Named(p, read.reader, lab, rank, p.score / best, read.scores.get(lab)))
        reports.append(ShardReport(request.shard, request.source, len(request.candidates), len(read.labels),
                                   read.reader, read.fallback, list(read.invented)))
    assembly = assemble(named, options.budget)
    result = AskResult(
        question=options.question,
        filter=list(options.filter) if options.filter is not None else None,
        since=options.since,
        budget=options.budget,
        chars=assembly.chars,
        paragraphs=assembly.paragraphs,
        omitted=assembly.omitted,
        shards=reports,
        readers=[ReaderReport(r.name, r.kind, r.slots, r.name not in pool.unhealthy) for r in readers],
        duration_ms=int((time.monotonic() - started) * 1000),
        ranked=assembly.ranked,
    )
    state["result"] = result
    return result


def _unknown_sources(unknown: list[str], known: set[str]) -> EpistemeError:
    return EpistemeError(
        "INVALID_USAGE",
        f"--filter names unknown source(s): {', '.join(unknown)} (known: {', '.join(sorted(known))})",
        details={"unknown": unknown, "known": sorted(known)},
    )


def _telemetry_line(command: str, options: AskOptions, state: dict[str, Any], result: AskResult | None,
                    started: float, error: str | None, label: str | None) -> Any:
    from episteme_core import telemetry

    shard_lines: list[telemetry.ShardLine] = []
    sources: dict[str, list[int]] = {}
    reads = state.get("reads") or []
    for i, request in enumerate(state.get("requests") or []):
        read = reads[i] if i < len(reads) else None
        out = len(read.labels) if read else 0
        shard_lines.append(telemetry.ShardLine(
            request.shard, request.source, len(request.candidates), out,
            read.reader if read else "none", bool(read and read.fallback),
        ))
        entry = sources.setdefault(request.source, [0, 0, 0, 0])
        entry[0] += 1
        entry[1] += len(request.candidates)
    if result is not None:
        for p in result.paragraphs:
            entry = sources.setdefault(p.source, [0, 0, 0, 0])
            entry[2] += 1
            entry[3] += p.chars
    return telemetry.TelemetryLine(
        time=telemetry.now(),
        command=command,
        question=options.question,
        filter=list(options.filter) if options.filter is not None else None,
        since=options.since,
        duration_ms=int((time.monotonic() - started) * 1000),
        sources=[telemetry.SourceHit(s, *v) for s, v in sorted(sources.items())],
        shards=shard_lines,
        readers=sorted({read.reader for read in reads if read.reader != "none"}),
        fallbacks=sum(1 for line in shard_lines if line.fallback),
        answered=len(result.paragraphs) if result else 0,
        omitted=len(result.omitted) if result else 0,
        ok=error is None,
        error=error,
        label=label,
    )
