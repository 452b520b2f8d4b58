"""The llama reader over the tiny random model: what it names is always offered, unique and within
the budget; the same inputs give the same reply; long shards fit the context; a read past its
timeout fails cleanly; slots read in parallel. The weights are random, so no test asserts *which*
label wins, only the contract."""

from __future__ import annotations

import concurrent.futures as cf
import random
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from episteme_core.api import EpistemeError, ReadError, ReaderSpec, ReadRequest
from episteme_llama.reader import LlamaReader, open_reader

from .conftest import WORDS, read_request

Open = Callable[..., LlamaReader]
sentences = st.lists(st.sampled_from(WORDS), min_size=1, max_size=12).map(" ".join)


def shard(seed: int, n: int = 8, words: int = 20) -> ReadRequest:
    rng = random.Random(seed)
    question = " ".join(rng.choice(WORDS) for _ in range(6)) + "?"
    texts = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, words))) for _ in range(n)]
    return read_request(question, texts)


def assert_contract(request: ReadRequest, labels: tuple[object, ...], top: int, *, ordered: bool) -> None:
    offered = list(request.labels)
    assert all(isinstance(x, str) and x in offered for x in labels), labels
    assert len(set(labels)) == len(labels) and len(labels) <= top
    if ordered:
        assert [offered.index(x) for x in labels] == sorted(offered.index(x) for x in labels)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(question=sentences, texts=st.lists(sentences, min_size=1, max_size=14), top=st.integers(1, 6))
def test_generate_names_only_offered_labels_once_within_top(open_llama: Open, question: str,
                                                           texts: list[str], top: int) -> None:
    reader = open_llama(mode="generate", top=top)
    request = read_request(question, texts)
    reply = reader.read(request)
    assert_contract(request, reply.labels, top, ordered=True)
    reader.close()


def test_generate_names_something_for_some_shards(open_llama: Open) -> None:
    reader = open_llama(mode="generate", top=3)
    named = [reader.read(shard(seed)).labels for seed in range(30)]
    assert any(named), "a random model should pick labels for some shards; all replies were empty"
    for seed, labels in enumerate(named):
        assert_contract(shard(seed), labels, 3, ordered=True)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(question=sentences, texts=st.lists(sentences, min_size=1, max_size=14), top=st.integers(1, 6),
       batch=st.integers(1, 8))
def test_fuse_names_top_candidates_with_fused_scores(open_llama: Open, question: str, texts: list[str],
                                                    top: int, batch: int) -> None:
    reader = open_llama(mode="fuse", top=top, batch_size=batch)
    request = read_request(question, texts)
    reply = reader.read(request)
    assert_contract(request, reply.labels, top, ordered=False)
    # every candidate is eligible here (full coverage) but for the bm25 reader's score floor: scores
    # run n..1, so those at least half the best (n) are
    eligible = sum(1 for i in range(len(texts)) if len(texts) - i >= 0.5 * len(texts))
    assert len(reply.labels) == min(top, eligible)
    scores = [reply.scores[label] for label in reply.labels]  # type: ignore[index]
    assert scores == sorted(scores, reverse=True) and all(0.0 <= s <= 1.0 for s in scores)
    reader.close()


@pytest.mark.parametrize("mode", ["generate", "fuse"])
def test_same_inputs_same_reply_across_reads_instances_and_threads(open_llama: Open, tiny_model: Path,
                                                                   mode: str) -> None:
    requests = [shard(seed) for seed in range(12)]
    first = open_llama(mode=mode)
    replies = [first.read(r) for r in requests]
    assert [first.read(r) for r in requests] == replies
    from episteme_llama.models import release_all

    release_all()  # a second instance loads the model afresh
    second = open_llama(mode=mode, threads=2)
    assert [second.read(r) for r in requests] == replies


def test_fuse_scores_each_candidate_the_same_whatever_its_batch(open_llama: Open) -> None:
    request = shard(7, n=12)
    one = open_llama(mode="fuse", batch_size=1)
    many = open_llama(mode="fuse", batch_size=8)
    context_one, context_many = one._contexts[0], many._contexts[0]
    a = one.relevance(context_one, request.question, request.candidates, None)
    b = many.relevance(context_many, request.question, request.candidates, None)
    assert a.keys() == b.keys()
    assert all(abs(a[k] - b[k]) < 1e-4 for k in a), (a, b)


def test_fuse_with_weight_zero_is_the_bm25_reader(open_llama: Open) -> None:
    from episteme_core.api import Bm25Reader

    bm25 = Bm25Reader(ReaderSpec(name="bm25", kind="bm25"))
    reader = open_llama(mode="fuse", weight=0.0)
    for seed in range(10):
        request = shard(seed)
        coverage = [random.Random(seed + i).random() for i in range(len(request.candidates))]
        request = read_request(request.question, [c.text for c in request.candidates], coverage=coverage,
                               best_coverage=max(coverage))
        assert reader.read(request).labels == bm25.read(request).labels


@pytest.mark.parametrize("mode", ["generate", "fuse"])
def test_a_shard_larger_than_the_context_is_still_read(open_llama: Open, mode: str) -> None:
    long_texts = [" ".join(random.Random(i).choice(WORDS) for _ in range(300)) for i in range(30)]
    request = read_request("where is the white whale", long_texts)
    reader = open_llama(mode=mode, n_ctx=1024, top=4)
    reply = reader.read(request)
    assert_contract(request, reply.labels, 4, ordered=mode == "generate")
    prompt = reader.listing_prompt(request, reserve=40)
    assert 900 < len(prompt) <= 1024 - 40
    text = reader.model.detokenize(prompt)
    assert all(f"p{i}: " in text for i in range(1, 31))  # every label is still offered


def test_when_even_the_labels_do_not_fit_the_read_fails(open_llama: Open) -> None:
    request = read_request("where is the white whale", ["whale"] * 200)
    reader = open_llama(mode="generate", n_ctx=256)
    with pytest.raises(ReadError, match="do not fit the context of 256 tokens"):
        reader.read(request)


@pytest.mark.parametrize("mode", ["generate", "fuse"])
def test_a_read_past_its_timeout_fails_and_the_slot_recovers(open_llama: Open, mode: str) -> None:
    big = read_request("white whale", [" ".join(["the white whale and the sea"] * 60)] * 60)
    reader = open_llama(mode=mode, timeout=0.05, n_ctx=8192, batch_size=1)
    with pytest.raises(ReadError, match="timed out after 0.05 s"):
        reader.read(big)
    reader.timeout = 30.0
    small = shard(1)
    assert reader.read(small) == open_llama(mode=mode, n_ctx=8192, batch_size=1).read(small)


def test_slots_read_in_parallel_and_agree_with_one_slot(open_llama: Open) -> None:
    requests = [shard(seed) for seed in range(12)]
    single = open_llama(mode="fuse")
    expected = [single.read(r) for r in requests]
    reader = open_llama(mode="fuse", slots=3)
    assert len(reader._contexts) == 3
    with cf.ThreadPoolExecutor(3) as pool:
        assert list(pool.map(reader.read, requests)) == expected


def test_describe_says_where_it_runs(open_llama: Open, tiny_model: Path) -> None:
    from episteme_llama.engine import gpu_offload_supported

    described = open_llama(mode="fuse", n_gpu_layers=0).describe()
    assert described["device"] == "cpu" and described["gpuLayers"] == 0
    everything = open_llama(mode="fuse").describe()
    assert everything["device"] == ("gpu" if gpu_offload_supported() else "cpu")
    assert everything["architecture"] == "llama" and everything["model"] == str(tiny_model)


def test_the_kind_is_registered_through_the_entry_point() -> None:
    from episteme_core.testing import invoke

    listed = invoke("plugins", "--json")
    assert listed.exit_code == 0, listed.stderr
    [plugin] = [p for p in listed.envelope["data"]["plugins"] if p["module"] == "episteme_llama.plugin"]
    assert plugin["error"] is None
    assert plugin["components"] == {"command": ["reader"], "reader": ["llama"]}


def test_an_empty_read_and_reading_after_close(open_llama: Open) -> None:
    reader = open_llama(mode="generate")
    assert reader.read(read_request("anything", [])).labels == ()
    reader.close()
    with pytest.raises(ReadError):
        reader.health()
    spec = ReaderSpec(name="x", kind="llama", options={"model": "/nonexistent.gguf"})
    with pytest.raises(EpistemeError, match="does not exist"):
        open_reader(spec)


def test_closing_while_a_read_runs_waits_for_it_instead_of_freeing_under_it(open_llama: Open) -> None:
    import threading
    import time

    big = read_request("white whale", [" ".join(["the white whale and the sea"] * 60)] * 60)
    reader = open_llama(mode="fuse", timeout=0.3, batch_size=1)
    outcome: list[object] = []

    def run() -> None:
        try:
            outcome.append(reader.read(big))
        except ReadError as exc:
            outcome.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    while reader.busy == 0 and worker.is_alive():
        time.sleep(0.001)
    reader.close()  # returns only once the read has given its context back
    worker.join(timeout=30)
    assert not worker.is_alive() and reader._contexts == []
    assert isinstance(outcome[0], ReadError) and "timed out" in str(outcome[0])
    with pytest.raises(ReadError, match="closed"):
        reader.read(shard(1))
