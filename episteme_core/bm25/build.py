"""Build one shard's bytes from chunks of one source: analyzer tokens, BM25 scores, sorted vocabulary.

The BM25 score of every (term, chunk) pair is computed with numpy as a CSC matrix, exactly as bm25s
(``BM25(method="lucene")``, float32) computes it: same formula, same order of floating-point
operations, same bytes (``tests/retrieval/test_bm25_scorer.py`` checks them bit for bit against the
installed bm25s). bm25s scores in a Python loop per document; doing it vectorised over the sorted
vocabulary is what keeps ``episteme index`` within a small factor of bm25s itself. Rows are sorted
by chunk id, the vocabulary is sorted (bm25s would build one from a Python set, whose order changes
with PYTHONHASHSEED): equal chunks and parameters give equal bytes.
"""

from __future__ import annotations

import functools
import json
import math
import struct
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from episteme_core.bm25 import lucene, shardfile
from episteme_core.bm25 import rows as stored_rows
from episteme_core.bm25.fields import FACETS, FIELD_DEFAULTS, indexed, unit_tokenizer
from episteme_core.bm25.rows import row_arrays
from episteme_core.bm25.words import LAYOUT, WordSpans, word_arrays
from episteme_core.records.hits import epoch_seconds
from episteme_core.records.trust import NON_PROSE_KINDS
from episteme_core.search.units import RUN_CHARS, SECTION_RUN_CHARS, plan_units
from episteme_core.text.analyzer import DEFAULT_LANGUAGE, analyzer_params, stemmer

BM25_DEFAULTS: dict[str, Any] = {"k1": 1.5, "b": 0.75, "method": "lucene"}
T = TypeVar("T")


# The bm25s release whose lucene scores ours equal bit for bit (recorded in each shard's meta).
BM25S_COMPATIBLE = "0.3.16"


class TermLimit(Exception):
    """The distinct tokens of a shard's units passed ``max_terms`` at unit ``unit`` (0-based): the
    units before it stay within the limit."""

    def __init__(self, unit: int) -> None:
        super().__init__(f"more distinct tokens than the limit at unit {unit}")
        self.unit = unit


def bm25_matrix(token_lists: Iterable[list[str]], params: dict[str, Any],
                term_of: Callable[[str], str] | None = None,
                max_terms: int | None = None) -> tuple[list[str], Any, Any, Any]:
    """The sorted vocabulary and the CSC arrays (data f4, rows u4, starts i8) of BM25 lucene scores
    (``bm25_arrays`` without the term counts and lengths)."""
    return bm25_arrays(token_lists, params, term_of, max_terms)[:4]


def bm25_arrays(token_lists: Iterable[list[str]], params: dict[str, Any],
                term_of: Callable[[str], str] | None = None,
                max_terms: int | None = None,
                token_terms: Callable[[Any, int], None] | None = None,
                ) -> tuple[list[str], Any, Any, Any, Any, Any]:
    """The sorted vocabulary, the CSC arrays (data f4, rows u4, starts i8) of BM25 lucene scores, each
    pair's term count (i4) and each row's length (i8): a query over a collection whose statistics
    differ from this matrix's scores the pairs again from the last two (``lucene``).

    Equal to bm25s's ``BM25(k1, b, method="lucene").index(...)`` over the same vocabulary: idf
    ``log(1 + (N - df + 0.5) / (df + 0.5))`` rounded to float32, times ``tf / (k1 * ((1 - b) + b *
    dl / avgdl) + tf)`` in float64, rounded to float32; per term, rows ascending. ``term_of`` maps
    each token to its term (a stemmer, applied once per distinct token): the result is that of the
    mapped token lists.

    ``token_lists`` may be a generator: each list is turned into token numbers as it comes and let
    go, so memory holds one string per distinct token and four bytes per token, not every token's
    string (a shard of a million distinct words stays within a few hundred megabytes).
    ``max_terms``: raise ``TermLimit`` as soon as the distinct tokens pass it (the caller splits).
    ``token_terms``: called once with every token's term id (its place in the vocabulary, a numpy
    array in the order the tokens came) and the vocabulary's size, before the array is reused.
    """
    import array
    import collections
    import itertools

    import numpy as np

    # distinct token -> its number, in order of first sight: a token not yet seen gets the next
    # number from ``__missing__``, so numbering a list is one C-level map. (A counter, not the dict's
    # own ``__len__``: that would make a reference cycle, kept until the cycle collector runs.)
    numbers: collections.defaultdict[str, int] = collections.defaultdict(itertools.count().__next__)
    flat = array.array("I")
    length_list = array.array("q")
    for tokens in token_lists:
        length_list.append(len(tokens))
        flat.extend(map(numbers.__getitem__, tokens))
        if max_terms is not None and len(numbers) > max_terms:
            raise TermLimit(len(length_list) - 1)
    n = len(length_list)
    if not flat:
        return ([], np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.uint32), np.zeros(1, dtype=np.int64),
                np.zeros(0, dtype=np.int32), np.frombuffer(length_list, dtype=np.int64))
    distinct = list(numbers)  # token strings by number
    del numbers
    if term_of is not None:
        # a term equal to its token is the token's own string: no second copy
        distinct = [token if term == token else term for token in distinct for term in (term_of(token),)]
    vocab = sorted(set(distinct))
    position = dict(zip(vocab, range(len(vocab)), strict=True))
    # (term, row) keys, term * n + row: one number per token, built in place; four bytes each
    # where every key fits (they sort faster and take half the memory), else eight
    key_type = np.uint32 if len(vocab) * n <= 0xFFFFFFFF else np.int64
    remap = np.fromiter(map(position.__getitem__, distinct), dtype=key_type, count=len(distinct))
    del position, distinct
    keys: Any = remap[np.frombuffer(flat, dtype=np.uint32)]
    del flat, remap
    if token_terms is not None:
        token_terms(keys, len(vocab))
    keys *= n
    lengths = np.frombuffer(length_list, dtype=np.int64)
    ends = np.cumsum(lengths)  # where each row's tokens end in ``keys``
    for low in range(0, n, _STEP_ROWS):  # + each token's row, a bounded slice of rows at a time
        high = min(n, low + _STEP_ROWS)
        at = int(ends[low - 1]) if low else 0
        keys[at : int(ends[high - 1])] += np.repeat(np.arange(low, high, dtype=key_type), lengths[low:high])
    del ends
    # (term, row) pairs sorted by term then row, with their counts: the CSC order bm25s produces.
    keys.sort()
    first = np.empty(keys.size, dtype=bool)
    first[:1] = True
    np.not_equal(keys[1:], keys[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    del first
    tf = np.diff(starts, append=keys.size).astype(np.int32)  # a pair's count; float64 where it is used
    keys = keys[starts]
    del starts
    cols, rows = np.divmod(keys, n)
    del keys
    rows = rows.astype(np.uint32, copy=False)
    # pairs are sorted by term: where each term's pairs start, found in place (no count array of
    # the pairs' terms as int64, which ``bincount`` would make of four-byte keys)
    indptr = np.searchsorted(cols, np.arange(len(vocab) + 1), side="left").astype(np.int64, copy=False)
    df = np.diff(indptr)
    # idf by math.log (as bm25s), once per distinct document frequency, rounded to float32
    df_values, inverse = np.unique(df, return_inverse=True)
    idf = np.array([math.log(1 + (n - d + 0.5) / (d + 0.5)) for d in df_values.tolist()], dtype=np.float32)
    pair_idf = idf[inverse][cols]
    del cols, df, inverse
    avg = lengths.mean()  # bm25s: np.array(lengths).mean(), a float64 scalar
    norm = lucene.norms_numpy(lengths, avg, params)
    # idf * (tf / (norm + tf)) in float64, rounded to float32: the same operations on the same
    # values as one vectorised expression, a slice at a time (its float64 temporaries stay small)
    scores = np.empty(tf.size, dtype=np.float32)
    for low in range(0, tf.size, _STEP_PAIRS):
        high = low + _STEP_PAIRS
        scores[low:high] = lucene.scores_numpy(tf[low:high], norm[rows[low:high]], pair_idf[low:high])
    return vocab, scores, rows, indptr, tf, lengths


# How many rows, (term, row) pairs a step of ``bm25_matrix`` takes: its temporaries stay a few MB.
_STEP_ROWS = 1 << 16
_STEP_PAIRS = 1 << 20


def bm25_scores(
    token_lists: list[list[str]], vocab: list[str], params: dict[str, Any]
) -> tuple[bytes, bytes, bytes]:
    """The CSC arrays (data f4, indices u4, indptr u8) over ``vocab`` as little-endian bytes.

    ``vocab`` must be the sorted vocabulary of ``token_lists`` (``analyzer.vocabulary``).
    """

    built, data, rows, indptr = bm25_matrix(token_lists, params)
    if built != vocab:
        raise ValueError("vocab must be the sorted vocabulary of token_lists")
    return (
        data.astype("<f4").tobytes(), rows.astype("<u4").tobytes(), indptr.astype("<u8").tobytes()
    )


def _facet_table(values: list[Any]) -> list[Any]:
    """The distinct values of a facet in the shard's order: None first, then by their text."""
    return sorted(set(values), key=lambda v: (v is not None, "" if v is None else str(v)))


def build_shard(rows: list[dict[str, Any]], **options: Any) -> bytes:
    """The bytes of a shard over ``rows``: ``build_shard_pieces`` joined (its options)."""
    return b"".join(build_shard_pieces(rows, **options))


def build_shard_pieces(
    rows: list[dict[str, Any]], *, source: str, name: str, params: dict[str, Any],
    built_from: dict[str, Any], row_bytes: list[bytes] | None = None,
    fields: dict[str, int] | None = None, run_chars: int = RUN_CHARS,
    section_run_chars: int = SECTION_RUN_CHARS,
    inputs: list[tuple[str, str]] | None = None, row_inputs: list[int] | None = None,
    max_terms: int | None = None, release_rows: bool = False,
) -> list[bytes]:
    """The bytes of a shard over ``rows`` (chunk JSON objects of one source, sorted by id), as the
    pieces they are made of (the header first), never joined: the writer streams them to the file.

    Scored units are runs of consecutive chunks of a record or a section (``runs.plan_units``); each
    unit's terms are its fields with ``fields`` weights (``fields.unit_tokens``). Times and facets
    stay per chunk: a unit matches a filter when one of its chunks does. ``row_bytes``,
    when given, are the canonical JSON bytes of ``rows`` (as the chunks stage stores them, so they
    need not be encoded again); else they are encoded here. ``inputs`` are the chunks objects the
    rows came from, as (stage key, object sha256), and ``row_inputs`` each row's input: the indexer
    keeps a row only while its object is committed unchanged (``input_table``).

    ``max_terms``: past that many distinct tokens, raise ``RowLimit`` naming how many leading rows
    stay within it (``split_rows`` builds those rows and the rest as shards of their own).
    ``release_rows``: empty the list ``rows`` once its tokens are counted (never before a
    ``RowLimit``), so that a caller holding no other reference to them frees the chunks' text
    before the shard is assembled.
    """
    import numpy as np

    weights = dict(FIELD_DEFAULTS if fields is None else fields)
    if any(row["sourceKind"] != source for row in rows):
        raise ValueError(f"shard {name}: every chunk must be of source {source}")
    ids = [row["id"] for row in rows]
    if ids != sorted(ids) or len(set(ids)) != len(ids):
        raise ValueError(f"shard {name}: rows must be sorted by unique chunk id")
    if row_bytes is None:
        row_bytes = [
            json.dumps(row, sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                       allow_nan=False).encode()
            for row in rows
        ]
    elif len(row_bytes) != len(rows):
        raise ValueError(f"shard {name}: one row_bytes item per row")
    views = [row if "partIndex" in row else indexed(row) for row in rows]
    units = plan_units(views, run_chars, section_run_chars)
    languages = sorted({view["language"] for view in views}) or [DEFAULT_LANGUAGE]
    # one language: stem each distinct word once, where the vocabulary is built
    single = len(languages) == 1
    labels: dict[tuple[str, str], list[str]] = {}
    tokens_of = unit_tokenizer(weights, stem=not single, labels=labels)
    # one language: each row's words, analysed as its tokens are, give the ``words`` section too
    spans = WordSpans(len(views)) if single and weights.get("body", 1) >= 1 else None
    token_lists = _unit_tokens(units, views, tokens_of, spans)  # one unit at a time, as taken
    try:
        vocab, data, indices, indptr, tf, lengths = bm25_arrays(
            token_lists, params, stemmer(languages[0]) if single else None, max_terms,
            spans.take if spans is not None else None)
    except TermLimit as hit:
        raise RowLimit(units[hit.unit][0]) from None  # units are sorted by their first row
    del labels
    count = len(rows)
    times = struct.pack(f"<{count}d", *(epoch_seconds(r.get("time")) for r in views))
    facets: dict[str, list[Any]] = {}
    facet_codes: dict[str, bytes] = {}
    for field in FACETS:  # each row's value read once: the table of values, then its codes
        values = [r.get(field) for r in views]
        facets[field] = table = _facet_table(values)
        codes = {value: code for code, value in enumerate(table)}
        facet_codes[field] = struct.pack(f"<{count}H", *map(codes.__getitem__, values))
        del values
    arrays_of_words: dict[str, tuple[str, bytes]] = {}
    if single:  # what a query's rerank reads instead of the rows' text (``bm25.words``)
        gathered = spans.arrays(views) if spans is not None else None
        arrays_of_words = gathered if gathered is not None else word_arrays(views, languages[0], vocab)
    del spans
    flags = [view.get("paragraphKind") in NON_PROSE_KINDS for view in views]
    del views, token_lists
    if release_rows:
        rows.clear()
        trim_heap()  # the text just freed lies in small blocks: give their pages back before assembly
    terms = len(vocab)
    # the vocabulary's UTF-8 bytes and offsets without a bytes object per term
    offsets = np.zeros(terms + 1, dtype="<u8")
    np.cumsum(np.fromiter((len(term.encode("utf-8")) for term in vocab), dtype=np.int64, count=terms),
              out=offsets[1:])
    vocab_bytes = "".join(vocab).encode("utf-8")
    del vocab
    arrays: dict[str, tuple[str, bytes | list[bytes]]] = {
        "ids": ("u1", bytes.fromhex("".join(ids))),
        "vocabOffsets": ("u8", offsets.tobytes()),
        "vocabBytes": ("u1", vocab_bytes),
        "postingsData": ("f4", data.astype("<f4").tobytes()),
        "postingsRows": ("u4", indices.astype("<u4").tobytes()),
        "postingsStart": ("u8", indptr.astype("<u8").tobytes()),
        # each pair's term count and each unit's length: a query over a collection other than this
        # shard alone (more shards, deleted rows) scores the pairs again with its statistics
        "postingsTf": _smallest_unsigned(tf),
        "unitLengths": _smallest_unsigned(lengths),
        # the rows, each deflated against a dictionary of them (``bm25.rows``): joined once, into the shard
        **row_arrays(row_bytes),
        "times": ("f8", times),
        **arrays_of_words,
    }
    if any(len(unit) != 1 or unit[0] != number for number, unit in enumerate(units)):
        starts = np.zeros(len(units) + 1, dtype="<u8")
        np.cumsum(np.fromiter(map(len, units), dtype=np.int64, count=len(units)), out=starts[1:])
        arrays["unitStart"] = ("u8", starts.tobytes())
        arrays["unitRows"] = ("u4", struct.pack(f"<{int(starts[-1])}I", *(r for unit in units for r in unit)))
    if inputs is not None:
        if row_inputs is None or len(row_inputs) != count or any(
                not 0 <= i < len(inputs) for i in row_inputs):
            raise ValueError(f"shard {name}: one input per row, each naming one of the inputs")
        keys = [key.encode("utf-8") for key, _ in inputs]
        key_offsets = np.zeros(len(keys) + 1, dtype="<u8")
        np.cumsum(np.fromiter(map(len, keys), dtype=np.int64, count=len(keys)), out=key_offsets[1:])
        arrays["inputKeyOffsets"] = ("u8", key_offsets.tobytes())
        arrays["inputKeyBytes"] = ("u1", b"".join(keys))
        arrays["inputSha256"] = ("u1", bytes.fromhex("".join(sha for _, sha in inputs)))
        arrays["rowInputs"] = ("u4", struct.pack(f"<{count}I", *row_inputs))
    for field in FACETS:
        arrays[f"facet.{field}"] = ("u2", facet_codes[field])
    meta = {
        "name": name,
        "source": source,
        "rows": count,
        "units": len(units),
        "unitTokens": int(lengths.sum()),
        "runs": sum(1 for unit in units if len(unit) > 1),
        "terms": terms,
        "analyzer": analyzer_params(),
        "languages": languages,
        "bm25": dict(params),
        "bm25s": BM25S_COMPATIBLE if terms else None,
        "fields": weights,
        "runChars": {"records": run_chars, "sections": section_run_chars},
        "facets": facets,
        "builtFrom": built_from,
        "layout": LAYOUT,
        "rowCodec": stored_rows.codec(),
        "nonProseRows": sum(flags),
    }
    return shardfile.encode_pieces(meta, arrays)


def _unit_tokens(units: list[tuple[int, ...]], views: list[dict[str, Any]],
                 tokens_of: Callable[..., list[str]], spans: WordSpans | None) -> Iterator[list[str]]:
    """Each unit's tokens in turn; where ``spans`` is given, each row's words are recorded in it."""
    for unit in units:
        rows = [views[r] for r in unit]
        if spans is None:
            yield tokens_of(rows)
            continue
        found: list[tuple[int, int]] = []
        tokens = tokens_of(rows, found)
        spans.record(unit, found, len(tokens))
        yield tokens


def _smallest_unsigned(values: Any) -> tuple[str, bytes]:
    """``values`` (non-negative integers) as the narrowest of u2, u4, u8 that holds them all."""
    top = int(values.max()) if values.size else 0
    kind = "u2" if top <= 0xFFFF else "u4" if top <= 0xFFFFFFFF else "u8"
    return kind, values.astype(f"<{kind}").tobytes()


def trim_heap() -> None:
    """Return the free pages of the C heap to the system (glibc ``malloc_trim``; elsewhere nothing).

    Freed Python objects leave their memory in the process's heap, where a large new buffer (a
    shard being assembled) cannot reuse it: without this, a build's peak is what it freed plus
    what it allocates next."""
    function = _malloc_trim()
    if function is not None:
        function(0)


@functools.cache
def _malloc_trim() -> Any:
    import ctypes
    import sys

    if not sys.platform.startswith("linux"):
        return None
    try:  # the process's own symbols, as ``store.atomic`` finds syncfs (no ldconfig child)
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None


class RowLimit(Exception):
    """A shard's rows hold more distinct tokens than its build allows; the first ``rows`` do not."""

    def __init__(self, rows: int) -> None:
        super().__init__(f"more distinct tokens than the limit past row {rows}")
        self.rows = rows


def split_rows(count: int, build: Callable[[int, int, int, int | None], T], max_terms: int | None) -> list[T]:
    """Rows ``[0, count)`` as the fewest shards, in row order, whose builds stay within ``max_terms``
    distinct tokens: ``build(part, start, stop, max_terms)`` makes shard number ``part`` of rows
    ``[start, stop)`` or raises ``RowLimit``. Rows that never pass the limit are built once, as the
    one shard they always made; a single row is built whatever it holds."""
    parts: list[T] = []
    start = 0
    while start < count:
        stop = count
        while True:
            limit = max_terms if stop - start > 1 else None
            try:
                parts.append(build(len(parts), start, stop, limit))
                break
            except RowLimit as hit:
                stop = start + max(1, hit.rows)
        start = stop
    return parts


def input_table(file: shardfile.ShardFile) -> tuple[list[tuple[str, str]], Any] | None:
    """The chunks objects a shard was built from, as (stage key, object sha256), and each row's input
    (a numpy array); None for a shard built before shards recorded them."""
    import numpy as np

    if "rowInputs" not in file.arrays:
        return None
    count = file.count("inputKeyOffsets") - 1
    offsets = file.slice("inputKeyOffsets", 0, count + 1)
    keys = file.raw("inputKeyBytes", 0, file.count("inputKeyBytes"))
    shas = file.raw("inputSha256", 0, 32 * count).hex()
    inputs = [(keys[offsets[i]:offsets[i + 1]].decode("utf-8"), shas[64 * i : 64 * i + 64])
              for i in range(count)]
    rows = file.count("rowInputs")
    return inputs, np.asarray(file.numpy("rowInputs", 0, rows), dtype=np.int64)


def header_of(data: bytes) -> dict[str, Any]:
    """The JSON header of shard bytes ``data`` (what a worker reports of the shard it wrote)."""
    (length,) = struct.unpack_from("<Q", data, len(shardfile.MAGIC))
    header: dict[str, Any] = json.loads(data[len(shardfile.MAGIC) + 8 : len(shardfile.MAGIC) + 8 + length])
    return header
