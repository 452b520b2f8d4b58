"""Build one shard's bytes from chunks of one source: analyzer tokens, bm25s scores, sorted vocabulary.

bm25s computes the BM25 score of every (term, chunk) pair as a CSC matrix; we hand it our own
sorted vocabulary (bm25s would build one from a Python set, whose order changes with
PYTHONHASHSEED), rows sorted by chunk id, and write the arrays into a shard file. Equal chunks and
parameters give equal bytes.
"""

from __future__ import annotations

import json
import math
import struct
from datetime import datetime
from typing import Any

from episteme_core.index import shardfile
from episteme_core.index.analyzer import analyzer_params, document_tokens, vocabulary

BM25_DEFAULTS: dict[str, Any] = {"k1": 1.5, "b": 0.75, "method": "lucene", "headingWeight": 2}
FACETS = ("family", "authority", "documentType", "normativity")


def epoch_seconds(value: str | None) -> float:
    """An ISO 8601 time as seconds since the epoch (UTC when no offset); NaN when absent or bad."""
    if not value:
        return math.nan
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return math.nan
    if moment.tzinfo is None:
        from datetime import UTC

        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def bm25_scores(
    token_lists: list[list[str]], vocab: list[str], params: dict[str, Any]
) -> tuple[bytes, bytes, bytes]:
    """bm25s's CSC arrays (data f4, indices u4, indptr u8) over ``vocab`` as little-endian bytes."""
    import bm25s
    import numpy as np

    ids = {term: i for i, term in enumerate(vocab)}
    lookup = ids.__getitem__
    corpus = [list(map(lookup, tokens)) for tokens in token_lists]
    retriever = bm25s.BM25(
        k1=params["k1"], b=params["b"], method=params["method"], backend="numpy", csc_backend="numpy"
    )
    retriever.index((corpus, ids), create_empty_token=False, show_progress=False)
    scores = retriever.scores
    data = np.ascontiguousarray(scores["data"], dtype="<f4").tobytes()
    indices = np.ascontiguousarray(scores["indices"], dtype="<u4").tobytes()
    indptr = np.ascontiguousarray(scores["indptr"], dtype="<u8").tobytes()
    return data, indices, indptr


def _facet_table(rows: list[dict[str, Any]], field: str) -> list[Any]:
    values = {row.get(field) for row in rows}
    return sorted(values, key=lambda v: (v is not None, "" if v is None else str(v)))


def build_shard(
    rows: list[dict[str, Any]], *, source: str, name: str, params: dict[str, Any],
    built_from: dict[str, Any],
) -> bytes:
    """The bytes of a shard over ``rows`` (chunk JSON objects of one source, sorted by id)."""
    if any(row["sourceKind"] != source for row in rows):
        raise ValueError(f"shard {name}: every chunk must be of source {source}")
    ids = [row["id"] for row in rows]
    if ids != sorted(ids) or len(set(ids)) != len(ids):
        raise ValueError(f"shard {name}: rows must be sorted by unique chunk id")
    weight = int(params["headingWeight"])
    token_lists = [document_tokens(row.get("heading"), row["text"], weight) for row in rows]
    vocab = vocabulary(token_lists)
    if vocab:
        data, indices, indptr = bm25_scores(token_lists, vocab, params)
    else:
        data, indices, indptr = b"", b"", struct.pack("<Q", 0)
    encoded = [term.encode("utf-8") for term in vocab]
    offsets = [0]
    for term in encoded:
        offsets.append(offsets[-1] + len(term))
    row_bytes = [
        json.dumps(row, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
        for row in rows
    ]
    row_offsets = [0]
    for item in row_bytes:
        row_offsets.append(row_offsets[-1] + len(item))
    facets = {field: _facet_table(rows, field) for field in FACETS}
    arrays: dict[str, tuple[str, bytes]] = {
        "ids": ("u1", b"".join(bytes.fromhex(i) for i in ids)),
        "vocabOffsets": ("u8", struct.pack(f"<{len(offsets)}Q", *offsets)),
        "vocabBytes": ("u1", b"".join(encoded)),
        "postingsData": ("f4", data),
        "postingsRows": ("u4", indices),
        "postingsStart": ("u8", indptr),
        "rowOffsets": ("u8", struct.pack(f"<{len(row_offsets)}Q", *row_offsets)),
        "rowBytes": ("u1", b"".join(row_bytes)),
        "times": ("f8", struct.pack(f"<{len(rows)}d", *(epoch_seconds(r.get("time")) for r in rows))),
    }
    for field in FACETS:
        codes = {value: code for code, value in enumerate(facets[field])}
        arrays[f"facet.{field}"] = ("u2", struct.pack(f"<{len(rows)}H", *(codes[r.get(field)] for r in rows)))
    import bm25s

    meta = {
        "name": name,
        "source": source,
        "rows": len(rows),
        "terms": len(vocab),
        "analyzer": analyzer_params(),
        "bm25": dict(params),
        "bm25s": bm25s.__version__ if vocab else None,
        "facets": facets,
        "builtFrom": built_from,
    }
    return shardfile.encode(meta, arrays)
