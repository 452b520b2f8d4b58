"""graph evidence and graph verify against a real home: files captured with the pipeline, books
ingested as records, queried and asked, turned into evidence, and checked against the stored bytes."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from helpers import fixture_graph, rescore, write_graph

from episteme_core.testing import invoke

TEXT = (
    "The lighthouse keeper records the tide at dawn. He notes each ship by name.\n\n"
    "Storms arrive from the west in autumn; the keeper lights the lamp early.\n"
)
HTML = (
    "<!DOCTYPE html><html><head><title>Harbour rules</title></head><body>"
    "<h1 id='rules'>Harbour rules</h1><p id='mooring'>Vessels moor at the north quay after sunset.</p>"
    "<h2 id='pilots'>Pilots</h2><p>Pilots board at the outer buoy.</p></body></html>"
)
BOOK = "Chapter one.\n\nThe orchard bloomed early that year, white as snow.\n\nBees came from the hill.\n"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("world")
    home = root / "home"
    (root / "keeper.txt").write_text(TEXT, "utf-8")
    (root / "harbour.html").write_text(HTML, "utf-8")
    books = root / "books" / "orchard"
    books.mkdir(parents=True)
    (books / "orchard.txt").write_text(BOOK, "utf-8")
    (root / "map.json").write_text(
        json.dumps(
            [
                {
                    "sourceUrl": "https://example.org/keeper.txt",
                    "localPath": "keeper.txt",
                    "contentType": "text/plain",
                },
                {
                    "sourceUrl": "https://example.org/harbour.html",
                    "localPath": "harbour.html",
                    "contentType": "text/html; charset=utf-8",
                },
            ]
        ),
        "utf-8",
    )
    for args in (["pipeline", "--map", str(root / "map.json")], ["ingest", "books", str(root / "books")]):
        result = invoke("--home", str(home), *args)
        assert result.exit_code == 0, result.stderr
    return home


def _evidence(home: Path, *command: str) -> dict[str, Any]:
    found = invoke("--home", str(home), *command, "--json")
    assert found.exit_code == 0, found.stderr
    result = invoke("graph", "evidence", "--json", stdin=found.stdout.encode("utf-8"))
    assert result.exit_code == 0, result.stderr
    return result.envelope["data"]


def _graph_with(evidence: dict[str, Any]) -> dict[str, Any]:
    """The contextual graph whose only evidence and sources are the ones given."""
    graph = fixture_graph("contextual")
    graph["metadata"]["sources"] += evidence["sources"]
    graph["evidence"] += evidence["evidence"]
    graph["nodes"][1]["evidence"] = [e["id"] for e in evidence["evidence"]]
    return rescore(graph)


def _verify(home: Path, graph: dict[str, Any], tmp_path: Path, *extra: str) -> Any:
    path = write_graph(tmp_path / "g.knowledge.json", graph)
    return invoke("--home", str(home), "graph", "verify", str(path), "--json", *extra)


def test_query_results_become_evidence_that_validates_and_verifies(home: Path, tmp_path: Path) -> None:
    evidence = _evidence(home, "query", "--term", "keeper tide")
    assert evidence["from"] == "query" and evidence["evidence"]
    record = evidence["evidence"][0]
    assert record["id"].startswith("ev-") and record["support"] == "mentions"
    assert record["source"].startswith("snapshot:") and record["selector"]["type"] == "TextQuoteSelector"
    graph = _graph_with(evidence)
    validated = invoke("graph", "validate", str(write_graph(tmp_path / "v.knowledge.json", graph)), "--json")
    assert validated.exit_code == 0, validated.stderr
    result = _verify(home, graph, tmp_path)
    assert result.exit_code == 0, result.stderr
    data = result.envelope["data"]
    ours = [r for r in data["results"] if r["source"].startswith("snapshot:")]
    assert ours and all(r["status"] == "found" for r in ours)
    assert data["counts"]["unverifiable"] >= 1  # the fixture's own source is not in this home


def _query(home: Path, term: str) -> dict[str, Any]:
    found = invoke("--home", str(home), "query", "--term", term, "--json")
    assert found.exit_code == 0, found.stderr
    data: dict[str, Any] = found.envelope["data"]
    return data


@pytest.mark.parametrize(
    ("term", "matched"),
    [
        ("orchard bees hill", "across-blocks"),  # a run of a book's paragraphs (a record)
        ("harbour pilots buoy", "across-blocks"),  # an HTML heading and its paragraph
        ("keeper storms lamp", None),  # two paragraphs of a text file, verbatim in its source text
    ],
)
def test_a_snippet_across_blocks_is_quoted_whole_and_verifies(
    home: Path, tmp_path: Path, term: str, matched: str | None
) -> None:
    results = _query(home, term)["results"]
    spanning = [r for r in results if "\n\n" in r["snippet"]]
    assert spanning, [r["snippet"] for r in results]
    assert all(r["citation"]["selector"][0]["exact"] != r["snippet"] for r in spanning)  # cites one block
    evidence = _evidence(home, "query", "--term", term)
    quotes = {e["selector"]["exact"] for e in evidence["evidence"]}
    assert {r["snippet"].strip() for r in spanning} <= quotes
    for record in evidence["evidence"]:
        assert record["excerpt"] == record["selector"]["exact"]
        if "\n\n" in record["excerpt"]:
            assert "start" not in record["selector"] and "suffix" not in record["selector"]
    result = _verify(home, _graph_with(evidence), tmp_path)
    assert result.exit_code == 0, result.stderr
    ours = [r for r in result.envelope["data"]["results"] if r["source"].startswith("snapshot:")]
    assert ours and {r["status"] for r in ours} == {"found"}
    quotes_by_id = {e["id"]: e["selector"]["exact"] for e in evidence["evidence"]}
    spanning_results = [r for r in ours if "\n\n" in quotes_by_id[r["evidence"]]]
    assert spanning_results and {r.get("match") for r in spanning_results} == {matched}


def test_a_quote_across_blocks_must_join_neighbours_in_order(home: Path, tmp_path: Path) -> None:
    html_id, _ = _snapshot_of(home, "https://example.org/harbour.html")
    source = {"id": f"snapshot:{html_id}", "file": "harbour.html", "type": "html"}

    def record(ident: str, selector: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": ident,
            "source": source["id"],
            "selector": {"type": "TextQuoteSelector", **selector},
            "support": "mentions",
            "attribution_basis": "source_explicit",
        }

    evidence = {
        "sources": [source],
        "evidence": [
            record("ev-joined", {"exact": "north quay after sunset.\n\nPilots", "fragment": "pilots"}),
            record("ev-skipping", {"exact": "Harbour rules\n\nPilots"}),  # a block left out between
            record("ev-reversed", {"exact": "Pilots board at the outer buoy.\n\nVessels moor"}),
            record("ev-wrong-fragment", {"exact": "Harbour rules\n\nVessels", "fragment": "pilots"}),
            record("ev-wrong-prefix", {"exact": "Harbour rules\n\nVessels", "prefix": "Rules: "}),
        ],
    }
    result = _verify(home, _graph_with(evidence), tmp_path)
    assert result.exit_code == 3
    found = {r["evidence"]: r for r in result.envelope["error"]["details"]["results"] if r.get("evidence")}
    assert found["ev-joined"]["status"] == "found" and found["ev-joined"]["match"] == "across-blocks"
    assert found["ev-joined"]["at"]["start"] == len("Vessels moor at the ")
    assert found["ev-joined"]["at"]["end"] == len("Pilots")
    assert found["ev-joined"]["at"]["blockId"] != found["ev-joined"]["at"]["lastBlockId"]
    assert found["ev-skipping"]["status"] == "not-found"
    assert found["ev-reversed"]["status"] == "not-found"
    assert found["ev-wrong-fragment"]["status"] == "found-elsewhere"
    assert found["ev-wrong-prefix"]["status"] == "found-elsewhere"


def test_a_run_with_a_paragraph_left_out_is_quoted_up_to_the_gap(home: Path) -> None:
    from episteme_graph.evidence import evidence_from

    [result] = [r for r in _query(home, "orchard bees hill")["results"] if r.get("paragraphs")]
    assert [p["ref"].rsplit("#", 1)[1] for p in result["paragraphs"]] == ["1", "2", "3"]
    whole = evidence_from({"results": [result]})["evidence"][0]["selector"]["exact"]
    assert whole == result["snippet"]
    # As a filter would leave it: paragraph 2 out, so 1 and 3 stand side by side in the passage.
    first, _, third = result["paragraphs"]
    snippet = (
        result["snippet"][: first["end"]] + "\n\n" + result["snippet"][result["paragraphs"][2]["start"] :]
    )
    third = {**third, "start": first["end"] + 2, "end": len(snippet)}
    gapped = {**result, "snippet": snippet, "snippetEnd": len(snippet), "paragraphs": [first, third]}
    quoted = evidence_from({"results": [gapped]})["evidence"][0]["selector"]["exact"]
    assert quoted == result["snippet"][: first["end"]] == "Chapter one."


def test_the_same_results_give_the_same_records(home: Path) -> None:
    assert _evidence(home, "query", "--term", "storms west") == _evidence(
        home, "query", "--term", "storms west"
    )


def test_a_changed_quote_is_not_found_and_fails(home: Path, tmp_path: Path) -> None:
    evidence = _evidence(home, "query", "--term", "keeper tide")
    for record in evidence["evidence"]:
        record["selector"]["exact"] = record["selector"]["exact"].replace("tide", "moon")
        record.pop("excerpt_sha256")
        record["excerpt"] = record["selector"]["exact"]
    result = _verify(home, _graph_with(evidence), tmp_path)
    assert result.exit_code == 3
    statuses = {
        r["status"]
        for r in result.envelope["error"]["details"]["results"]
        if r["source"].startswith("snapshot:")
    }
    assert statuses == {"not-found"}


def test_a_wrong_position_is_found_elsewhere_with_the_true_one(home: Path, tmp_path: Path) -> None:
    # A snippet within one paragraph keeps the citation's source position.
    evidence = _evidence(home, "query", "--term", "keeper tide", "--max-chars", "80")
    record = next(r for r in evidence["evidence"] if "start" in r["selector"])
    true_start = record["selector"]["start"]
    record["selector"]["start"] += 3
    record["selector"]["end"] += 3
    result = _verify(home, _graph_with({**evidence, "evidence": [record]}), tmp_path)
    assert result.exit_code == 0
    [ours] = [r for r in result.envelope["data"]["results"] if r["source"].startswith("snapshot:")]
    assert ours["status"] == "found-elsewhere" and ours["at"]["start"] == true_start


def test_prefix_and_suffix_must_surround_the_quote(home: Path, tmp_path: Path) -> None:
    evidence = _evidence(home, "query", "--term", "keeper tide")
    record = evidence["evidence"][0]
    record["selector"].pop("start", None)
    record["selector"].pop("end", None)
    record["selector"]["prefix"] = "Nothing like this: "
    result = _verify(home, _graph_with({**evidence, "evidence": [record]}), tmp_path)
    [ours] = [r for r in result.envelope["data"]["results"] if r["source"].startswith("snapshot:")]
    assert ours["status"] == "found-elsewhere" and "prefix" in ours["reason"]


def _snapshot_of(home: Path, url: str) -> tuple[str, str]:
    from episteme_core.api import Home, read_catalog

    catalog = read_catalog(Home(home))
    record = catalog.latest(url)
    return record.id, record.content_sha256


def test_position_fragment_and_content_sha256_selectors(home: Path, tmp_path: Path) -> None:
    snapshot_id, sha = _snapshot_of(home, "https://example.org/keeper.txt")
    start = TEXT.index("Storms")
    quote = "Storms arrive from the west in autumn"
    html_id, html_sha = _snapshot_of(home, "https://example.org/harbour.html")
    graph = fixture_graph("contextual")
    graph["metadata"]["sources"] += [
        {"id": "keeper", "file": "keeper.txt", "type": "txt", "content_sha256": sha},
        {"id": f"snapshot:{html_id}", "file": "harbour.html", "type": "html"},
    ]

    def record(ident: str, source: str, selector: dict[str, Any], excerpt: str) -> dict[str, Any]:
        return {
            "id": ident,
            "source": source,
            "selector": selector,
            "support": "mentions",
            "attribution_basis": "source_explicit",
            "excerpt": excerpt,
        }

    graph["evidence"] += [
        record(
            "ev-pos",
            "keeper",
            {"type": "TextPositionSelector", "start": start, "end": start + len(quote)},
            quote,
        ),
        record(
            "ev-pos-moved", "keeper", {"type": "TextPositionSelector", "start": 0, "end": len(quote)}, quote
        ),
        record("ev-pos-out", "keeper", {"type": "TextPositionSelector", "start": 5000, "end": 5010}, "x"),
        record(
            "ev-frag",
            f"snapshot:{html_id}",
            {"type": "FragmentSelector", "fragment": "#mooring"},
            "Vessels moor at the north quay after sunset.",
        ),
        record(
            "ev-frag-wrong",
            f"snapshot:{html_id}",
            {"type": "FragmentSelector", "fragment": "#pilots"},
            "Vessels moor at the north quay after sunset.",
        ),
        record("ev-svg", "keeper", {"type": "SvgSelector", "xpath": "/svg"}, "x"),
    ]
    result = _verify(home, rescore(graph), tmp_path)
    assert result.exit_code == 3  # ev-pos-out is not found
    by_path = {r["evidence"]: r for r in result.envelope["error"]["details"]["results"] if r.get("evidence")}
    assert by_path["ev-pos"]["status"] == "found" and by_path["ev-pos"]["matchedBy"] == "content sha256"
    assert by_path["ev-pos-moved"]["status"] == "found-elsewhere"
    assert by_path["ev-pos-moved"]["at"] == {"in": "source", "start": start, "end": start + len(quote)}
    assert by_path["ev-pos-out"]["status"] == "not-found"
    assert by_path["ev-frag"]["status"] == "found"
    assert by_path["ev-frag-wrong"]["status"] == "found-elsewhere"
    assert by_path["ev-svg"]["status"] == "unverifiable"


def test_require_all_and_bind(home: Path, tmp_path: Path) -> None:
    snapshot_id, _ = _snapshot_of(home, "https://example.org/keeper.txt")
    graph = fixture_graph("contextual")  # its source-1 is not recorded here
    assert _verify(home, graph, tmp_path).exit_code == 0
    assert _verify(home, graph, tmp_path, "--require-all").exit_code == 3
    graph["evidence"][0]["selector"] = {"type": "TextQuoteSelector", "exact": "He notes each ship by name."}
    graph["evidence"][0]["excerpt"] = "He notes each ship by name."
    del graph["nodes"][0]["citations"][0]["selector"]
    graph = rescore(graph)
    bound = _verify(home, graph, tmp_path, "--require-all", "--bind", f"source-1={snapshot_id}")
    assert bound.exit_code == 0, bound.stderr
    assert bound.envelope["data"]["results"][0]["matchedBy"] == "bind"
    bad = _verify(home, graph, tmp_path, "--bind", "source-1=nothex")
    assert bad.exit_code == 2


def test_ask_paragraphs_become_whole_paragraph_quotes(home: Path, tmp_path: Path) -> None:
    evidence = _evidence(home, "ask", "When did the orchard bloom?")
    assert evidence["from"] == "ask"
    assert any(
        e["selector"]["exact"] == "The orchard bloomed early that year, white as snow."
        for e in evidence["evidence"]
    )
    result = _verify(home, _graph_with(evidence), tmp_path)
    ours = [r for r in result.envelope["data"]["results"] if r["source"].startswith("snapshot:")]
    assert ours and {r["status"] for r in ours} == {"found"}


def test_evidence_refuses_what_is_not_results() -> None:
    result = invoke("graph", "evidence", "--json", stdin=b'{"hello": 1}')
    assert result.exit_code == 3 and "query --json" in result.envelope["error"]["hint"]


def test_verify_reads_a_tampered_blob_as_a_clean_error(home: Path, tmp_path: Path) -> None:
    copy_home = tmp_path / "home"
    import shutil

    shutil.copytree(home, copy_home)
    snapshot_id, sha = _snapshot_of(copy_home, "https://example.org/keeper.txt")
    blob = next(p for p in (copy_home / "blobs").rglob(sha))
    blob.chmod(0o644)
    blob.write_bytes(b"changed")
    evidence = {
        "sources": [{"id": f"snapshot:{snapshot_id}", "file": "keeper.txt", "type": "txt"}],
        "evidence": [
            {
                "id": "ev-t",
                "source": f"snapshot:{snapshot_id}",
                "support": "mentions",
                "attribution_basis": "source_explicit",
                "selector": {"type": "TextQuoteSelector", "exact": "tide"},
            }
        ],
    }
    graph = _graph_with(copy.deepcopy(evidence))
    result = _verify(copy_home, graph, tmp_path)
    assert result.exit_code == 3 and "tampered" in result.envelope["error"]["message"]


def test_page_selectors_against_a_recorded_pdf(tmp_path: Path) -> None:
    from pdf_pages import pdf_with_pages

    from episteme_core.api import Home, read_catalog

    (tmp_path / "doc.pdf").write_bytes(
        pdf_with_pages(["The harbour opens at dawn.", "Ships leave at the evening tide."])
    )
    (tmp_path / "map.json").write_text(
        json.dumps(
            [
                {
                    "sourceUrl": "https://example.org/doc.pdf",
                    "localPath": "doc.pdf",
                    "contentType": "application/pdf",
                }
            ]
        )
    )
    home = tmp_path / "home"
    assert invoke("--home", str(home), "pipeline", "--map", str(tmp_path / "map.json")).exit_code == 0
    snapshot_id = read_catalog(Home(home)).latest("https://example.org/doc.pdf").id
    source = f"snapshot:{snapshot_id}"
    graph = fixture_graph("contextual")
    graph["metadata"]["sources"].append({"id": source, "file": "doc.pdf", "type": "pdf"})
    tide = "Ships leave at the evening tide."

    def record(ident: str, selector: dict[str, Any], excerpt: str | None = None) -> dict[str, Any]:
        item = {
            "id": ident,
            "source": source,
            "selector": selector,
            "support": "mentions",
            "attribution_basis": "source_explicit",
        }
        return {**item, "excerpt": excerpt} if excerpt is not None else item

    graph["evidence"] += [
        record("ev-page", {"type": "PageSelector", "page": 2}, tide),
        record("ev-page-wrong", {"type": "PageSelector", "page": 1}, tide),
        record("ev-page-bare", {"type": "PageSelector", "page": 1}),
        record("ev-page-missing", {"type": "PageSelector", "page": 9}),
        record("ev-quote-on-page", {"type": "TextQuoteSelector", "exact": tide, "page": 2}),
        record("ev-quote-wrong-page", {"type": "TextQuoteSelector", "exact": tide, "page": 1}),
        record("ev-position-in-pdf", {"type": "TextPositionSelector", "start": 0, "end": 5}, "Ships"),
    ]
    result = _verify(home, rescore(graph), tmp_path)
    assert result.exit_code == 3  # page 9 does not exist
    status = {r["evidence"]: r for r in result.envelope["error"]["details"]["results"] if r.get("evidence")}
    assert status["ev-page"]["status"] == "found"
    assert (
        status["ev-page-wrong"]["status"] == "found-elsewhere" and status["ev-page-wrong"]["at"]["page"] == 2
    )
    assert status["ev-page-bare"]["status"] == "found"
    assert status["ev-page-missing"]["status"] == "not-found"
    assert status["ev-quote-on-page"]["status"] == "found" and status["ev-quote-on-page"]["at"]["page"] == 2
    assert status["ev-quote-wrong-page"]["status"] == "found-elsewhere"
    assert status["ev-position-in-pdf"]["status"] == "unverifiable"
