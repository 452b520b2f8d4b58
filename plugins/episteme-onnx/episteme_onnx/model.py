"""A sentence-embedding model from a local directory: ``model.onnx`` run by onnxruntime and its
``tokenizer.json`` read by tokenizers, mean-pooled over the attention mask and L2-normalised.

Any sentence-transformers ONNX export fits: inputs ``input_ids`` and ``attention_mask``, and
``token_type_ids`` when the model has it (fed zeros and the tokenizer's type ids); output
``last_hidden_state`` (or ``token_embeddings``) of shape [batch, sequence, dim], or an already pooled
[batch, dim]. Loaded models are kept for the life of the process (``shared_embedder``), keyed by
the files' real paths, sizes and modification times and the thread count, so questions pay one load.

onnxruntime, tokenizers and numpy are imported here, and this module is imported only when a
reader first needs its model.
"""

from __future__ import annotations

import collections
import importlib
import math
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import numpy as np
from numpy.typing import NDArray

MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
KNOWN_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
TOKEN_OUTPUTS = ("last_hidden_state", "token_embeddings")
POOLED_OUTPUTS = ("sentence_embedding", "pooler_output")
MAX_KEPT = 2
PROBE_TEXT = "episteme reads the sources"
_lock = threading.Lock()
_kept: collections.OrderedDict[tuple[Any, ...], Embedder] = collections.OrderedDict()

Vectors = NDArray[np.float32]


class LoadError(Exception):
    """The model directory cannot be used; the message says which file and why, for people."""


class DeadlineExceeded(Exception):
    """An embedding call ran past its deadline (checked between batches)."""


@attrs.frozen
class ModelFiles:
    """The two files of a model directory, as given (``directory``) and resolved."""

    directory: str
    model: Path
    tokenizer: Path

    def key(self) -> tuple[Any, ...]:
        """What identifies the loaded model: real paths, sizes, modification times."""
        parts: list[Any] = []
        for path in (self.model, self.tokenizer):
            status = path.stat()
            parts += [str(path), status.st_size, status.st_mtime_ns]
        return tuple(parts)


def model_files(directory: str) -> ModelFiles:
    """The model directory's ``model.onnx`` and ``tokenizer.json``; LoadError saying what is missing."""
    root = Path(directory)
    if not root.exists():
        raise LoadError(f"model directory {directory} does not exist")
    if not root.is_dir():
        raise LoadError(f"model {directory} is not a directory (it must hold {MODEL_FILE} and "
                        f"{TOKENIZER_FILE})")
    found = []
    for name in (MODEL_FILE, TOKENIZER_FILE):
        path = root / name
        if not path.exists():
            raise LoadError(f"model directory {directory} has no {name} (a sentence-transformers ONNX "
                            f"export holds {MODEL_FILE} and {TOKENIZER_FILE})")
        if not path.is_file():
            raise LoadError(f"{path} is not a regular file")
        if not os.access(path, os.R_OK):
            raise LoadError(f"{path} is not readable")
        found.append(path.resolve())
    return ModelFiles(directory=directory, model=found[0], tokenizer=found[1])


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:300]


def _version(module: Any) -> str:
    return str(getattr(module, "__version__", "?"))


class Embedder:
    """A loaded model and its tokenizer. ``embed`` may be called from several threads at once."""

    def __init__(self, files: ModelFiles, threads: int) -> None:
        self.files = files
        self.threads = threads
        try:
            ort: Any = importlib.import_module("onnxruntime")
            tokenizers: Any = importlib.import_module("tokenizers")
        except ImportError as exc:
            raise LoadError(f"the onnx reader needs onnxruntime and tokenizers ({exc}); "
                            "pip install onnxruntime tokenizers") from exc
        try:
            tokenizer = tokenizers.Tokenizer.from_file(str(files.tokenizer))
        except Exception as exc:
            raise LoadError(f"{files.tokenizer} could not be read by tokenizers {_version(tokenizers)}: "
                            f"{_first_line(exc)}") from exc
        # Truncation and padding are done per call (below), never by settings kept in the file.
        tokenizer.no_truncation()
        tokenizer.no_padding()
        self.tokenizer = tokenizer
        self.specials = int(tokenizer.num_special_tokens_to_add(False))
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.use_deterministic_compute = True
        # No memory pattern: it plans buffers per input shape, and batches of new lengths kept adding
        # to the peak (all-MiniLM-L6-v2, batches of 4 x 256 tokens: 351 MB against 285 MB, same CPU).
        options.enable_mem_pattern = False
        options.log_severity_level = 4  # fatal only: a failure is raised, and the message says it
        # No busy-waiting threads: on shared cores a spinning pool burns the CPU it waits for.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
        try:
            self.session = ort.InferenceSession(str(files.model), sess_options=options,
                                                providers=["CPUExecutionProvider"])
        except Exception as exc:
            raise LoadError(f"{files.model} could not be loaded by onnxruntime {_version(ort)}: "
                            f"{_first_line(exc)}") from exc
        self.inputs, self.integer_type = self._check_inputs()
        self.output, self.pooled = self._choose_output()
        try:
            probe = self.embed([PROBE_TEXT], max_tokens=16, batch_size=1)
        except Exception as exc:
            raise LoadError(f"{files.model}: a trial run failed: {_first_line(exc)}") from exc
        if probe.ndim != 2 or probe.shape[1] == 0 or not np.isfinite(probe).all():
            raise LoadError(f"{files.model}: a trial run gave no usable embedding (shape {probe.shape})")
        self.dimension = int(probe.shape[1])

    def _check_inputs(self) -> tuple[tuple[str, ...], Any]:
        inputs = self.session.get_inputs()
        names = tuple(str(i.name) for i in inputs)
        unknown = [n for n in names if n not in KNOWN_INPUTS]
        if unknown or "input_ids" not in names:
            raise LoadError(f"{self.files.model} takes inputs {', '.join(names) or 'none'}; a sentence-"
                            f"embedding model takes input_ids, attention_mask and optionally token_type_ids")
        types = {str(i.type) for i in inputs}
        if types == {"tensor(int32)"}:
            return names, np.int32
        if types == {"tensor(int64)"}:
            return names, np.int64
        raise LoadError(f"{self.files.model}: its inputs must all be int64 or all int32 tensors, "
                        f"not {', '.join(sorted(types))}")

    def _choose_output(self) -> tuple[str, bool]:
        outputs = {str(o.name): o for o in self.session.get_outputs()}
        for name in (*TOKEN_OUTPUTS, *POOLED_OUTPUTS, *outputs):
            if name in outputs:
                rank = len(outputs[name].shape or ())
                if rank in (2, 3):
                    return name, rank == 2
        raise LoadError(f"{self.files.model} has no output of shape [batch, sequence, dim] or "
                        f"[batch, dim] (outputs: {', '.join(outputs) or 'none'})")

    def encode(self, text: str, max_tokens: int) -> tuple[list[int], list[int]]:
        """Token ids and type ids of ``text``, cut to ``max_tokens`` with the special tokens kept."""
        encoding = self.tokenizer.encode(text, add_special_tokens=False)
        encoding.truncate(max(1, max_tokens - self.specials))
        encoding = self.tokenizer.post_process(encoding)
        return list(encoding.ids), list(encoding.type_ids)

    def embed(self, texts: Sequence[str], *, max_tokens: int, batch_size: int,
              deadline: float | None = None) -> Vectors:
        """One unit vector per text ([len(texts), dim]), in the order given. Texts are batched
        ``batch_size`` at a time by token count (ties by position), so a batch pads little; the
        batches depend only on the texts, never on timing. The deadline is checked between batches."""
        encoded = [self.encode(text, max_tokens) for text in texts]
        order = sorted(range(len(encoded)), key=lambda i: (len(encoded[i][0]), i))
        result: Vectors | None = None
        for start in range(0, len(order), batch_size):
            if deadline is not None and time.monotonic() > deadline:
                raise DeadlineExceeded
            members = order[start:start + batch_size]
            vectors = self._run([encoded[i] for i in members])
            if result is None:
                result = np.zeros((len(encoded), vectors.shape[1]), dtype=np.float32)
            result[members] = vectors
        if result is None:
            return np.zeros((0, 0), dtype=np.float32)
        return result

    def _run(self, batch: Sequence[tuple[list[int], list[int]]]) -> Vectors:
        width = max(1, max(len(ids) for ids, _ in batch))
        ids = np.zeros((len(batch), width), dtype=self.integer_type)
        types = np.zeros((len(batch), width), dtype=self.integer_type)
        mask = np.zeros((len(batch), width), dtype=self.integer_type)
        for row, (token_ids, type_ids) in enumerate(batch):
            ids[row, :len(token_ids)] = token_ids
            types[row, :len(type_ids)] = type_ids
            mask[row, :len(token_ids)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        (out,) = self.session.run([self.output], {name: feeds[name] for name in self.inputs})
        values = np.asarray(out, dtype=np.float32)
        if self.pooled:
            pooled = values
        else:
            weights = mask.astype(np.float32)[:, :, None]
            pooled = (values * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        result: Vectors = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return result


def shared_embedder(directory: str, threads: int) -> Embedder:
    """The loaded model of ``directory``: from this process's cache, else loaded now (LoadError when
    it cannot be). At most ``MAX_KEPT`` stay loaded; the least recently used goes first."""
    files = model_files(directory)
    key = (*files.key(), threads)
    with _lock:
        embedder = _kept.get(key)
        if embedder is not None:
            _kept.move_to_end(key)
            return embedder
        embedder = Embedder(files, threads)
        _kept[key] = embedder
        while len(_kept) > MAX_KEPT:
            _kept.popitem(last=False)
        return embedder


def cosines(question: Vectors, passages: Vectors) -> list[float]:
    """The cosine of each passage vector with the question vector (both unit length already)."""
    if passages.shape[0] == 0:
        return []
    values = passages @ question.reshape(-1)
    return [float(v) if math.isfinite(float(v)) else 0.0 for v in values]


def release_all() -> None:
    """Let go of every kept model (each is freed once no reader holds it)."""
    with _lock:
        _kept.clear()
