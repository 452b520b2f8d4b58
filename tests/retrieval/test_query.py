"""``episteme query``: cited, bounded, paged results; clear errors and empty results that say why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from episteme_core.testing import invoke, run_cli, validate

from .conftest import commit, make_document, ok


def test_results_are_cited_sorted_and_valid(corpus: Path) -> None:
    data = ok("--home", str(corpus), "query", "--term", "gadget records receiver")
    validate(data, "query-result")
    results = data["results"]
    assert results and data["total"] == len(results)
    keys = [(-r["score"], r["chunkId"]) for r in results]
    assert keys == sorted(keys)
    for r in results:
        cite = r["citation"]
        assert r["contentTrust"] == "untrusted-source"
        assert cite["url"] == "https://example.org/widget.html"
        assert cite["link"].startswith("https://example.org/widget.html#")
        quote, position = cite["selector"]
        assert quote["type"] == "TextQuoteSelector" and position["type"] == "TextPositionSelector"
        assert quote["exact"] in r["snippet"]


def test_verbatim_text_blocks_cite_source_offsets(corpus: Path) -> None:
    data = ok("--home", str(corpus), "query", "--term", "lighthouses", "--max-chars", "80")
    (result,) = data["results"]
    cite = result["citation"]
    assert cite["positionIn"] == "source" and cite["spanExact"] is True
    source = (Path(__file__).parent.parent / "fixtures" / "retrieval" / "notes.txt").read_text("utf-8")
    quote, position = cite["selector"]
    assert source[position["start"] : position["end"]] == quote["exact"]
    assert len(result["snippet"]) <= 80


def test_paging_and_limits(build) -> None:  # type: ignore[no-untyped-def]
    docs = [make_document(f"https://e.org/{i}", [(f"H{i}", [f"shared word number {i}"])]) for i in range(7)]
    root = build(docs)
    first = ok("--home", str(root), "query", "--term", "shared", "--limit", "3")
    assert (len(first["results"]), first["total"], first["nextOffset"]) == (3, 7, 3)
    second = ok("--home", str(root), "query", "--term", "shared", "--limit", "3", "--offset", "3")
    last = ok("--home", str(root), "query", "--term", "shared", "--limit", "3", "--offset", "6")
    assert last["nextOffset"] is None and len(last["results"]) == 1
    ids = [r["chunkId"] for page in (first, second, last) for r in page["results"]]
    assert len(set(ids)) == 7
    assert [r["rank"] for r in second["results"]] == [4, 5, 6]
    past = ok("--home", str(root), "query", "--term", "shared", "--offset", "50")
    assert past["results"] == [] and past["total"] == 7 and "past the last result" in past["reason"]


@pytest.mark.parametrize(
    "args",
    [["--limit", "0"], ["--limit", "101"], ["--offset", "-1"], ["--offset", "10001"],
     ["--max-chars", "79"], ["--max-chars", "20001"], ["--since", "yesterday"]],
)
def test_out_of_range_is_invalid_usage(corpus: Path, args: list[str]) -> None:
    result = invoke("--home", str(corpus), "query", "--term", "gadget", *args, "--json")
    assert result.exit_code == 2 and result.envelope["error"]["code"] == "INVALID_USAGE"


def test_bounds_are_accepted(corpus: Path) -> None:
    data = ok("--home", str(corpus), "query", "--term", "the", "--limit", "100", "--max-chars", "80")
    assert all(len(r["snippet"]) <= 80 for r in data["results"])
    ok("--home", str(corpus), "query", "--term", "the", "--limit", "1", "--max-chars", "20000",
       "--offset", "10000")



def test_no_page_is_offered_past_the_deepest_offset(build, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """Past ``MAX_OFFSET`` (10,000; here 4, so seven documents reach it) a page is refused, so the page
    that ends past it names no next page and says why (``RESULT_WINDOW``); one that ends at it still
    names the next."""
    import episteme_core.search.query as q

    monkeypatch.setattr(q, "MAX_OFFSET", 4)
    docs = [make_document(f"https://e.org/{i}", [(f"H{i}", [f"shared word number {i}"])]) for i in range(7)]
    root = build(docs)
    args = ("--home", str(root), "--json", "query", "--term", "shared", "--limit", "2")
    at = invoke(*args, "--offset", "2")
    assert at.envelope["data"]["nextOffset"] == 4 and at.envelope["warnings"] == []
    last = invoke(*args, "--offset", "4")
    assert [r["rank"] for r in last.envelope["data"]["results"]] == [5, 6]
    assert last.envelope["data"]["nextOffset"] is None and last.envelope["data"]["total"] == 7
    (warning,) = last.envelope["warnings"]
    assert warning["code"] == "RESULT_WINDOW" and (warning["offset"], warning["total"]) == (4, 7)
    past = invoke(*args, "--offset", "5")
    assert past.exit_code == 2 and past.envelope["error"]["code"] == "INVALID_USAGE"

@pytest.mark.parametrize("term", [None, "", "   "])
def test_no_term_is_invalid_usage(corpus: Path, term: str | None) -> None:
    args = ["--term", term] if term is not None else []
    result = invoke("--home", str(corpus), "query", *args, "--json")
    assert result.exit_code == 2 and "--term" in result.envelope["error"]["message"]


def test_punctuation_only_term_is_empty_with_reason(corpus: Path) -> None:
    data = ok("--home", str(corpus), "query", "--term", "?!")
    assert data["results"] == [] and "no words" in data["reason"]


def test_filters(build) -> None:  # type: ignore[no-untyped-def]
    docs = [
        make_document("https://w3.org/a", [("A", ["gadget rules", "gadget example"])], family="w3c",
                      authority="normative", normativity=["normative", "example"]),
        make_document("https://e.org/b", [("B", ["gadget notes"])]),
        make_document("book:c/x", [("x", ["gadget diary"])], kind="books", document_type="record",
                      times=["2026-03-01T00:00:00Z"]),
    ]
    root = build(docs)

    def total(*args: str) -> int:
        return ok("--home", str(root), "query", "--term", "gadget", *args)["total"]  # type: ignore[no-any-return]

    # the two chunks of section A (one normative, one an example) are scored as one passage
    assert total() == 3
    assert total("--family", "w3c") == 1
    assert total("--authority", "normative") == 1
    assert total("--document-type", "record") == 1
    assert total("--source", "books") == 1
    assert total("--source", "books", "--source", "http") == 3
    # a passage passes a facet filter when one of its chunks does, and shows only those chunks
    example = ok("--home", str(root), "query", "--term", "gadget", "--normativity", "example")
    assert example["total"] == 1 and example["results"][0]["snippet"] == "gadget example"
    assert example["results"][0]["normativity"] == "example" and example["results"][0]["paragraphs"] is None
    whole = ok("--home", str(root), "query", "--term", "gadget rules", "--family", "w3c")["results"][0]
    assert whole["snippet"] == "gadget rules\n\ngadget example" and len(whole["paragraphs"]) == 2
    assert total("--since", "2026-02-01") == 1
    assert total("--since", "2026-04-01") == 0
    nothing = ok("--home", str(root), "query", "--term", "gadget", "--family", "nope")
    assert nothing["results"] == [] and "filters" in nothing["reason"]
    unknown = ok("--home", str(root), "query", "--term", "gadget", "--source", "git")
    assert unknown["results"] == [] and "no shard holds source git" in unknown["reason"]


def test_missing_index_is_stale(tmp_path: Path) -> None:
    result = invoke("--home", str(tmp_path / "none"), "query", "--term", "x", "--json")
    assert result.exit_code == 3
    error = result.envelope["error"]
    assert error["code"] == "STALE_INDEX" and error["hint"] == "run episteme index"


def test_changed_chunks_make_the_index_stale(build) -> None:  # type: ignore[no-untyped-def]
    root = build([make_document("https://e.org/a", [("A", ["old words"])])])
    commit(root, [make_document("https://e.org/a", [("A", ["new words"])])])
    ok("--home", str(root), "chunk")
    result = invoke("--home", str(root), "query", "--term", "words", "--json")
    assert result.exit_code == 3 and result.envelope["error"]["code"] == "STALE_INDEX"
    ok("--home", str(root), "index")
    assert ok("--home", str(root), "query", "--term", "new")["total"] == 1


def test_other_analyzer_version_is_stale(build) -> None:  # type: ignore[no-untyped-def]
    import attrs

    from episteme_core.records.canonical import canonical_bytes
    from episteme_core.records.convert import structure, unstructure
    from episteme_core.records.storage import StageIndex
    from episteme_core.store.commits import index_fingerprint

    root = build([make_document("https://e.org/a", [("A", ["words"])])])
    path = root / "shards" / "index.json"
    index = structure(json.loads(path.read_text()), StageIndex, source="test")
    meta = {**index.meta, "analyzer": {**index.meta["analyzer"], "version": "unicode-v0"}}
    index = attrs.evolve(index, meta=meta)
    index = attrs.evolve(index, fingerprint=index_fingerprint(index))
    path.write_bytes(canonical_bytes(unstructure(index)))
    result = invoke("--home", str(root), "query", "--term", "words", "--json")
    assert result.exit_code == 3 and "unicode-v0" in result.envelope["error"]["message"]
    assert result.envelope["error"]["code"] == "STALE_INDEX"
    assert ok("--home", str(root), "index")["resharded"] is True
    assert ok("--home", str(root), "query", "--term", "words")["total"] == 1


def test_human_output_reads_at_a_glance(corpus: Path) -> None:
    result = invoke("--home", str(corpus), "query", "--term", "gadget", "--limit", "1")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].startswith("3 result(s) for “gadget”")
    assert lines[2].startswith("1. Widget Protocol") and "[untrusted-source]" in lines[2]
    assert "gadget" in lines[3]
    assert lines[4].strip().startswith("https://example.org/widget.html#") and "snapshot" in lines[4]
    assert lines[-1] == "Next: --offset 1"


def test_cold_query_as_a_new_process(corpus: Path) -> None:
    result = run_cli(["--home", str(corpus), "query", "--term", "harbour", "--json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["data"]["total"] == 1
