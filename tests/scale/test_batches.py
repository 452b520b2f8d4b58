"""How a map is cut into batches: in order, every item once, heavy items one per batch."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from episteme_core.executor.base import BATCHES_PER_WORKER, batches


@given(st.lists(st.integers(min_value=0, max_value=10_000), max_size=200),
       st.integers(min_value=1, max_value=8), st.booleans())
def test_batches_keep_every_item_in_order(weights: list[int], workers: int, measured: bool) -> None:
    items = list(enumerate(weights))
    cut = batches(items, workers, (lambda item: item[1]) if measured else None)
    assert [item for batch in cut for item in batch] == items
    assert all(cut)  # no empty batch


@given(st.lists(st.integers(min_value=1, max_value=10_000), min_size=1, max_size=200),
       st.integers(min_value=1, max_value=8))
def test_a_batch_of_several_items_stays_within_its_share(weights: list[int], workers: int) -> None:
    share = sum(weights) / (workers * BATCHES_PER_WORKER)
    for batch in batches(weights, workers, lambda weight: weight):
        assert len(batch) == 1 or sum(batch) <= share


def test_shard_builds_go_one_per_batch() -> None:
    """20 shards of 50,000 chunks on 2 workers: 20 batches (cut by count they were 10 pairs, and the
    last pair kept one worker idle for a whole build)."""
    shards = [50_000] * 19 + [20_000]
    assert batches(shards, 2, lambda rows: rows) == [[rows] for rows in shards]
    assert [len(batch) for batch in batches(shards, 2)] == [2] * 10


def test_light_items_share_batches_by_work() -> None:
    files = [1] * 1_000 + [500]  # one large file among many small ones
    cut = batches(files, 2, lambda size: size)
    assert cut[-1] == [500]
    assert len(cut) <= 2 * BATCHES_PER_WORKER + 1
