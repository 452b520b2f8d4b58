"""The ``llama`` reader: a local GGUF model that names the candidates bearing on a question.

Modes:

- ``generate``: the question and the shard's labelled candidates, in the model's chat template, and a
  reply held by a grammar made for this read to ``{"ids": [...]}`` with only offered labels, each at
  most once, at most ``top``, greedy (temperature 0).
- ``fuse``: the model's yes/no relevance of each eligible candidate (next-token log-probabilities,
  candidates decoded in batches over one shared prompt prefix), fused with BM25
  (``episteme_llama.fusion``), so a model that knows nothing leaves BM25's answer as it is.

Slots are parallel contexts over one loaded model. A read past its timeout stops between batches
and fails (the pool then retries it or lets bm25 answer). Candidates are whatever ``ask`` offers
(single paragraphs or runs of them): the reader only sees labels and texts.
"""

from __future__ import annotations

import math
import queue
import threading
import time
from typing import Any

from episteme_core.api import (
    BaseReader,
    EpistemeError,
    ReadError,
    ReaderSpec,
    ReadReply,
    ReadRequest,
    extract_ids,
)
from episteme_llama import fusion, grammar
from episteme_llama.engine import Context, DeadlineExceeded, DecodeError, LoadError, Model
from episteme_llama.options import LlamaOptions, OptionError, parse_options
from episteme_llama.prompts import ChatTemplate, messages_with

YES_WORDS = ("yes", " yes", "Yes", " Yes", "YES", " YES")
NO_WORDS = ("no", " no", "No", " No", "NO", " NO")
MAX_BATCH_TOKENS = 512  # tokens per decode call: a read checks its deadline between calls
CLOSE_WAIT_S = 120.0
MIN_FIT_TOKENS = 1


def answer_tokens(model: Model, words: tuple[str, ...]) -> tuple[int, ...]:
    """The single tokens that spell one of ``words`` in the model's vocabulary."""
    found = []
    for word in words:
        tokens = model.tokenize(word)
        if len(tokens) == 1 and tokens[0] not in found:
            found.append(tokens[0])
    return tuple(found)


def log_odds(logits: Any, yes: tuple[int, ...], no: tuple[int, ...]) -> float:
    """log P(yes) - log P(no) from next-token logits (each side summed over its spellings)."""
    import numpy as np

    values = np.asarray(logits, dtype=np.float64)
    return float(np.logaddexp.reduce(values[list(yes)]) - np.logaddexp.reduce(values[list(no)]))


def probability(odds: float) -> float:
    """The yes-probability of a log-odds value, computed without overflow."""
    if odds >= 0:
        return 1.0 / (1.0 + math.exp(-odds))
    e = math.exp(odds)
    return e / (1.0 + e)


class LlamaReader(BaseReader):
    """A reader over a loaded GGUF model; ``read`` may run on ``slots`` threads at once."""

    kind = "llama"

    def __init__(self, spec: ReaderSpec, options: LlamaOptions, model: Model) -> None:
        super().__init__(spec)
        self.options = options
        self.model = model
        self.mode = options.mode
        self.template = ChatTemplate(model.info.chat_template, bos_token=model.bos_text,
                                     eos_token=model.eos_text)
        self.yes: tuple[int, ...] = ()
        self.no: tuple[int, ...] = ()
        if self.mode == "fuse":
            self.yes, self.no = answer_tokens(model, YES_WORDS), answer_tokens(model, NO_WORDS)
            if not self.yes or not self.no:
                raise LoadError(
                    f"model file {model.path}: its vocabulary has no single token for "
                    f"{'yes' if not self.yes else 'no'}, so fuse mode cannot read its answer",
                    invalid_input=True, hint='use mode "generate" with this model, or another model',
                )
        n_ctx = min(options.n_ctx, max(256, model.facts.context_train))
        threads = options.threads_for(self.slots)
        sequences = options.batch_size + 1 if self.mode == "fuse" else 1
        self.n_ctx = n_ctx
        self._free: queue.LifoQueue[Context] = queue.LifoQueue()
        self._contexts: list[Context] = []
        try:
            for _ in range(self.slots):
                context = Context(model, n_ctx=n_ctx, n_batch=min(n_ctx, MAX_BATCH_TOKENS), n_seq=sequences,
                                  threads=threads, seed=options.seed)
                self._contexts.append(context)
                self._free.put(context)
        except Exception:
            self.close()
            raise
        self.threads = threads
        self.closed = False
        self._busy_lock = threading.Lock()
        self.busy = 0
        self.peak_busy = 0  # the most reads that ran at once

    # -- what it is -------------------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        """The reader's model, mode, device and sizes, for ``reader serve``, ``reader check`` and logs."""
        facts = self.model.facts
        return {
            "name": self.name, "kind": self.kind, "mode": self.mode, "model": facts.path,
            "architecture": facts.architecture, "modelName": facts.name, "description": facts.description,
            "parameters": facts.parameters, "sizeBytes": facts.size_bytes, "device": facts.device,
            "gpuLayers": facts.gpu_layers, "layers": facts.layers, "nCtx": self.n_ctx,
            "nCtxTrain": facts.context_train, "threads": self.threads, "slots": self.slots,
            "batchSize": self.options.batch_size, "top": self.options.top,
            "maxCandidateTokens": self.options.max_candidate_tokens,
            "weight": self.options.weight if self.mode == "fuse" else None,
            "chatTemplate": "gguf" if facts.chat_template else "chatml (the file has none)",
        }

    def decoded_tokens(self) -> int:
        """Tokens decoded by all slots so far (prompts and replies), for throughput figures."""
        return sum(context.decoded for context in self._contexts)

    def health(self) -> None:
        if self.closed:
            raise ReadError("the llama reader is closed")

    # -- reads ------------------------------------------------------------------------------------
    def read(self, request: ReadRequest) -> ReadReply:
        deadline = time.monotonic() + self.timeout
        if self.closed:
            raise ReadError("the llama reader is closed")
        context = self._take(deadline)
        with self._busy_lock:
            self.busy += 1
            self.peak_busy = max(self.peak_busy, self.busy)
        try:
            if self.mode == "generate":
                return self._generate(context, request, deadline)
            return self._fuse(context, request, deadline)
        except DeadlineExceeded:
            raise ReadError(f"timed out after {self.timeout:g} s") from None
        except DecodeError as exc:
            raise ReadError(str(exc)) from exc
        finally:
            with self._busy_lock:
                self.busy -= 1
            self._free.put(context)

    def _take(self, deadline: float) -> Context:
        try:
            return self._free.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise ReadError(f"no free slot within {self.timeout:g} s") from None

    def relevance(self, context: Context, question: str, candidates: Any,
                  deadline: float | None) -> dict[str, float]:
        """The model's yes-probability for each candidate (label -> 0..1), batched over one prefix."""
        if not candidates:
            return {}
        before, after = self.template.relevance_split(question)
        prefix = self.model.tokenize_prompt(before)
        tail = self.model.tokenize(after)
        room = self.n_ctx - len(prefix) - len(tail)
        if room < MIN_FIT_TOKENS:
            raise ReadError(f"the question alone takes more than the context of {self.n_ctx} tokens")
        keep = min(room, self.options.max_candidate_tokens)
        suffixes = [self.model.tokenize(c.text)[:keep] + tail for c in candidates]
        logits = context.score_next(prefix, suffixes, group=self.options.batch_size, deadline=deadline)
        return {c.label: probability(log_odds(row, self.yes, self.no))
                for c, row in zip(candidates, logits, strict=True)}

    def _fuse(self, context: Context, request: ReadRequest, deadline: float) -> ReadReply:
        options = self.options
        chosen = fusion.eligible(request, ratio=options.ratio, min_score=options.min_score,
                                 score_ratio=options.score_ratio)
        scores = self.relevance(context, request.question, chosen, deadline)
        named = fusion.fuse(request, scores, weight=options.weight, top=options.top, ratio=options.ratio,
                            min_score=options.min_score, score_ratio=options.score_ratio)
        return ReadReply(labels=tuple(f.label for f in named), scores={f.label: f.fused for f in named})

    def _generate(self, context: Context, request: ReadRequest, deadline: float) -> ReadReply:
        labels = request.labels
        most = min(self.options.top, len(labels))
        rules = grammar.ids_grammar(labels, most)
        budget = grammar.max_reply_tokens(labels, most)
        prompt = self.listing_prompt(request, reserve=budget)
        tokens, why = context.generate(prompt, rules, max_tokens=budget, deadline=deadline)
        text = self.model.detokenize(tokens)
        if why != "end":
            raise ReadError(f"the reply did not finish within {budget} tokens: {text[:80]!r}")
        ids = extract_ids(text)
        if ids is None:
            raise ReadError(f'the reply holds no {{"ids": [...]}} object: {text[:80]!r}')
        return ReadReply(labels=tuple(ids))

    def listing_prompt(self, request: ReadRequest, *, reserve: int) -> list[int]:
        """The prompt tokens of a generating read, within ``n_ctx - reserve`` tokens.

        Each candidate is cut to ``max_candidate_tokens``; when they still do not all fit, each is
        cut to the same number of tokens (short ones keep all of theirs): every label is still
        offered, and the model sees each one's start.
        The answer never uses these cut texts; it quotes the stored paragraphs."""
        room = self.n_ctx - reserve
        cap = self.options.max_candidate_tokens
        pieces = [self.model.tokenize(c.text) for c in request.candidates]
        texts = [c.text if len(p) <= cap else self.model.detokenize(p[:cap])
                 for c, p in zip(request.candidates, pieces, strict=True)]
        pieces = [p[:cap] for p in pieces]
        tokens = self._listing_tokens(request, texts)
        if len(tokens) <= room:
            return tokens
        overhead = len(self._listing_tokens(request, [""] * len(texts)))
        if overhead >= room:
            raise ReadError(f"{len(texts)} labels and the question do not fit the context of "
                            f"{self.n_ctx} tokens")
        cap = _water_level([len(p) for p in pieces], room - overhead)
        for _ in range(6):
            cut = [self.model.detokenize(p[:cap]) for p in pieces]
            tokens = self._listing_tokens(request, cut)
            if len(tokens) <= room:
                return tokens
            cap = max(0, cap - max(1, (len(tokens) - room) // max(1, len(pieces))) - 1)
        raise ReadError(f"the candidates do not fit the context of {self.n_ctx} tokens")

    def _listing_tokens(self, request: ReadRequest, texts: list[str]) -> list[int]:
        return self.model.tokenize_prompt(self.template.render(messages_with(request, texts)))

    def close(self) -> None:
        """Free the contexts once their reads have returned: a read still running (the pool gave up
        on it) stops at its next deadline check, so freeing its context under it never happens. A
        context that does not come back within ``CLOSE_WAIT_S`` is left allocated rather than freed
        under a running decode."""
        self.closed = True
        deadline = time.monotonic() + CLOSE_WAIT_S
        for _ in range(len(self._contexts)):
            try:
                context = self._free.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            context.close()
        self._contexts = []


def _water_level(sizes: list[int], room: int) -> int:
    """The largest cap with ``sum(min(size, cap)) <= room``."""
    low, high = 0, max(sizes, default=0)
    while low < high:
        middle = (low + high + 1) // 2
        if sum(min(s, middle) for s in sizes) <= room:
            low = middle
        else:
            high = middle - 1
    return low


def open_reader(spec: ReaderSpec, options: LlamaOptions | None = None) -> LlamaReader:
    """Open a llama reader for ``spec`` (its options parsed from ``spec.options`` unless given);
    every problem is an EpistemeError naming the reader."""
    try:
        if options is None:
            options = parse_options(spec.options)
    except OptionError as exc:
        hint = ('a llama reader entry needs "model": "/path/to/model.gguf"'
                if "model" in str(exc) else "fix the readers section of config.json (see docs/readers.md)")
        raise EpistemeError("INVALID_INPUT", f"config.json: reader {spec.name!r} (llama): {exc}",
                            details={"reader": spec.name}, hint=hint) from None
    try:
        import llama_cpp  # noqa: F401
    except ImportError as exc:
        raise EpistemeError(
            "PROCESSING_FAILED",
            f"reader {spec.name!r} needs llama-cpp-python, which is not installed ({exc})",
            hint="pip install llama-cpp-python (see docs/readers.md for a CUDA build)",
        ) from exc
    from episteme_llama.models import shared_model

    try:
        model = shared_model(options.model, options.n_gpu_layers)
        return LlamaReader(spec, options, model)
    except LoadError as exc:
        raise EpistemeError(
            "INVALID_INPUT" if exc.invalid_input else "PROCESSING_FAILED",
            f"reader {spec.name!r}: {exc}", details={"reader": spec.name, "model": options.model},
            hint=exc.hint,
        ) from exc
