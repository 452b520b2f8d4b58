"""``ask`` as a library function: candidates from BM25 per shard, readers name, the answer is built.

The same function serves ``episteme ask``, ``episteme eval`` and the MCP server (``command`` says
which, for telemetry). Shards come from the home's indexer (``episteme_core.search.indexers.open_index``),
or are handed in: the server's open set, or, from tests and laws, any objects with ``name``,
``source``, ``search(text, k, filters)`` and ``chunk(chunk_id)``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from episteme_core.ask.answer import (
    FIRST_PASSAGE_SHARE,
    AnswerParagraph,
    Named,
    Omitted,
    assemble,
    parse_time,
    shown,
)
from episteme_core.ask.candidates import (
    EXCLUDE,
    INCLUDE,
    OFFER,
    CandidatePassage,
    Shard,
    candidates_of,
    coverage_function,
    idf_over,
)
from episteme_core.errors import EpistemeError
from episteme_core.kernel.contracts import Reader
from episteme_core.kernel.defaults import DEFAULT_BUDGET, DEFAULT_CANDIDATES
from episteme_core.records.reading import Candidate, ReaderSpec, ReadRequest

MAX_QUESTION_CHARS = 4_000
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
Warn = Callable[..., None]


@attrs.frozen
class AskOptions:
    """One question and how to answer it."""

    question: str
    filter: tuple[str, ...] | None = None
    since: str | None = None
    reader: str | None = None
    budget: int = DEFAULT_BUDGET
    candidates: int = DEFAULT_CANDIDATES
    include_marked: bool = False  # also thinking, tool calls, summaries, a book's contents
    exclude_marked: bool = False  # prose only: tool output left out too
    indexer: str | None = None  # the indexer that opens the shards (default: config.json's, else bm25)


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
def open_home_shards(home: Any, plugins: Any = None, indexer: str | None = None,
                     warn: Warn | None = None) -> Any:
    """The home's shards (a ``SearchableShards`` set), opened by its indexer; missing or stale ones
    are refused (``STALE_INDEX``: run episteme ingest). An answer from the last commit while a writer
    is at work is reported through ``warn`` (``INDEX_UPDATING``)."""
    from episteme_core.search.indexers import open_index, warn_in_flight

    if plugins is None:
        from episteme_core.kernel.loader import get_plugins

        plugins = get_plugins()
    try:
        shard_set = open_index(home, plugins, indexer)
        warn_in_flight(shard_set, warn)
    except EpistemeError as exc:
        from episteme_core.stages.shards import STALE_HINT

        if exc.code != "STALE_INDEX" or exc.hint != STALE_HINT:  # another indexer's: its own command
            raise
        raise EpistemeError(
            "STALE_INDEX", f"{exc.message}; run episteme ingest", details=exc.details,
            hint="run episteme ingest (or episteme index) so that ask answers from current evidence",
        ) from exc
    return shard_set


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


def _languages(shards: Sequence[Shard]) -> list[str]:
    return sorted({lang for s in shards for lang in getattr(s, "languages", ["english"])})


def _terms(shards: Sequence[Shard], question: str, terms_of: Callable[[str], list[str]] | None) -> list[str]:
    """The question's terms: as the shards' indexer analyzes them (``terms_of``, the opened set's),
    else as the kernel's analyzer does in every language of the shards."""
    if terms_of is not None:
        return terms_of(question)
    from episteme_core.text.analyzer import query_terms_for

    return query_terms_for(question, _languages(shards))


def _idf(shards: Sequence[Shard], terms: Sequence[str], question: str) -> dict[str, float] | None:
    """The question's terms' idf over all the shards asked (their scores then compare), each times
    its weight as ``query`` weighs it (``analyzer.query_term_weights``: a term that only an identifier
    adds, the parts of ``JavaScript`` or the whole of ``64-bit``, weighs half of a word); None for
    one shard when no weight differs from 1 (its scores as stored).

    Measured on the dev set: without the weights ask ranked a passage that says ``JavaScript`` once
    above the one that answers in the question's other words; with them it holds the answer for
    0.766 of the questions against 0.740 (the even half unchanged, the odd 0.744 -> 0.795)."""
    from episteme_core.text.analyzer import query_term_weights

    weights = {term: weight for term, weight in query_term_weights(question, _languages(shards)).items()
               if weight != 1.0 and term in terms}
    if len(shards) < 2 and not weights:
        return None
    over = idf_over(shards, terms)
    if over is None:
        return None
    return {term: value * weights.get(term, 1.0) for term, value in over.items()}


def shard_candidates(shard: Any, question: str, wanted: int, since: str | None, marked: str,
                     idf: dict[str, float] | None, terms: list[str] | None,
                     collection: Any = None, wide: int | None = None) -> list[CandidatePassage]:
    """``candidates_of`` with positional arguments: what a worker runs for each shard it holds."""
    return candidates_of(shard, question, wanted, since=since, marked=marked, idf=idf, terms=terms,
                         collection=collection, wide=wide)


def _collection(opened: Any, terms: Sequence[str], shards: Sequence[Shard]) -> Any:
    """The statistics the shard set scores its shards against as one index (``rank_options``'s
    ``collection``: live units, tokens, document frequencies), so that ``ask`` ranks as ``query``
    does and a home re-run incrementally answers as a fresh one; None where the set has none."""
    options = getattr(opened, "rank_options", None)
    if not callable(options) or len(shards) < 2:
        return None
    return options(terms, shards).get("collection")


def marked_policy(options: AskOptions) -> str:
    """What ``ask`` offers of marked paragraphs (``candidates.is_offered``); both flags at once is
    ``INVALID_USAGE``."""
    if options.include_marked and options.exclude_marked:
        raise EpistemeError("INVALID_USAGE", "--include-marked and --exclude-marked contradict each other",
                            hint="give one of them (default: prose and tool output)")
    return INCLUDE if options.include_marked else EXCLUDE if options.exclude_marked else OFFER


# -- the question -----------------------------------------------------------------------------------
def ask(
    home: Any,
    options: AskOptions,
    *,
    plugins: Any,
    warn: Warn,
    shards: Sequence[Shard] | Any | None = None,
    command: str = "ask",
    label: str | None = None,
    readers: Sequence[Reader] | None = None,
) -> AskResult:
    """Answer one question with the home's shards (or ``shards``: an opened ``SearchableShards`` set,
    or a list of shards); one telemetry line per call.

    ``readers`` (opened readers) replaces the configured pool: for tests, laws and embedding code."""
    from episteme_core.ask import telemetry

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


def _ask(home: Any, options: AskOptions, plugins: Any, warn: Warn, shards: Sequence[Shard] | Any | None,
         given: Sequence[Reader] | None, state: dict[str, Any], started: float) -> AskResult:
    from episteme_core.ask.pool import Pool

    marked = marked_policy(options)
    registered = {s.name for s in plugins.all("source")}
    not_registered = sorted(set(options.filter or ()) - registered)
    try:
        opened = shards if shards is not None else open_home_shards(home, plugins, options.indexer, warn)
        terms_of = getattr(opened, "terms", None) if hasattr(opened, "shards") else None
        all_shards = list(opened.shards if hasattr(opened, "shards") else opened)
    except EpistemeError as exc:
        if exc.code == "STALE_INDEX" and not_registered:
            raise _unknown_sources(not_registered, registered) from exc
        raise
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
    by_shard: dict[str, dict[str, CandidatePassage]] = {}
    terms = _terms(all_shards, options.question, terms_of)
    idf = _idf(all_shards, terms, options.question)
    collection = _collection(opened, terms, all_shards)
    wide = int(options.budget * FIRST_PASSAGE_SHARE)  # what the passage named first may show
    fan = getattr(opened, "executor", None)  # shards fanned out to Dask workers (--executor dask://)
    asked = (fan.ask_shards(all_shards, shard_candidates, options.question, options.candidates,
                            options.since, marked, idf, terms, collection, wide) if fan is not None
             else [shard_candidates(shard, options.question, options.candidates, options.since,
                                    marked, idf, terms, collection, wide) for shard in all_shards])
    for shard, found in zip(all_shards, asked, strict=True):
        by_shard[shard.name] = {f"p{i}": p for i, p in enumerate(found, start=1)}
    cover = coverage_function(all_shards, options.question)
    coverages = {
        (name, lab): cover(p.text) for name, found in by_shard.items() for lab, p in found.items()
    }
    best = max(coverages.values(), default=0.0)
    best_score = max((p.score for found in by_shard.values() for p in found.values()), default=0.0)
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
            best_score=best_score,
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
    places = merged_places([[by_shard[request.shard][lab].score for lab in read.labels]
                            for request, read in zip(requests, reads, strict=True)])
    for request, read, place in zip(requests, reads, places, strict=True):
        labelled = by_shard[request.shard]
        best = max((p.score for p in labelled.values()), default=0.0) or 1.0
        for rank, lab in enumerate(read.labels):
            passage = labelled[lab]
            for position, paragraph in enumerate(shown(passage.paragraphs, place[rank], options.budget,
                                                       passage.wide)):
                named.append(Named(paragraph, read.reader, lab, place[rank], passage.score / best,
                                   read.scores.get(lab), position=position))
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


def merged_places(lists: Sequence[Sequence[float]]) -> list[list[int]]:
    """The place of each named passage in one order over all shards: each shard's passages in the
    order its reader named them, the shards merged by score (the next place goes to the shard whose
    next passage scores highest; scores compare across shards, one idf over them all; ties to the
    shard listed first). For the bm25 reader this is one list by score."""
    heads = [0] * len(lists)
    places: list[list[int]] = [[0] * len(scores) for scores in lists]
    for place in range(sum(len(scores) for scores in lists)):
        shard = max((i for i in range(len(lists)) if heads[i] < len(lists[i])),
                    key=lambda i: (lists[i][heads[i]], -i))
        places[shard][heads[shard]] = place
        heads[shard] += 1
    return places


def _unknown_sources(unknown: list[str], known: set[str]) -> EpistemeError:
    return EpistemeError(
        "INVALID_USAGE",
        f"--filter names unknown source(s): {', '.join(unknown)} (known: {', '.join(sorted(known))})",
        details={"unknown": unknown, "known": sorted(known)},
    )


def _telemetry_line(command: str, options: AskOptions, state: dict[str, Any], result: AskResult | None,
                    started: float, error: str | None, label: str | None) -> Any:
    from episteme_core.ask import telemetry

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
