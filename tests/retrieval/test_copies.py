"""A passage whose very text a home holds twice (a document under two URLs, a section unchanged in a
second version) is one result that names the other place (``also``), not two results: the page
fills with other passages, paging never shows a folded copy, and texts that differ stay apart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from episteme_core.bm25.shards import open_shards
from episteme_core.search.query import query, render
from episteme_core.store.home import Home
from episteme_core.testing import validate

from .conftest import make_document, ok

_SECTIONS = [
    ("Harpoons", ["The harpoon is thrown from the bow of the boat when the whale rises."]),
    ("Lines", ["The harpoon line runs aft from the tub and around the loggerhead."]),
    ("Lances", ["After the harpoon holds, the lance is used to reach the whale's life."]),
    ("Boats", ["Each boat carries two tubs of harpoon line and a spare harpoon."]),
]


def _home(build: Any) -> Path:
    changed = [*_SECTIONS[:3],
               ("Boats", ["Each boat carries three tubs of harpoon line and a spare harpoon."])]
    return build([  # type: ignore[no-any-return]
        make_document("https://mirror-a.example/whaling", _SECTIONS),
        make_document("https://mirror-b.example/whaling", _SECTIONS),  # the same document, another URL
        make_document("https://e.org/whaling-2", changed),  # a second version: one section changed
    ])


def _texts(results: list[dict[str, Any]]) -> list[str]:
    return [r["snippet"] for r in results]


def test_a_text_held_three_times_is_one_result_naming_the_other_places(build) -> None:  # type: ignore[no-untyped-def]
    root = _home(build)
    data = ok("--home", str(root), "query", "--term", "harpoon", "--limit", "10")
    validate(data, "query-result")
    results = data["results"]
    assert len(_texts(results)) == len(set(_texts(results))) == 5  # four sections, one changed twice over
    for result in results:
        holders = {result["source"], *(copy["source"] for copy in result["also"])}
        words = " ".join(result["snippet"].split()[:6])
        same = [r for r in (ok("--home", str(root), "query", "--term", words, "--exact")["results"])
                if r["snippet"] == result["snippet"]]
        assert len(same) == 1  # --exact folds the same way
        if "three tubs" in result["snippet"]:
            assert holders == {"https://e.org/whaling-2"}
        elif "two tubs" in result["snippet"]:
            assert holders == {"https://mirror-a.example/whaling", "https://mirror-b.example/whaling"}
        else:
            assert len(holders) == 3 and len(result["also"]) == 2
        for copy in result["also"]:  # each place cites the snippet's start in its own copy
            assert copy["link"].startswith(copy["source"] + "#") and copy["chunkId"] != result["chunkId"]


def test_paging_never_shows_a_folded_copy_and_the_text_names_it(build) -> None:  # type: ignore[no-untyped-def]
    root = _home(build)
    home = Home(root)
    shards = open_shards(home)
    whole = query(home, "harpoon", limit=10, shard_set=shards)
    pages = [query(home, "harpoon", limit=2, offset=offset, shard_set=shards) for offset in (0, 2, 4)]
    shown = [r.snippet for page in pages for r in page.results]
    assert shown == [r.snippet for r in whole.results] and len(shown) == len(set(shown)) == 5
    assert pages[0].next_offset == 2 and pages[1].next_offset == 4 and pages[2].next_offset is None
    # a first page holding every text: only copies follow it, so there is no next page
    assert query(home, "harpoon", limit=5, shard_set=shards).next_offset is None
    assert query(home, "harpoon", limit=4, shard_set=shards).next_offset == 4
    assert whole.total == 12  # the matching units, before any is folded
    assert "also, the same text: https://mirror-" in render(whole)
    hits, _ = shards.search(shards.terms("harpoon"), 20)
    assert len(hits) == 12  # the index keeps every copy: only what a page shows is folded


@pytest.mark.parametrize("another_shard", [False, True])
def test_texts_of_one_length_stay_apart_and_deep_pages_fold_their_copies(build, another_shard: bool) -> None:  # type: ignore[no-untyped-def]
    # thirty texts of one length that differ in one letter, held under two URLs of one shard (and
    # once more in another shard, a file), beside the same texts in capitals (the same words, other
    # text): every page, from every offset, shows and folds what the whole list does
    letters = "abcdefghijklmnopqrstuvwxyz0123"
    sections = [(f"Tub {letter}", [f"The harpoon line of tub {letter} runs aft to the loggerhead."])
                for letter in letters]
    shouted = [(heading, [text.upper() for text in texts]) for heading, texts in sections]
    documents = [make_document("https://mirror-a.example/tubs", sections),
                 make_document("https://mirror-b.example/tubs", sections),
                 make_document("https://loud.example/tubs", shouted)]
    if another_shard:
        documents.append(make_document("file:///srv/tubs.txt", sections, kind="file"))
    home = Home(build(documents))
    shards = open_shards(home)
    assert len(shards.shards) == (2 if another_shard else 1)
    whole = query(home, "harpoon line", limit=100, shard_set=shards)
    texts = [r.snippet for r in whole.results]
    assert len({len(text) for text in texts}) == 1 and len(texts) == len(set(texts)) == 60
    lower = {"https://mirror-a.example/tubs", "https://mirror-b.example/tubs"}
    for result in whole.results:
        places = {result.source, *(copy.source for copy in result.also)}
        if result.snippet.isupper():
            assert places == {"https://loud.example/tubs"}
        else:
            assert places == (lower | {"file:///srv/tubs.txt"} if another_shard else lower)

    def shown(results: Any) -> list[tuple[str, str]]:  # a page names the copies it read: not ``also``
        return [(r.snippet, r.source) for r in results]

    for limit in (1, 7, 13):
        pages = [query(home, "harpoon line", limit=limit, offset=offset, shard_set=shards)
                 for offset in range(0, 60, limit)]
        assert [item for page in pages for item in shown(page.results)] == shown(whole.results)
        # a next page where another text follows, and none after the last (copies alone follow it)
        assert all(page.next_offset == page.offset + limit for page in pages[:-1])
        assert pages[-1].next_offset is None
    assert query(home, "harpoon line", limit=10, offset=60, shard_set=shards).results == []


def test_copies_ranked_right_after_a_page_are_named_in_it(build) -> None:  # type: ignore[no-untyped-def]
    # one text under three URLs, ranked above every other text: a page of one result names the two
    # other places, though they lie past the page, and has no next page but the other text's
    same = [("Lines", ["The harpoon line runs aft from the tub and around the loggerhead."])]
    other = [("Boats", ["Each boat carries a spare harpoon."])]
    home = Home(build([make_document(f"https://mirror-{n}.example/lines", same) for n in "abc"]
                      + [make_document("https://e.org/boats", other)]))
    first = query(home, "harpoon line loggerhead", limit=1)
    assert {first.results[0].source, *(copy.source for copy in first.results[0].also)} == {
        f"https://mirror-{n}.example/lines" for n in "abc"}
    assert first.next_offset == 1
    second = query(home, "harpoon line loggerhead", limit=1, offset=1)
    assert second.results[0].source == "https://e.org/boats" and second.next_offset is None
