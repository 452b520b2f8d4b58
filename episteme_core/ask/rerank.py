"""``query --rerank NAME``: a reader kind's optional ``rerank`` as a second stage over query's results.

``NAME`` is a reader named in ``config.json`` (its entry's options go to the kind) or a reader kind
(with no options). The kind comes from the registry, never from an import: the kernel names no
plugin. A kind without ``rerank`` is ``INVALID_USAGE`` naming the kinds that have one. The second
stage is opt-in and never the default; it reorders, it never adds or drops a result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from episteme_core.errors import EpistemeError
from episteme_core.records.reading import ReaderSpec


class Reranker:
    """``(passages, bm25_scores) -> scores`` for one question with one reader kind's ``rerank``."""

    def __init__(self, name: str, rerank: Callable[..., Any], spec: ReaderSpec, question: str) -> None:
        self.name = name
        self._rerank = rerank
        self._spec = spec
        self._question = question

    def __call__(self, passages: list[str], scores: list[float]) -> list[float]:
        return list(self._rerank(self._spec, self._question, list(passages), list(scores)))


def reranker(home: Any, plugins: Any, name: str, question: str) -> Reranker:
    """The second stage ``--rerank NAME`` names, for ``question``; ``INVALID_USAGE`` when ``NAME`` is
    neither a configured reader nor a reader kind, or its kind has no ``rerank``."""
    from episteme_core.ask.config import reader_specs

    specs = {spec.name: spec for spec in reader_specs(home.config())}
    kinds = {kind.name: kind for kind in plugins.all("reader")}
    spec = specs.get(name) or (ReaderSpec(name=name, kind=name) if name in kinds else None)
    able = sorted(kind for kind, component in kinds.items() if callable(getattr(component, "rerank", None)))
    if spec is None:
        known = ", ".join(sorted({*specs, *kinds})) or "none"
        raise EpistemeError("INVALID_USAGE", f"--rerank {name!r} is neither a configured reader nor a reader "
                            f"kind (known: {known})", details={"rerank": name, "rerankKinds": able})
    kind = kinds.get(spec.kind)
    rerank = getattr(kind, "rerank", None)
    if not callable(rerank):
        raise EpistemeError(
            "INVALID_USAGE",
            f"--rerank {name!r}: reader kind {spec.kind!r} has no rerank (kinds that have one: "
            f"{', '.join(able) or 'none installed'})",
            details={"rerank": name, "kind": spec.kind, "rerankKinds": able},
            hint="name a reader whose kind can rerank (e.g. one of kind onnx, plugin episteme-onnx)",
        )
    return Reranker(name, rerank, spec, question)
