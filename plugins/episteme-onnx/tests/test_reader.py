"""The onnx reader over tiny real ONNX models: it loads, names only offered labels, reorders by the
model's cosine within BM25's choice, truncates, caches its session, and replies the same every time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from episteme_core.api import Bm25Reader, ReadError, ReaderSpec
from episteme_core.testing import check_component
from episteme_onnx.kind import OnnxKind
from episteme_onnx.model import cosines, shared_embedder
from episteme_onnx.options import OnnxOptions
from episteme_onnx.reader import OnnxReader
from episteme_onnx.testing import WORDS, build_tiny_model

from .conftest import read_request

Open = Callable[..., OnnxReader]
QUESTION = "the white whale and the captain"
TEXTS = ["the ship is on the sea", "call me ishmael", "the captain saw the white whale",
         "python json report", "a harpoon and a ship", "water and land"]


def test_the_kind_keeps_the_reader_contract(tiny_model: Path) -> None:
    """The contract, and the behaviour check: open a reader on the tiny model, and it names only
    candidates it was offered."""
    assert check_component(OnnxKind(), "reader", options={"model": str(tiny_model)}) == "reader"


def test_the_defaults_are_the_bm25_readers() -> None:
    """With its default options the reader gates and bounds candidates as the builtin bm25 reader's
    defaults do (the kernel's defaults may move; the plugin must move with them)."""
    kernel = Bm25Reader(ReaderSpec(name="bm25", kind="bm25"))
    ours = OnnxOptions(model="unused")
    assert (ours.top, ours.ratio, ours.min_score, ours.score_ratio) == (
        kernel.top, kernel.ratio, kernel.min_score, kernel.score_ratio)
    assert (ours.weight, ours.rerank_weight, ours.max_tokens, ours.windows) == (0.15, 0.2, 256, "passage")


@pytest.mark.parametrize("model_fixture", ["tiny_model", "untyped_model"])
def test_it_loads_models_with_and_without_token_type_ids(open_onnx: Open, model_fixture: str,
                                                         request: pytest.FixtureRequest) -> None:
    model = request.getfixturevalue(model_fixture)
    reader = open_onnx(model=model)
    reader.health()
    facts = reader.describe()
    assert facts["dimension"] == 16 and facts["output"] == "last_hidden_state"
    assert ("token_type_ids" in facts["inputs"]) == (model_fixture == "tiny_model")
    reply = reader.read(read_request(QUESTION, TEXTS))
    assert reply.labels and set(reply.labels) <= {f"p{i}" for i in range(1, 7)}


def test_a_pooled_output_is_used_as_it_is(tmp_path: Path) -> None:
    """An export whose output is already a sentence embedding [batch, dim] gives the same vectors as
    the same weights mean-pooled by the reader."""
    pooled = shared_embedder(str(build_tiny_model(tmp_path / "pooled", pooled=True)), 1)
    tokens = shared_embedder(str(build_tiny_model(tmp_path / "tokens")), 1)
    assert pooled.pooled and pooled.output == "sentence_embedding" and not tokens.pooled
    texts = ["the white whale", "a ship on the sea and a captain", "json"]
    a = pooled.embed(texts, max_tokens=64, batch_size=4)
    b = tokens.embed(texts, max_tokens=64, batch_size=1)
    assert a.shape == b.shape == (3, 16)
    assert abs(a - b).max() < 1e-5


def test_vectors_are_unit_length_mean_pooled_over_the_mask(tiny_model: Path) -> None:
    embedder = shared_embedder(str(tiny_model), 1)
    vectors = embedder.embed(["whale", "the whale and the white sea of the voyage", ""], max_tokens=64,
                             batch_size=3)
    norms = (vectors ** 2).sum(axis=1)
    assert abs(norms - 1).max() < 1e-5
    # padding in a batch changes nothing: each text alone gives the same vector
    for i, text in enumerate(["whale", "the whale and the white sea of the voyage", ""]):
        alone = embedder.embed([text], max_tokens=64, batch_size=1)[0]
        assert abs(alone - vectors[i]).max() < 1e-5


def test_the_tokenizer_files_own_truncation_and_padding_are_not_used(tiny_model: Path) -> None:
    """tokenizer.json asks for truncation at 8 tokens and padding to 32 (as real exports ask for
    theirs); the reader cuts at max_tokens and pads only within a batch."""
    embedder = shared_embedder(str(tiny_model), 1)
    ids, types = embedder.encode("the whale " * 20, 64)
    assert len(ids) == 42 and len(types) == 42  # [CLS] 40 words [SEP]
    ids, _ = embedder.encode("the whale " * 20, 10)
    assert len(ids) == 10 and ids[0] == 2 and ids[-1] == 3  # cut, the special tokens kept


def test_text_past_max_tokens_is_not_read(open_onnx: Open) -> None:
    start = "the captain saw the white whale"
    embedder = open_onnx(max_tokens=8).embedder()
    a, b = embedder.embed([start + " python json", start + " water land"], max_tokens=8, batch_size=2)
    assert abs(a - b).max() == 0.0
    c, d = embedder.embed([start + " python json", start + " water land"], max_tokens=64, batch_size=2)
    assert abs(c - d).max() > 1e-3


def test_it_names_only_what_bm25_would_name_reordered(open_onnx: Open) -> None:
    request = read_request(QUESTION, TEXTS, coverage=[1, 1, 1, 0.1, 1, 1])
    reply = open_onnx(weight=1.0).read(request)
    bm25 = Bm25Reader(ReaderSpec(name="bm25", kind="bm25")).read(request)
    assert set(reply.labels) == set(bm25.labels) and "p4" not in reply.labels
    assert reply.scores is not None and list(reply.scores) == list(reply.labels)
    fused = [reply.scores[label] for label in reply.labels]
    assert fused == sorted(fused, reverse=True)


def test_the_model_moves_the_order_at_weight_one(open_onnx: Open) -> None:
    """Not a model that is ignored: at weight 1 the passage equal to the question comes first though
    its BM25 score is the lowest, and its score is its cosine, 1."""
    texts = ["python json report", "water and land", QUESTION]
    scores = [3.0, 2.5, 2.0]  # each at least half the best: every one eligible (the bm25 reader's floor)
    reply = open_onnx(weight=1.0).read(read_request(QUESTION, texts, scores=scores))
    assert reply.labels[0] == "p3"
    assert reply.scores is not None and abs(reply.scores["p3"] - 1.0) < 1e-5
    unmoved = open_onnx(weight=0.0).read(read_request(QUESTION, texts, scores=scores))
    assert unmoved.labels == ("p1", "p2", "p3")


def test_score_ratio_is_the_bm25_readers_score_floor(open_onnx: Open) -> None:
    """The default floor (half the best BM25 score) leaves out a passage scoring a third of the best;
    ``score_ratio`` 0 lets it in, as it does for the bm25 reader."""
    texts = ["python json report", "water and land", QUESTION]
    scores = [3.0, 2.5, 1.0]
    assert "p3" not in open_onnx(weight=0.0).read(read_request(QUESTION, texts, scores=scores)).labels
    opened = open_onnx(weight=0.0, score_ratio=0.0).read(read_request(QUESTION, texts, scores=scores))
    assert opened.labels == ("p1", "p2", "p3")


def test_the_fused_score_is_the_documented_rule(open_onnx: Open, tiny_model: Path) -> None:
    reader = open_onnx(weight=0.3)
    request = read_request(QUESTION, TEXTS, scores=[9.0, 7.0, 6.5, 5.0, 4.6, 4.5])  # all eligible
    reply = reader.read(request)
    embedder = shared_embedder(str(tiny_model), 1)
    asked = embedder.embed([QUESTION], max_tokens=256, batch_size=1)
    similarity = cosines(asked[0], embedder.embed(TEXTS, max_tokens=256, batch_size=4))
    assert reply.scores is not None
    for i, candidate in enumerate(request.candidates):
        expected = 0.7 * candidate.score / 9.0 + 0.3 * similarity[i]
        assert reply.scores[candidate.label] == pytest.approx(expected, abs=1e-6)


def test_a_constant_model_gives_exactly_the_bm25_reply(open_onnx: Open, constant_model: Path) -> None:
    reader = open_onnx(model=constant_model, weight=1.0)
    request = read_request(QUESTION, TEXTS, scores=[5.0, 5.0, 4.0, 4.0, 1.0, 0.5],
                           coverage=[1, 0.5, 1, 0.2, 1, 1])
    expected = Bm25Reader(ReaderSpec(name="bm25", kind="bm25")).read(request).labels
    # p4 under the coverage gate, p5 and p6 under half the best score
    assert reader.read(request).labels == expected == ("p1", "p2", "p3")
    # twelve ties (one score, one reference): in the order offered, as bm25 names them, not by label
    ties = read_request(QUESTION, TEXTS * 2, scores=[1.0] * 12, refs=["r#1"] * 12)
    expected = Bm25Reader(ReaderSpec(name="bm25", kind="bm25")).read(ties).labels
    assert reader.read(ties).labels == expected == tuple(f"p{i}" for i in range(1, 11))


words = st.sampled_from(WORDS)
texts = st.lists(words, min_size=0, max_size=12).map(" ".join)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), weight=st.floats(0.0, 1.0), top=st.integers(1, 12))
def test_a_model_that_knows_nothing_never_changes_the_bm25_reply(open_onnx: Open, constant_model: Path,
                                                                 data: st.DataObject, weight: float,
                                                                 top: int) -> None:
    n = data.draw(st.integers(0, 12))
    passages = [data.draw(texts) for _ in range(n)]
    # few distinct scores and references: ties must fall as bm25's do (by position, not by label)
    scores = [data.draw(st.sampled_from([0.0, 1.0, 2.5]) | st.floats(0.0, 30.0)) for _ in range(n)]
    coverage = [data.draw(st.floats(0.0, 1.0)) for _ in range(n)]
    refs = [data.draw(st.sampled_from(["r#1", "r#2"])) for _ in range(n)]
    request = read_request(data.draw(texts), passages, scores=scores, coverage=coverage, refs=refs,
                           best_coverage=max(coverage, default=0.0))
    reply = open_onnx(model=constant_model, weight=weight, top=top).read(request)
    options = {"top": top, "ratio": 0.4, "min_score": 0.0}
    bm25 = Bm25Reader(ReaderSpec(name="bm25", kind="bm25", options=options))
    assert reply.labels == bm25.read(request).labels


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), weight=st.floats(0.0, 1.0), top=st.integers(1, 12))
def test_replies_name_offered_labels_once_in_order_within_top(open_onnx: Open, data: st.DataObject,
                                                              weight: float, top: int) -> None:
    n = data.draw(st.integers(0, 12))
    passages = [data.draw(texts) for _ in range(n)]
    request = read_request(data.draw(texts), passages)
    reply = open_onnx(weight=weight, top=top).read(request)
    assert len(reply.labels) == len(set(reply.labels)) <= min(top, n)
    assert set(reply.labels) <= set(request.labels)
    assert reply.scores is not None and set(reply.scores) == set(reply.labels)


def test_the_same_read_gives_the_same_reply(open_onnx: Open) -> None:
    request = read_request(QUESTION, TEXTS * 3)
    first = open_onnx(batch_size=4).read(request)
    assert all(open_onnx(batch_size=4).read(request) == first for _ in range(3))
    # another batch size or thread count: the same labels (scores may differ in the last digits)
    assert open_onnx(batch_size=1, threads=2).read(request).labels == first.labels


REPLY_SCRIPT = """
import json, sys
from episteme_core.api import Candidate, ReaderSpec, ReadRequest
from episteme_onnx.reader import open_reader
texts = json.loads(sys.argv[2])
request = ReadRequest("the white whale and the captain", "s", "books", tuple(
    Candidate(label=f"p{i + 1}", text=t, score=1.0 + (i % 2), ref=f"r#{i % 3}") for i, t in enumerate(texts)))
reply = open_reader(ReaderSpec("x", "onnx", options={"model": sys.argv[1]})).read(request)
print(json.dumps({"labels": reply.labels, "scores": reply.scores}))
"""


def test_replies_are_the_same_across_processes_and_hash_seeds(tiny_model: Path) -> None:
    """Ties (equal BM25 scores, equal references) are broken by position, never by hash order."""
    passages = json.dumps(TEXTS * 2)
    seen = set()
    for seed in ("0", "1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run([sys.executable, "-c", REPLY_SCRIPT, str(tiny_model), passages], env=env,
                             capture_output=True, text=True, check=True, timeout=120)
        seen.add(out.stdout)
    assert len(seen) == 1 and json.loads(seen.pop())["labels"]


def test_a_read_past_its_timeout_fails(open_onnx: Open) -> None:
    reader = open_onnx(timeout=0.0, batch_size=1)
    with pytest.raises(ReadError, match="timed out after 0 s"):
        reader.read(read_request(QUESTION, TEXTS))


def test_nothing_eligible_embeds_nothing(open_onnx: Open) -> None:
    reply = open_onnx().read(read_request(QUESTION, TEXTS, scores=[0.0] * len(TEXTS)))
    assert reply.labels == ()


def test_the_session_is_loaded_once_per_process(tiny_model: Path, tmp_path: Path) -> None:
    first = shared_embedder(str(tiny_model), 1)
    assert shared_embedder(str(tiny_model), 1) is first
    assert shared_embedder(str(tiny_model) + "/", 1) is first  # the same files
    assert shared_embedder(str(tiny_model), 2) is not first  # thread counts are session settings
    model = build_tiny_model(tmp_path / "m")
    before = shared_embedder(str(model), 1)
    build_tiny_model(tmp_path / "m", seed=1)  # replaced in place: loaded afresh
    os.utime(model / "model.onnx", ns=(1, 1))
    assert shared_embedder(str(model), 1) is not before


def test_a_closed_reader_is_unhealthy(open_onnx: Open) -> None:
    reader = open_onnx()
    reader.close()
    with pytest.raises(ReadError, match="closed"):
        reader.health()


def test_each_paragraph_is_a_window_and_the_best_one_counts(tiny_model: Path) -> None:
    """A candidate is a run of paragraphs joined by blank lines: the paragraph that answers is read
    even when it sits past ``max_tokens`` of the passage, and the passage's cosine is its best one's."""
    from episteme_onnx.rerank import similarities, windows_of

    passage = "python json report " * 20 + "\n\n \n" + QUESTION + "\n\nwater and land"
    assert windows_of(passage, "paragraphs") == ["python json report " * 20, QUESTION, "water and land"]
    assert windows_of(passage, "passage") == [passage] and windows_of("\n\n", "paragraphs") == ["\n\n"]
    model = str(tiny_model)
    by_paragraph = similarities(QUESTION, [passage], model=model, max_tokens=16, windows="paragraphs")
    by_start = similarities(QUESTION, [passage], model=str(tiny_model), max_tokens=16)  # the default
    assert by_paragraph[0] == pytest.approx(1.0, abs=1e-5)
    assert by_start[0] < 0.9
