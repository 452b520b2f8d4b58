"""The ``onnx`` reader: a local sentence-embedding model that re-scores a shard's candidates.

It embeds the question and each candidate the bm25 reader would name (by default one window per
candidate, its first ``max_tokens`` tokens; with ``windows: "paragraphs"`` one per paragraph, the best
counting), and names them by ``(1 - weight) · bm25 / best + weight · cosine``
(``episteme_onnx.fusion``), so a model that knows nothing leaves BM25's answer as it is. It stores
nothing: every vector is computed for the question and dropped. The model loads on the first
``health`` or ``read`` (not at ``open``), once per process; a model that cannot load makes the
reader unhealthy, with the reason, and the pool lets bm25 answer.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from episteme_core.api import BaseReader, EpistemeError, ReadError, ReaderSpec, ReadReply, ReadRequest
from episteme_onnx import fusion
from episteme_onnx.options import OnnxOptions, OptionError, parse_options

if TYPE_CHECKING:
    from episteme_onnx.model import Embedder


class OnnxReader(BaseReader):
    """A reader over a shared, lazily loaded embedding model; ``read`` may run on several threads."""

    kind = "onnx"

    def __init__(self, spec: ReaderSpec, options: OnnxOptions) -> None:
        super().__init__(spec)
        self.options = options
        self.closed = False

    def embedder(self) -> Embedder:
        """The loaded model (from the process's cache, else loaded now); ReadError saying why not."""
        from episteme_onnx.model import LoadError, shared_embedder

        if self.closed:
            raise ReadError(f"reader {self.name!r} (onnx) is closed")
        try:
            return shared_embedder(self.options.model, self.options.threads)
        except LoadError as exc:
            raise ReadError(f"reader {self.name!r} (onnx): {exc}") from exc

    def describe(self) -> dict[str, Any]:
        """The model and settings, for ``reader check``, ``doctor`` and logs (loads the model)."""
        embedder = self.embedder()
        options = self.options
        return {"name": self.name, "kind": self.kind, "model": options.model,
                "modelFile": str(embedder.files.model), "tokenizerFile": str(embedder.files.tokenizer),
                "inputs": list(embedder.inputs), "output": embedder.output, "dimension": embedder.dimension,
                "threads": options.threads, "maxTokens": options.max_tokens, "batchSize": options.batch_size,
                "windows": options.windows,
                "weight": options.weight, "top": options.top, "slots": self.slots}

    def health(self) -> None:
        self.embedder()

    def read(self, request: ReadRequest) -> ReadReply:
        from episteme_onnx.model import DeadlineExceeded
        from episteme_onnx.rerank import passage_similarities

        deadline = time.monotonic() + self.timeout
        options = self.options
        chosen = fusion.eligible(request, ratio=options.ratio, min_score=options.min_score,
                                 score_ratio=options.score_ratio)
        if not chosen:
            return ReadReply(labels=(), scores={})
        embedder = self.embedder()
        try:
            found = passage_similarities(
                embedder, request.question, [c.text for c in chosen], max_tokens=options.max_tokens,
                batch_size=options.batch_size, windows=options.windows, query_prefix=options.query_prefix,
                passage_prefix=options.passage_prefix, deadline=deadline)
        except DeadlineExceeded:
            raise ReadError(f"timed out after {self.timeout:g} s") from None
        except Exception as exc:  # onnxruntime's own errors: a failed read, retried then bm25
            raise ReadError(f"reader {self.name!r} (onnx): embedding failed: {exc}") from exc
        similarity = dict(zip((c.label for c in chosen), found, strict=True))
        named = fusion.fuse(request, similarity, weight=options.weight, top=options.top,
                            ratio=options.ratio, min_score=options.min_score, score_ratio=options.score_ratio)
        return ReadReply(labels=tuple(f.label for f in named), scores={f.label: f.fused for f in named})

    def close(self) -> None:
        """Mark the reader closed; the model stays in the process's cache for the next question."""
        self.closed = True


def options_of(spec: ReaderSpec) -> OnnxOptions:
    """The options of a reader entry; INVALID_INPUT naming the reader and the key on any problem."""
    try:
        return parse_options(spec.options)
    except OptionError as exc:
        hint = ('an onnx reader entry needs "model": "/path/to/model-directory" (holding model.onnx '
                'and tokenizer.json)' if "model" in str(exc)
                else "fix the readers section of config.json (see docs/readers.md)")
        raise EpistemeError("INVALID_INPUT", f"config.json: reader {spec.name!r} (onnx): {exc}",
                            details={"reader": spec.name}, hint=hint) from None


def open_reader(spec: ReaderSpec) -> OnnxReader:
    """Open an onnx reader for ``spec``: the options are checked now, the model loads when first used."""
    return OnnxReader(spec, options_of(spec))
