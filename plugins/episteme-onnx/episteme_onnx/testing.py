"""Tiny model directories for tests: a random-weight ONNX graph built with ``onnx`` and a word-level
``tokenizer.json`` built with ``tokenizers``, so no test downloads weights.

The graph is an embedding lookup, masked: ``last_hidden_state[b, s] = E[input_ids[b, s]]
(+ T[token_type_ids[b, s]]) · attention_mask[b, s]``, so after mean pooling a text's vector is the
mean of its words' random vectors (a bag of words: texts sharing words are alike). ``constant``
makes every word's vector the same, so every text embeds alike (a model that knows nothing).
The same arguments write the same bytes.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]")
WORDS = ("whale", "ship", "sea", "captain", "white", "harpoon", "ishmael", "voyage", "water", "land",
         "policy", "browser", "report", "directive", "header", "json", "python", "snake", "the", "of",
         "a", "and", "to", "in", "is", "it", "that", "was", "for", "on", "with", "as", "i", "my", "me")


def words_of(texts: Iterable[str]) -> list[str]:
    """The distinct lower-case words of ``texts`` (as the tiny tokenizer splits them), sorted."""
    found: set[str] = set()
    for text in texts:
        found.update(w.lower() for w in re.findall(r"\w+|[^\w\s]", text))
    return sorted(found)


def build_tokenizer(path: Path, vocabulary: Sequence[str] = WORDS) -> Path:
    """A word-level tokenizer (lower case, split on whitespace and punctuation, ``[CLS] $A [SEP]``)
    over ``SPECIALS`` then ``vocabulary``. The file also asks for truncation at 8 tokens and padding
    to 32, as real exports ask for their own: the reader must override both."""
    tokenizers: Any = importlib.import_module("tokenizers")
    vocab = {token: i for i, token in enumerate(dict.fromkeys([*SPECIALS, *vocabulary]))}
    tokenizer = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = tokenizers.normalizers.Lowercase()
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tokenizer.post_processor = tokenizers.processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])])
    tokenizer.enable_truncation(max_length=8)
    tokenizer.enable_padding(length=32, pad_id=0, pad_token="[PAD]")
    tokenizer.save(str(path))
    return path


def build_graph(path: Path, *, vocab_size: int, dim: int = 16, token_type_ids: bool = True,
                constant: bool = False, pooled: bool = False, inputs: Sequence[str] | None = None,
                seed: int = 0) -> Path:
    """The embedding-lookup graph (see the module docstring) as ``model.onnx``. ``pooled`` outputs
    ``sentence_embedding`` [batch, dim] (the mean over the sequence) instead of
    ``last_hidden_state``; ``inputs`` renames the graph's inputs (to build a model the reader refuses)."""
    import numpy as np

    onnx: Any = importlib.import_module("onnx")
    helper, numpy_helper, tp = onnx.helper, onnx.numpy_helper, onnx.TensorProto
    rng = np.random.default_rng(seed)
    words = np.ones((vocab_size, dim), np.float32) if constant else rng.standard_normal(
        (vocab_size, dim)).astype(np.float32)
    names = list(inputs) if inputs is not None else [
        "input_ids", "attention_mask", *(["token_type_ids"] if token_type_ids else [])]
    graph_inputs = [helper.make_tensor_value_info(n, tp.INT64, ["batch", "sequence"]) for n in names]
    initializers = [numpy_helper.from_array(words, "word_embeddings"),
                    numpy_helper.from_array(np.array([-1], np.int64), "last_axis")]
    nodes = [helper.make_node("Gather", ["word_embeddings", names[0]], ["looked_up"]),
             helper.make_node("Cast", [names[1]], ["mask_float"], to=tp.FLOAT),
             helper.make_node("Unsqueeze", ["mask_float", "last_axis"], ["mask_3d"])]
    summed = "looked_up"
    if len(names) > 2:
        # small, so that a text's words, not its type ids (all 0 for one text), decide its direction
        types = np.zeros((2, dim), np.float32) if constant else 0.1 * rng.standard_normal((2, dim)).astype(
            np.float32)
        initializers.append(numpy_helper.from_array(types, "type_embeddings"))
        nodes += [helper.make_node("Gather", ["type_embeddings", names[2]], ["typed"]),
                  helper.make_node("Add", ["looked_up", "typed"], ["summed"])]
        summed = "summed"
    if pooled:
        nodes += [helper.make_node("Mul", [summed, "mask_3d"], ["hidden"]),
                  helper.make_node("ReduceMean", ["hidden"], ["sentence_embedding"], axes=[1], keepdims=0)]
        output = helper.make_tensor_value_info("sentence_embedding", tp.FLOAT, ["batch", dim])
    else:
        nodes.append(helper.make_node("Mul", [summed, "mask_3d"], ["last_hidden_state"]))
        output = helper.make_tensor_value_info("last_hidden_state", tp.FLOAT, ["batch", "sequence", dim])
    graph = helper.make_graph(nodes, "tiny_sentence_embedding", graph_inputs, [output], initializers)
    model = helper.make_model(graph, producer_name="episteme-onnx tests",
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # read by every onnxruntime since 1.10
    onnx.checker.check_model(model)
    path.write_bytes(model.SerializeToString())
    return path


def build_tiny_model(directory: Path, *, vocabulary: Sequence[str] = WORDS, dim: int = 16,
                     token_type_ids: bool = True, constant: bool = False, pooled: bool = False,
                     seed: int = 0) -> Path:
    """A model directory (``model.onnx`` and ``tokenizer.json``) of a few kilobytes; returns it."""
    directory.mkdir(parents=True, exist_ok=True)
    build_tokenizer(directory / "tokenizer.json", vocabulary)
    size = len(dict.fromkeys([*SPECIALS, *vocabulary]))
    build_graph(directory / "model.onnx", vocab_size=size, dim=dim, token_type_ids=token_type_ids,
                constant=constant, pooled=pooled, seed=seed)
    return directory
