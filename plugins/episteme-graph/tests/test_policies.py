"""graph merge policies (--prefer) and graph diff: what a refusal says, what each policy keeps, what
the diffs show (both values, the path, the record's id and label)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from helpers import rescore, write_graph

from episteme_core.testing import invoke
from episteme_graph.audit import audit_merge
from episteme_graph.merge import MergeConflict, merge_graphs
from episteme_graph.policy import At, MergePolicy, parse_path
from episteme_graph.validate import validate_value


def _contradicting(contextual: dict[str, Any]) -> dict[str, Any]:
    incoming = copy.deepcopy(contextual)
    incoming["metadata"]["title"] = "Another title"
    incoming["nodes"][0]["definition"] = "Another definition."
    return incoming


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("metadata.title", ("metadata", "title")),
        ("$.metadata.title", ("metadata", "title")),
        ("nodes['alpha'].cluster", ("nodes", At("alpha"), "cluster")),
        ('edges["a__uses__b"].weight', ("edges", At("a__uses__b"), "weight")),
        ("nodes[*].definition", ("nodes", At("*"), "definition")),
        ("nodes[alpha]", ("nodes", At("alpha"))),
    ],
)
def test_paths_are_read_as_written(text: str, path: tuple[Any, ...]) -> None:
    assert parse_path(text) == path


def test_the_default_refuses_and_names_the_policies_that_would_resolve(
    tmp_path: Path, contextual: dict[str, Any]
) -> None:
    base = write_graph(tmp_path / "b.knowledge.json", contextual)
    incoming = write_graph(tmp_path / "i.knowledge.json", _contradicting(contextual))
    result = invoke("graph", "merge", str(base), str(incoming), "--out", str(tmp_path / "m.json"), "--json")
    assert result.exit_code == 3
    error = result.envelope["error"]
    assert error["details"]["path"] == "$.metadata.title"
    assert error["details"]["base"] == "Contextual Provenance Graph"
    assert error["details"]["incoming"] == "Another title"
    assert error["details"]["resolveWith"] == [
        "--prefer metadata.title=base",
        "--prefer metadata.title=incoming",
    ]
    assert "--prefer metadata.title=incoming" in error["message"] and "--prefer" in error["hint"]
    assert not (tmp_path / "m.json").exists()


def test_a_node_conflict_names_the_concept(tmp_path: Path, contextual: dict[str, Any]) -> None:
    incoming = copy.deepcopy(contextual)
    incoming["nodes"][0]["definition"] = "Another definition."
    base = write_graph(tmp_path / "b.knowledge.json", contextual)
    path = write_graph(tmp_path / "i.knowledge.json", incoming)
    result = invoke("graph", "merge", str(base), str(path), "--out", str(tmp_path / "m.json"), "--json")
    details = result.envelope["error"]["details"]
    assert details["path"] == "$.nodes['alpha'].definition"
    assert details["record"] == {"collection": "nodes", "id": "alpha", "label": "Alpha"}


@pytest.mark.parametrize(
    ("prefer", "title", "definition"),
    [
        (["base"], "Contextual Provenance Graph", "The enabling component in the deployment profile."),
        (["incoming"], "Another title", "Another definition."),
        (
            ["incoming", "nodes[*].definition=base"],
            "Another title",
            "The enabling component in the deployment profile.",
        ),
        (["metadata=incoming", "nodes['alpha'].definition=incoming"], "Another title", "Another definition."),
    ],
)
def test_each_policy_keeps_what_it_says_and_records_the_rest(
    contextual: dict[str, Any], prefer: list[str], title: str, definition: str
) -> None:
    incoming = _contradicting(contextual)
    report = merge_graphs(contextual, incoming, MergePolicy.from_options("error", prefer))
    assert report.graph["metadata"]["title"] == title
    assert report.graph["nodes"][0]["definition"] == definition
    assert sorted(r.to_json()["path"] for r in report.resolutions) == [
        "$.metadata.title",
        "$.nodes['alpha'].definition",
    ]
    assert audit_merge(contextual, incoming, report) == []
    assert validate_value(report.graph).ok


def test_a_path_preference_leaves_other_conflicts_refused(contextual: dict[str, Any]) -> None:
    with pytest.raises(MergeConflict) as caught:
        merge_graphs(
            contextual, _contradicting(contextual), MergePolicy.from_options("error", ["metadata.title=base"])
        )
    assert caught.value.path == "$.nodes['alpha'].definition"


def test_a_global_preference_never_chooses_between_facts(contextual: dict[str, Any]) -> None:
    incoming = copy.deepcopy(contextual)
    incoming["facts"][0]["value"] = "5"
    with pytest.raises(MergeConflict) as caught:
        merge_graphs(contextual, incoming, MergePolicy.from_options("error", ["incoming"]))
    assert caught.value.path.startswith("$.facts[")
    kept = merge_graphs(contextual, incoming, MergePolicy.from_options("record", ["incoming"]))
    assert kept.fact_aliases and not kept.resolutions
    chosen = merge_graphs(
        contextual, incoming, MergePolicy.from_options("error", ["facts[*].value=incoming"])
    )
    assert chosen.graph["facts"][0]["value"] == "5" and len(chosen.resolutions) == 1


def test_a_concept_in_two_clusters_keeps_one_by_policy(contextual: dict[str, Any]) -> None:
    """The spec gives a concept one cluster: a concept in another cluster incoming is a conflict
    at its cluster field, refused by default, settled by a policy; membership is recomputed."""
    incoming = copy.deepcopy(contextual)
    incoming["clusters"].append({"id": "cluster-two", "label": "Two", "concepts": []})
    incoming["nodes"][0]["cluster"] = "cluster-two"
    incoming = rescore(incoming)
    with pytest.raises(MergeConflict) as caught:
        merge_graphs(contextual, incoming)
    assert caught.value.path == "$.nodes['alpha'].cluster"
    report = merge_graphs(
        contextual, incoming, MergePolicy.from_options("error", ["nodes[*].cluster=incoming"])
    )
    clusters = {c["id"]: c["concepts"] for c in report.graph["clusters"]}
    assert clusters["cluster-two"] == ["alpha"] and "alpha" not in clusters[contextual["clusters"][0]["id"]]
    assert audit_merge(contextual, incoming, report) == []


def test_an_identity_conflict_says_no_policy_settles_it(tmp_path: Path, contextual: dict[str, Any]) -> None:
    incoming = copy.deepcopy(contextual)
    incoming["nodes"][1]["resource"] = "urn:kd:concept:other"
    base = write_graph(tmp_path / "b.knowledge.json", contextual)
    path = write_graph(tmp_path / "i.knowledge.json", incoming)
    result = invoke(
        "graph",
        "merge",
        str(base),
        str(path),
        "--out",
        str(tmp_path / "m.json"),
        "--prefer",
        "incoming",
        "--json",
    )
    details = result.envelope["error"]["details"]
    assert result.exit_code == 3 and details["resolveWith"] == [] and not details["resolvable"]
    assert "no policy settles" in result.envelope["error"]["hint"]


def test_a_bad_preference_is_a_usage_error(tmp_path: Path, contextual: dict[str, Any]) -> None:
    base = write_graph(tmp_path / "b.knowledge.json", contextual)
    for bad in (["sideways"], ["metadata.title=both"], ["metadata.title=base", "metadata.title=incoming"]):
        args = [a for p in bad for a in ("--prefer", p)]
        result = invoke(
            "graph", "merge", str(base), str(base), "--out", str(tmp_path / "m.json"), *args, "--json"
        )
        assert result.exit_code == 2, result.stderr


def test_the_diffs_show_each_settled_conflict_with_both_values(
    tmp_path: Path, contextual: dict[str, Any]
) -> None:
    base = write_graph(tmp_path / "b.knowledge.json", contextual)
    incoming = write_graph(tmp_path / "i.knowledge.json", _contradicting(contextual))
    out = tmp_path / "m.knowledge.json"
    result = invoke("graph", "merge", str(base), str(incoming), "--out", str(out), "--prefer", "incoming")
    assert result.exit_code == 0, result.stderr
    diff = json.loads((tmp_path / "m.knowledge.diff.json").read_text("utf-8"))
    assert diff["policy"] == {"factConflicts": "error", "prefer": "incoming", "preferPaths": []}
    resolved = {r["path"]: r for r in diff["resolved"]}
    assert resolved["$.metadata.title"]["base"] == "Contextual Provenance Graph"
    assert resolved["$.nodes['alpha'].definition"]["record"]["label"] == "Alpha"
    text = (tmp_path / "m.knowledge.diff.md").read_text("utf-8")
    assert "- `$.nodes['alpha'].definition` in nodes `alpha` (Alpha)" in text
    assert '  - Base: `"The enabling component in the deployment profile."`' in text
    assert '  - Incoming: `"Another definition."`' in text
    assert "  - Kept: incoming (`--prefer incoming`)" in text


def test_recorded_fact_conflicts_are_named_by_their_facts(tmp_path: Path, contextual: dict[str, Any]) -> None:
    incoming = copy.deepcopy(contextual)
    incoming["facts"][0]["value"] = "5"
    base = write_graph(tmp_path / "b.knowledge.json", contextual)
    path = write_graph(tmp_path / "i.knowledge.json", incoming)
    out = tmp_path / "m.knowledge.json"
    assert (
        invoke(
            "graph", "merge", str(base), str(path), "--out", str(out), "--fact-conflicts", "record"
        ).exit_code
        == 0
    )
    text = (tmp_path / "m.knowledge.diff.md").read_text("utf-8")
    section = text[text.index("### Recorded fact conflicts") : text.index("## Validation")]
    assert "fact `fact-deployments-source`" in section and '= `"5"`' in section and '= `"2"`' in section


# -- graph diff ---------------------------------------------------------------------------------


def test_diff_lists_added_removed_changed_and_conflicts(tmp_path: Path, contextual: dict[str, Any]) -> None:
    other = _contradicting(contextual)
    other["nodes"][0]["statements"].append("Alpha was seen again. [1]")
    other["open_questions"] = [*other["open_questions"], "Why?"]
    other["edges"] = []
    other = rescore(other)
    a = write_graph(tmp_path / "a.knowledge.json", contextual)
    b = write_graph(tmp_path / "b.knowledge.json", other)
    result = invoke("graph", "diff", str(a), str(b), "--json")
    assert result.exit_code == 0, result.stderr
    data = result.envelope["data"]
    assert data["removed"] == {
        "edges": [{"collection": "edges", "id": "alpha__enables__beta", "label": "Alpha enables Beta"}]
    }
    conflicts = {c["path"]: c for c in data["conflicts"]}
    assert set(conflicts) == {"$.metadata.title", "$.nodes['alpha'].definition"}
    assert conflicts["$.nodes['alpha'].definition"]["a"] == contextual["nodes"][0]["definition"]
    assert conflicts["$.nodes['alpha'].definition"]["b"] == "Another definition."
    assert conflicts["$.nodes['alpha'].definition"]["record"]["label"] == "Alpha"
    changes = [c for item in data["changed"] for c in item["changes"]]
    assert {
        "path": "$.nodes['alpha'].statements",
        "change": "items-added",
        "items": ["Alpha was seen again. [1]"],
    } in changes
    text = invoke("graph", "diff", str(a), str(b)).stdout
    assert "- `$.nodes['alpha'].definition` in nodes `alpha` (Alpha)" in text
    assert "--prefer nodes['alpha'].definition=incoming" in text


def test_diff_of_a_graph_with_itself_is_empty(tmp_path: Path, contextual: dict[str, Any]) -> None:
    a = write_graph(tmp_path / "a.knowledge.json", contextual)
    data = invoke("graph", "diff", str(a), str(a), "--json").envelope["data"]
    assert data["counts"] == {"added": 0, "removed": 0, "changed": 0, "conflicts": 0}


def test_diff_follows_resources_and_source_numbers(tmp_path: Path, contextual: dict[str, Any]) -> None:
    """A concept renamed with the same resource, its citations renumbered by a new first source: the
    same concept, the same citations (a merge would alias and renumber them too)."""
    from test_merge import _incoming_with_alias_and_new_source

    other = _incoming_with_alias_and_new_source(contextual)
    a = write_graph(tmp_path / "a.knowledge.json", contextual)
    b = write_graph(tmp_path / "b.knowledge.json", other)
    data = invoke("graph", "diff", str(a), str(b), "--json").envelope["data"]
    assert data["aliases"]["nodes"] == {"alpha-component": "alpha"}
    assert data["conflicts"] == [] and "nodes" not in data["added"]
    assert data["added"] == {
        "sources": [{"collection": "sources", "id": "source-2", "label": "field-notes.txt"}]
    }
