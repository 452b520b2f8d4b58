"""graph export: every format byte-deterministic, each checked against what it promises."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import cypher_store
import pytest
from cypher_store import Store
from helpers import FIXTURES, fixture_graph, png_renderer_available, write_graph

from episteme_core.testing import invoke
from episteme_graph.export import canvas, chunks, ctxt, cypher, html, jsonld, markdown
from episteme_graph.exporters import EXPORTERS, default_output

SCRIPT_LABEL = "<script>window.__pwned=1</script>"
FORMATS = [e.graph_format for e in EXPORTERS]


def _hostile(graph: dict[str, Any]) -> dict[str, Any]:
    graph["nodes"][0]["label"] = SCRIPT_LABEL
    graph["nodes"][0]["definition"] = "Ends '}) DETACH DELETE n // and \u2028 breaks ]]> </script> `x` **y**"
    return graph


@pytest.mark.parametrize("fmt", FORMATS)
def test_each_format_gives_the_same_bytes_under_any_hash_seed(tmp_path: Path, fmt: str) -> None:
    if fmt == "png" and not png_renderer_available():
        pytest.skip("no PNG renderer (Chromium or cairosvg) here")
    graph = write_graph(tmp_path / "g.knowledge.json", _hostile(fixture_graph("contextual")))
    outputs = []
    for seed in ("1", "2"):
        out = tmp_path / f"{seed}.out"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "episteme_core",
                "graph",
                "export",
                str(graph),
                "--format",
                fmt,
                "--out",
                str(out),
            ],
            env=env,
            capture_output=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]


def test_the_default_output_name_and_the_artifact_form(tmp_path: Path) -> None:
    graph = write_graph(tmp_path / "g.knowledge.json", fixture_graph("minimal"))
    assert default_output(str(graph), ".canvas") == tmp_path / "g.canvas"
    assert invoke("graph", "export", str(graph), "--format", "md").exit_code == 0
    assert (tmp_path / "g.knowledge.md").is_file()
    result = invoke("graph", "export", str(graph), "--format", "ctxt", "--out", "-", "--json")
    artifact = result.envelope["data"]["artifact"]
    assert base64.b64decode(artifact["data"]) == ctxt.render(fixture_graph("minimal"), {})
    assert invoke("graph", "export", str(graph), "--format", "ctxt", "--out", "-").exit_code == 2


def test_an_export_never_overwrites_its_input(tmp_path: Path) -> None:
    graph = write_graph(tmp_path / "g.knowledge.json", fixture_graph("minimal"))
    before = graph.read_bytes()
    result = invoke("graph", "export", str(graph), "--format", "jsonld", "--out", str(graph), "--json")
    assert result.exit_code == 2 and graph.read_bytes() == before


def test_an_invalid_graph_exports_best_effort_with_a_warning(tmp_path: Path) -> None:
    broken = FIXTURES / "broken" / "dangling-edge-target.knowledge.json"
    result = invoke(
        "graph", "export", str(broken), "--format", "canvas", "--out", str(tmp_path / "x.canvas"), "--json"
    )
    assert result.exit_code == 0
    assert [w["code"] for w in result.envelope["warnings"]] == ["GRAPH_INVALID"]


def test_an_unknown_format_names_the_known_ones(tmp_path: Path) -> None:
    result = invoke("graph", "export", str(FIXTURES / "minimal.knowledge.json"), "--format", "gexf", "--json")
    assert result.exit_code == 2 and "canvas" in result.envelope["error"]["hint"]


def test_exporters_are_also_episteme_export_commands(tmp_path: Path) -> None:
    out = tmp_path / "m.cypher"
    result = invoke("export", "graph-cypher", str(FIXTURES / "minimal.knowledge.json"), "--out", str(out))
    assert result.exit_code == 0 and out.read_bytes() == cypher.render(fixture_graph("minimal"), {})
    listed = invoke("plugins", "--json").envelope["data"]
    assert "graph-canvas" in json.dumps(listed)


# -- KD-CTXT/1 ------------------------------------------------------------------------------


def test_ctxt_matches_the_reference_sample_of_the_minimal_graph() -> None:
    parsed = ctxt.parse(ctxt.render(fixture_graph("minimal"), {}))
    assert parsed["header"]["graph-sha256"].startswith("333ed9f1") and parsed["header"][
        "graph-sha256"
    ].endswith("a96c")
    assert parsed["header"]["graph-json"] == fixture_graph("minimal")
    [record] = parsed["records"]
    assert record["fields"]["id-json"] == "ch-alpha" and record["fields"]["title-json"] == "Alpha"
    assert int(record["fields"]["body-utf8-bytes"]) == 68


def test_ctxt_frames_bodies_holding_delimiters_and_line_separators() -> None:
    graph = fixture_graph("minimal")
    graph["chunks"][0]["text"] = "line one\r\n===\n---\nend \u2028 still"
    graph["metadata"]["title"] = "Title \u2028 with\nbreaks"
    data = ctxt.render(graph, {})
    header_lines = data.split(b"\n===\n")[0].decode().split("\n")
    assert len(header_lines) == 5  # every header value on one physical line
    parsed = ctxt.parse(data)
    assert parsed["records"][0]["body"] == "line one\n===\n---\nend \u2028 still"
    assert parsed["header"]["title-json"] == "Title \u2028 with\nbreaks"


def test_ctxt_without_chunks_has_one_synthetic_record_per_concept() -> None:
    graph = fixture_graph("minimal")
    del graph["chunks"]
    records = ctxt.parse(ctxt.render(graph, {}))["records"]
    assert [r["fields"]["id-json"] for r in records] == ["context:alpha", "context:beta", "context:gamma"]
    assert records[0]["fields"]["kind-json"] == "derived_concept_context"


# -- Cypher ---------------------------------------------------------------------------------


def test_importing_the_cypher_twice_changes_nothing() -> None:
    script = cypher.render(_hostile(fixture_graph("contextual")), {}).decode("utf-8")
    store = Store()
    store.run(script)
    once = store.state()
    store.run(script)
    assert store.state() == once
    graph = fixture_graph("contextual")
    kinds = [n["props"]["entity_kind"] for n in store.nodes.values()]
    assert kinds.count("concept") == len(graph["nodes"]) and kinds.count("edge") == len(graph["edges"])
    assert kinds.count("evidence") == 1 and kinds.count("question") == 1
    types = sorted({r["type"] for r in store.rels.values()})
    assert {"SUPPORTED_BY", "IN_CLUSTER", "HAS_CONCEPT", "KD_RELATIONSHIP", "FROM_CONCEPT"} <= set(types)
    relation = next(r for r in store.rels.values() if r["type"] == "KD_RELATIONSHIP")
    assert relation["props"]["relationship_type"] == "enables"


def test_the_batched_script_over_an_import_of_the_older_form_adds_nothing() -> None:
    """The older form merged each plain link with a kd_id of its own; a plain link's MERGE here
    matches such a link (same type and ends), so importing over it adds no link."""
    from episteme_graph.export.common import stable_id

    script = cypher.render(fixture_graph("contextual"), {}).decode("utf-8")
    fresh = Store()
    fresh.run(script)
    plain = [r for r in fresh.rels.values() if "kd_id" not in r["props"]]
    match = "MATCH (a:KDEntity {kd_id: row.a}), (b:KDEntity {kd_id: row.b})"
    older = [
        f"UNWIND [\n{{a: '{r['from']}', b: '{r['to']}', "
        f"id: '{stable_id('rel-' + r['type'].lower(), r['from'] + chr(0) + r['to'])}'}}\n] AS row "
        f"{match} MERGE (a)-[r:{r['type']} {{kd_id: row.id}}]->(b);"
        for r in plain
    ]
    entities = [f"{s};" for s in fresh.statements(script) if cypher_store.NODES.match(s)]
    store = Store()
    store.run("\n".join([*entities, *older]))  # what the older form had imported
    before = len(store.rels)
    assert plain and before == len(plain)
    store.run(script)
    kd_relationships = len(fresh.rels) - len(plain)
    assert len(store.rels) == before + kd_relationships  # the concept relationships had kd_ids then too


def test_cypher_ids_are_the_stable_ids_of_kind_and_identity() -> None:
    from episteme_graph.export.common import stable_id

    graph = fixture_graph("contextual")
    store = Store()
    store.run(cypher.render(graph, {}).decode("utf-8"))
    for node in graph["nodes"]:
        assert store.nodes[stable_id("concept", node["id"])]["props"]["original_id"] == node["id"]
    for item in graph["evidence"]:
        assert stable_id("evidence", item["id"]) in store.nodes
    relations = {
        r["props"]["edge_id"]: key for key, r in store.rels.items() if r["type"] == "KD_RELATIONSHIP"
    }
    assert relations and all(key == stable_id("rel-kd_relationship", edge) for edge, key in relations.items())


def test_graph_text_stays_data_in_cypher() -> None:
    script = cypher.render(_hostile(fixture_graph("contextual")), {}).decode("utf-8")
    store = Store()
    store.run(script)  # every line parses as one of the three statement forms
    concept = next(n for n in store.nodes.values() if n["props"].get("original_id") == "alpha")
    assert concept["props"]["label"] == SCRIPT_LABEL
    assert concept["props"]["definition"].startswith("Ends '}) DETACH DELETE n //")
    assert "DETACH DELETE" not in [line.split(" ")[0] for line in script.splitlines()]


def test_cypher_is_sorted_in_batches_with_the_constraint_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cypher, "BATCH", 3)
    script = cypher.render(fixture_graph("contextual"), {}).decode("utf-8")
    store = Store()
    statements = store.statements(script)
    assert statements[0] == cypher.CONSTRAINT[:-1]
    entities: list[tuple[str, str]] = []
    links: list[tuple[Any, ...]] = []
    for statement in statements[1:]:
        if match := cypher_store.NODES.match(statement):
            assert not links, "every entity comes before the first link"
            found = cypher_store.rows(match.group("rows"))
            entities += [(row["kd_id"], match.group("label")) for row in found]
        else:
            match = cypher_store.LINKS.match(statement)
            assert match
            found = cypher_store.rows(match.group("rows"))
            key = ("id",) if match.group("id") else ("a", "b")
            links += [
                (bool(match.group("props")), match.group("type"), *(row[k] for k in key)) for row in found
            ]
        assert 1 <= len(found) <= 3
    assert entities == sorted(entities) and len({e[0] for e in entities}) == len(entities)
    assert links == sorted(links) and any(link[0] for link in links)
    store.run(script)
    assert len(store.nodes) == len(entities) and len(store.rels) == len(links)


# -- JSON Canvas 1.0 ------------------------------------------------------------------------

CANVAS_SCHEMA = json.loads((FIXTURES / "jsoncanvas-1.0.schema.json").read_text("utf-8"))


def test_the_canvas_is_valid_json_canvas_1_0() -> None:
    import jsonschema

    document = json.loads(canvas.render(_hostile(fixture_graph("contextual")), {}))
    jsonschema.validate(document, CANVAS_SCHEMA)
    ids = [n["id"] for n in document["nodes"]] + [e["id"] for e in document["edges"]]
    assert len(ids) == len(set(ids))
    node_ids = {n["id"] for n in document["nodes"]}
    assert all(e["fromNode"] in node_ids and e["toNode"] in node_ids for e in document["edges"])
    texts = [n for n in document["nodes"] if n["type"] == "text"]
    assert any("&lt;script&gt;" in n["text"] for n in texts)
    groups = [n for n in document["nodes"] if n["type"] == "group"]
    assert document["nodes"][: len(groups)] == groups  # drawn below the cards


def test_the_visible_canvas_does_not_depend_on_input_order() -> None:
    graph = fixture_graph("minimal")
    reordered = fixture_graph("minimal")
    reordered["nodes"].reverse()
    reordered["edges"].reverse()
    a, b = json.loads(canvas.render(graph, {})), json.loads(canvas.render(reordered, {}))
    assert (a["nodes"], a["edges"]) == (b["nodes"], b["edges"])


# -- JSON-LD, Markdown, chunks, HTML -----------------------------------------------------------


def test_jsonld_links_every_relationship_to_a_described_concept() -> None:
    document = json.loads(jsonld.render(fixture_graph("contextual"), {}))
    ids = [item["@id"] for item in document["@graph"]]
    assert len(ids) == len(set(ids))
    alpha = next(i for i in document["@graph"] if i.get("identifier") == "alpha")
    assert alpha["@id"] == "urn:kd:concept:alpha" and alpha["kd:enables"] == [{"@id": "urn:kd:concept:beta"}]
    assert document["@context"]["@vocab"] == "https://schema.org/"


def test_markdown_shows_graph_text_as_written_never_as_markup() -> None:
    text = markdown.render(_hostile(fixture_graph("contextual")), {}).decode("utf-8")
    assert "<script>" not in text and "&lt;script&gt;" in text
    assert "\u2028" not in text
    assert "> Semantic accuracy: not evaluated" in text
    assert text.startswith('---\ntitle: "Contextual Provenance Graph"\n')


def test_chunks_are_clean_and_leave_inferences_out_by_default() -> None:
    graph = fixture_graph("contextual")
    rows = [json.loads(line) for line in chunks.render(graph, {}).decode().splitlines()]
    assert [r["id"] for r in rows] == ["chunk-alpha-source"]
    rows = [
        json.loads(line) for line in chunks.render(graph, {"include_inferred": True}).decode().splitlines()
    ]
    assert [r["id"] for r in rows] == ["chunk-alpha-inference", "chunk-alpha-source"]
    del graph["chunks"]
    rows = [json.loads(line) for line in chunks.render(graph, {}).decode().splitlines()]
    assert [r["id"] for r in rows] == ["context:alpha", "context:beta"]
    assert all("[1]" not in r["text"] for r in rows)


def test_the_html_viewer_is_one_file_with_a_strict_policy() -> None:
    page = html.render(_hostile(fixture_graph("contextual")), {}).decode("utf-8")
    policy = html.content_security_policy()
    assert f'content="{policy}"' in page
    assert (
        "'unsafe-inline'" not in policy and "default-src 'none'" in policy and "connect-src 'none'" in policy
    )
    assert page.count("<script") == 3  # the inert graph, its inert layout, and the viewer
    assert "<script>window.__pwned" not in page and "\\u003cscript\\u003ewindow.__pwned" in page
    assert "\u2028" not in page
    for marker in ('src="http', 'href="http', "@import", "fetch(", "XMLHttpRequest", "WebSocket"):
        assert marker not in page
    data = page.split('<script id="graph-data" type="application/json">')[1].split("</script>")[0]
    assert json.loads(data)["nodes"][0]["label"] == SCRIPT_LABEL


def test_a_graph_that_is_not_json_writes_no_file(tmp_path: Path) -> None:
    source = tmp_path / "g.knowledge.json"
    source.write_bytes(b'{"metadata": ')
    for fmt in FORMATS:
        result = invoke("graph", "export", str(source), "--format", fmt, "--json")
        assert result.exit_code == 3 and result.envelope["error"]["details"]["path"] == "$"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.knowledge.json"]


def test_markdown_evidence_shows_review_status_selector_and_excerpt() -> None:
    graph = fixture_graph("contextual")
    graph["evidence"].append({**graph["evidence"][0], "id": "evidence-unstated"})
    del graph["evidence"][-1]["review_status"]
    text = markdown.render(graph, {}).decode("utf-8")
    section = text[text.index("## Evidence") : text.index("## Assessments")]
    first, second = section.split("### ")[1:3]
    assert first.startswith("`evidence-alpha-beta`")
    assert "- Review status: reviewed" in first and "- Review status: unspecified" in second
    assert "**Selector:**\n\n    {" in first and '"type":"TextQuoteSelector"' in first
    assert '**Excerpt:**\n\n    "Alpha enables Beta in the German deployment profile."' in first
