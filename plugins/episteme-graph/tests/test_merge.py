"""graph merge: identity, renumbering, conflicts, the audit, the files it writes and how."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, rescore, write_graph

from episteme_core.testing import invoke
from episteme_graph.audit import audit_merge
from episteme_graph.merge import MergeConflict, merge_graphs
from episteme_graph.validate import validate, validate_value


def _incoming_with_alias_and_new_source(contextual: dict[str, Any]) -> dict[str, Any]:
    """The contextual graph seen by another producer: a new source listed first (so [1] there is [2]
    here), alpha under another id with the same resource, and one more statement."""
    graph = copy.deepcopy(contextual)
    new_source = {"id": "source-2", "file": "field-notes.txt", "type": "txt", "date": "2026-09", "url": None}
    graph["metadata"]["sources"].insert(0, new_source)
    for node in graph["nodes"]:
        node["citations"] = [{**c, "n": 2} for c in node["citations"]]
        node["statements"] = [s.replace("[1]", "[2]") for s in node["statements"]]
    for claim in graph["claims"]:
        claim["statement"] = claim["statement"].replace("[1]", "[2]")
    alpha = graph["nodes"][0]
    alpha["statements"].append("Alpha was observed in the field. [1]")
    alpha["citations"].append({"n": 1, "source": "source-2", "locator": None, "label": "notes", "url": None})
    renamed = "alpha-component"
    for node in graph["nodes"]:
        if node["id"] == "alpha":
            node["id"] = renamed
    graph["clusters"][0]["concepts"] = [renamed, "beta"]
    for edge in graph["edges"]:
        edge["source"] = renamed if edge["source"] == "alpha" else edge["source"]
        edge["id"] = f"{edge['source']}__{edge['type']}__{edge['target']}"
    for item in graph["claims"]:
        item["node"] = renamed
    for fact in graph["facts"]:
        fact["concept"] = renamed
    for chunk in graph["chunks"]:
        chunk["concepts"] = [renamed if c == "alpha" else c for c in chunk["concepts"]]
    return rescore(graph)


def test_merging_a_graph_with_itself_changes_nothing(contextual: dict[str, Any]) -> None:
    report = merge_graphs(contextual, contextual)
    assert report.added == {} and report.enriched == {}
    merged = copy.deepcopy(report.graph)
    assert merged["metadata"].pop("mode") == "merge"
    original = copy.deepcopy(contextual)
    original["metadata"].pop("mode")
    assert merged == original


def test_resource_identity_aliases_and_citations_follow_their_source(contextual: dict[str, Any]) -> None:
    incoming = _incoming_with_alias_and_new_source(contextual)
    assert validate_value(incoming).ok, validate_value(incoming).errors
    report = merge_graphs(contextual, incoming)
    merged = report.graph
    assert report.node_aliases == {"alpha-component": "alpha"}
    assert [s["id"] for s in merged["metadata"]["sources"]] == ["source-1", "source-2"]
    alpha = next(n for n in merged["nodes"] if n["id"] == "alpha")
    assert "Alpha was observed in the field. [2]" in alpha["statements"]
    assert alpha["statements"][0] == contextual["nodes"][0]["statements"][0]  # base numbers never change
    assert {c["n"]: c["source"] for c in alpha["citations"]} == {1: "source-1", 2: "source-2"}
    assert [e["id"] for e in merged["edges"]] == ["alpha__enables__beta"]
    assert len(merged["nodes"]) == 2
    assert validate_value(merged).ok
    assert audit_merge(contextual, incoming, report) == []


def test_a_different_title_fails_and_names_the_path(
    minimal: dict[str, Any], contextual: dict[str, Any]
) -> None:
    with pytest.raises(MergeConflict) as caught:
        merge_graphs(minimal, contextual)
    assert caught.value.path == "$.metadata.title"


def test_same_id_different_resource_fails(contextual: dict[str, Any]) -> None:
    incoming = copy.deepcopy(contextual)
    incoming["nodes"][1]["resource"] = "urn:kd:concept:other"
    with pytest.raises(MergeConflict, match="merge refused"):
        merge_graphs(contextual, incoming)


def _fact_changed(contextual: dict[str, Any]) -> dict[str, Any]:
    incoming = copy.deepcopy(contextual)
    incoming["facts"][0]["value"] = "5"
    return incoming


def test_a_fact_with_two_payloads_fails_by_default(contextual: dict[str, Any]) -> None:
    with pytest.raises(MergeConflict) as caught:
        merge_graphs(contextual, _fact_changed(contextual))
    assert caught.value.path.startswith("$.facts['fact-deployments-source']")


def test_record_keeps_both_facts_and_an_explicit_conflict(contextual: dict[str, Any]) -> None:
    incoming = _fact_changed(contextual)
    report = merge_graphs(contextual, incoming, "record")
    merged = report.graph
    kept = report.fact_aliases["fact-deployments-source"]
    assert kept.startswith("fact-deployments-source--conflict-")
    facts = {f["id"]: f for f in merged["facts"]}
    assert facts["fact-deployments-source"]["value"] == "2" and facts[kept]["value"] == "5"
    conflict = next(c for c in merged["fact_conflicts"] if c["id"] in report.recorded_conflicts)
    assert sorted(conflict["facts"]) == sorted(["fact-deployments-source", kept])
    assert conflict["relation"] == "tension"
    assert validate_value(merged).ok
    assert audit_merge(contextual, incoming, report) == []


def test_same_concept_metric_and_time_with_another_value_records_a_conflict(
    contextual: dict[str, Any],
) -> None:
    incoming = copy.deepcopy(contextual)
    extra = {**copy.deepcopy(contextual["facts"][0]), "id": "fact-deployments-audit", "value": "4"}
    incoming["facts"].append(extra)
    incoming = rescore(incoming)
    report = merge_graphs(contextual, incoming)
    assert len(report.recorded_conflicts) == 1
    conflict = next(c for c in report.graph["fact_conflicts"] if c["id"] == report.recorded_conflicts[0])
    assert conflict["facts"] == ["fact-deployments-audit", "fact-deployments-source"]


def test_lists_union_stably_and_objects_merge_by_key(minimal: dict[str, Any]) -> None:
    incoming = copy.deepcopy(minimal)
    incoming["nodes"][0]["statements"] = ["A new statement. [1]", "Alpha depends on Beta. [1]"]
    incoming["nodes"][0]["temporal"]["source_period"] = "2026-Q1"
    incoming["open_questions"] = ["Why?"]
    report = merge_graphs(minimal, incoming)
    alpha = report.graph["nodes"][0]
    assert alpha["statements"] == ["Alpha depends on Beta. [1]", "A new statement. [1]"]
    assert alpha["temporal"]["source_period"] == "2026-Q1"  # null took the value
    assert report.graph["open_questions"] == ["Why?"]
    assert report.enriched == {"nodes": ["alpha"]}


@pytest.mark.parametrize(
    ("left", "right", "equal"),
    [
        (1, 1.0, False),
        (1, True, False),
        (0, False, False),
        ([1, 2], [1.0, 2], False),
        ({"a": 1}, {"a": True}, False),
        ({"a": 1, "b": [1]}, {"b": [1], "a": 1}, True),  # key order differs: still the same JSON
        ({"a": {"x": 1, "y": 2}}, {"a": {"y": 2, "x": 1.0}}, False),
        ("a", "a", True),
        ([], [], True),
    ],
)
def test_values_are_equal_only_as_json_is(left: Any, right: Any, equal: bool) -> None:
    from episteme_graph.merge import canonical, same_json

    assert same_json(left, right) is equal
    assert (canonical(left) == canonical(right)) is equal


def test_the_audit_finds_a_changed_value_even_inside_a_shared_list() -> None:
    from episteme_graph.audit import preserved

    item = {"n": 1, "source": "s"}
    assert preserved({"c": [item]}, {"c": [item]})
    assert preserved({"c": [item]}, {"c": [{"source": "s", "n": 1}]})  # another object, the same JSON
    assert not preserved({"c": [item]}, {"c": [{"source": "s", "n": 1.0}]})
    assert not preserved({"c": [item, "x"]}, {"c": [item]})
    assert not preserved({"a": 1, "b": 2}, {"a": 1})


# -- files --------------------------------------------------------------------------------------


@pytest.fixture
def pair(tmp_path: Path, contextual: dict[str, Any]) -> tuple[Path, Path]:
    base = write_graph(tmp_path / "base.knowledge.json", contextual)
    incoming = write_graph(
        tmp_path / "incoming.knowledge.json", _incoming_with_alias_and_new_source(contextual)
    )
    return base, incoming


def test_in_place_needs_force_and_archives_the_prior_bytes(pair: tuple[Path, Path]) -> None:
    base, incoming = pair
    prior = base.read_bytes()
    refused = invoke("graph", "merge", str(base), str(incoming), "--json")
    assert refused.exit_code == 2 and "--force" in refused.envelope["error"]["message"]
    assert base.read_bytes() == prior
    done = invoke("graph", "merge", str(base), str(incoming), "--force", "--json")
    assert done.exit_code == 0, done.stderr
    data = done.envelope["data"]
    archive = Path(data["archived"])
    assert archive.parent == base.parent / "versions"
    assert archive.name.startswith("base.knowledge.v0001.") and archive.read_bytes() == prior
    assert validate(base)["ok"]
    diff = json.loads(Path(data["diffJson"]).read_text("utf-8"))
    assert diff["aliases"]["nodes"] == {"alpha-component": "alpha"}
    assert "# Graph merge delta" in Path(data["diffMd"]).read_text("utf-8")


def test_history_is_bounded_and_nothing_is_deleted(tmp_path: Path, contextual: dict[str, Any]) -> None:
    base = write_graph(tmp_path / "g.knowledge.json", contextual)
    seen = []
    for i in range(4):
        incoming = copy.deepcopy(contextual)
        incoming["open_questions"].append(f"Question {i}?")
        path = write_graph(tmp_path / f"in{i}.knowledge.json", incoming)
        seen.append(base.read_bytes())
        result = invoke("graph", "merge", str(base), str(path), "--force", "--max-versions", "2")
        assert result.exit_code == 0, result.stderr
    active = sorted(p.name for p in (tmp_path / "versions").glob("*.json"))
    retired = sorted(p.name for p in (tmp_path / "versions" / "retired").glob("*.json"))
    assert [n.split(".")[2] for n in active] == ["v0003", "v0004"]
    assert [n.split(".")[2] for n in retired] == ["v0001", "v0002"]
    archived = [
        p.read_bytes()
        for p in sorted((tmp_path / "versions").rglob("*.json"), key=lambda p: p.name.split(".")[2])
    ]
    assert archived == seen


def test_the_same_inputs_give_the_same_bytes(tmp_path: Path, pair: tuple[Path, Path]) -> None:
    base, incoming = pair
    outputs = []
    for run in ("one", "two"):
        folder = tmp_path / run
        folder.mkdir()
        out = folder / "merged.knowledge.json"
        assert invoke("graph", "merge", str(base), str(incoming), "--out", str(out)).exit_code == 0
        outputs.append(
            [
                out.read_bytes(),
                (folder / "merged.knowledge.diff.json").read_bytes(),
                (folder / "merged.knowledge.diff.md").read_bytes(),
            ]
        )
    assert outputs[0] == outputs[1]


@pytest.mark.parametrize("case", ["out-is-incoming", "diff-is-base", "symlink-out", "existing-out"])
def test_dangerous_targets_are_refused_before_any_write(
    tmp_path: Path, pair: tuple[Path, Path], case: str
) -> None:
    base, incoming = pair

    def files() -> dict[Path, bytes]:
        return {p: p.read_bytes() for p in tmp_path.glob("*.json") if p.is_file() and not p.is_symlink()}

    before = files()
    args = ["graph", "merge", str(base), str(incoming), "--json"]
    if case == "out-is-incoming":
        args += ["--out", str(incoming), "--force"]
    elif case == "diff-is-base":
        args += ["--out", str(tmp_path / "m.knowledge.json"), "--diff-json", str(base)]
    elif case == "symlink-out":
        (tmp_path / "link.knowledge.json").symlink_to(tmp_path / "elsewhere.json")
        args += ["--out", str(tmp_path / "link.knowledge.json"), "--force"]
    else:
        (tmp_path / "taken.knowledge.json").write_text("{}")
        args += ["--out", str(tmp_path / "taken.knowledge.json")]
    result = invoke(*args)
    assert result.exit_code == 2, result.stderr
    assert files() == {
        **before,
        **({tmp_path / "taken.knowledge.json": b"{}"} if case == "existing-out" else {}),
    }
    assert not (tmp_path / "versions").exists() and not (tmp_path / "elsewhere.json").exists()


def test_an_invalid_input_is_refused_naming_it(tmp_path: Path, pair: tuple[Path, Path]) -> None:
    base, _ = pair
    broken = FIXTURES / "broken" / "dangling-edge-target.knowledge.json"
    result = invoke("graph", "merge", str(base), str(broken), "--out", str(tmp_path / "m.json"), "--json")
    assert result.exit_code == 3
    assert result.envelope["error"]["details"]["role"] == "INCOMING"
    assert not (tmp_path / "m.json").exists()


def test_a_conflict_fails_cleanly_and_writes_nothing(tmp_path: Path, contextual: dict[str, Any]) -> None:
    base = write_graph(tmp_path / "b.knowledge.json", contextual)
    incoming = write_graph(tmp_path / "i.knowledge.json", _fact_changed(contextual))
    result = invoke(
        "graph", "merge", str(base), str(incoming), "--out", str(tmp_path / "m.knowledge.json"), "--json"
    )
    assert result.exit_code == 3
    assert "--fact-conflicts record" in result.envelope["error"]["hint"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.knowledge.json", "i.knowledge.json"]


def test_a_kill_at_any_write_step_leaves_old_or_new_bytes(tmp_path: Path, contextual: dict[str, Any]) -> None:
    """The crash matrix: SIGKILL at every crash point of an in-place merge, then a clean re-run."""
    incoming_graph = _incoming_with_alias_and_new_source(contextual)
    expected_dir = tmp_path / "expected"
    expected_dir.mkdir()
    write_graph(expected_dir / "g.knowledge.json", contextual)
    write_graph(expected_dir / "in.knowledge.json", incoming_graph)
    assert (
        invoke(
            "graph",
            "merge",
            str(expected_dir / "g.knowledge.json"),
            str(expected_dir / "in.knowledge.json"),
            "--force",
        ).exit_code
        == 0
    )
    new = (expected_dir / "g.knowledge.json").read_bytes()
    point = 1
    while True:
        folder = tmp_path / f"crash{point}"
        folder.mkdir()
        base = write_graph(folder / "g.knowledge.json", contextual)
        old = base.read_bytes()
        incoming = write_graph(folder / "in.knowledge.json", incoming_graph)
        env = {**os.environ, "EPISTEME_CRASH_AT": str(point)}
        proc = subprocess.run(
            [sys.executable, "-m", "episteme_core", "graph", "merge", str(base), str(incoming), "--force"],
            env=env,
            capture_output=True,
            timeout=120,
        )
        assert base.read_bytes() in (old, new), point
        for archive in (folder / "versions").glob("*.json"):
            assert archive.read_bytes() == old
        if proc.returncode == 0:
            assert base.read_bytes() == new
            break
        assert proc.returncode == -9, proc.stderr
        rerun = (
            invoke("graph", "merge", str(base), str(incoming), "--force")
            if base.read_bytes() == old
            else None
        )
        if rerun is not None:
            assert rerun.exit_code == 0 and base.read_bytes() == new
        point += 1
    assert point > 5  # archive, two diffs and the output each passed several crash points
