"""The reader kind ``onnx`` as registered at startup: a name, a description, ``open`` (the model loads
when a question first needs it) and ``rerank``, the same rule over any passages for the kernel's
``query --rerank onnx``."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from episteme_core.api import ReaderSpec
    from episteme_onnx.reader import OnnxReader


class OnnxKind:
    """Factory registered as the reader kind ``onnx``."""

    name = "onnx"
    description = ("a local sentence-embedding model (onnxruntime): its cosine with the question, "
                   "fused with BM25")

    def open(self, spec: ReaderSpec) -> OnnxReader:
        from episteme_onnx.reader import open_reader

        return open_reader(spec)

    def rerank(self, spec: ReaderSpec, question: str, passages: list[str],
               bm25_scores: list[float]) -> list[float]:
        """One fused score per passage, in order (``episteme_onnx.rerank.rerank`` with the options of
        ``spec``, a ``config.json`` reader entry of kind onnx; its ``rerank_weight``, not the ``weight``
        ``ask`` uses). EpistemeError (INVALID_INPUT) when the
        options are wrong or the model directory cannot be used."""
        from episteme_core.api import EpistemeError
        from episteme_onnx.model import LoadError
        from episteme_onnx.reader import options_of
        from episteme_onnx.rerank import rerank

        options = options_of(spec)
        try:
            return rerank(question, passages, bm25_scores, model=options.model, weight=options.rerank_weight,
                          threads=options.threads, max_tokens=options.max_tokens,
                          batch_size=options.batch_size, windows=options.windows,
                          query_prefix=options.query_prefix,
                          passage_prefix=options.passage_prefix)
        except LoadError as exc:
            raise EpistemeError("INVALID_INPUT", f"reader {spec.name!r} (onnx): {exc}",
                                details={"reader": spec.name, "model": options.model},
                                hint="point model at a directory holding model.onnx and tokenizer.json "
                                     "(see docs/readers.md)") from exc
