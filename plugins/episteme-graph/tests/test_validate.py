"""graph validate: the reference graphs, the broken corpus, the two schema engines, the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, fixture_graph, write_graph

from episteme_core.testing import invoke
from episteme_core.testing import validate as validate_schema
from episteme_graph.validate import validate, validate_value

BROKEN = FIXTURES / "broken"
EXPECTED: dict[str, dict[str, str]] = json.loads((BROKEN / "expected.json").read_text("utf-8"))


@pytest.mark.parametrize("name", ["minimal", "contextual"])
def test_the_reference_graphs_score_100_with_no_finding(name: str) -> None:
    report = validate(FIXTURES / f"{name}.knowledge.json")
    assert report["ok"] and report["findings"] == []
    assert report["conformanceScore"] == 100
    assert report["semanticAccuracyEvaluated"] is False
    assert "semantic accuracy was not evaluated" in report["statement"]


def test_the_broken_corpus_is_what_make_broken_writes() -> None:
    from make_broken import build

    built = build()
    assert sorted(built) == sorted(EXPECTED)
    for stem, item in built.items():
        assert (BROKEN / f"{stem}.knowledge.json").read_bytes() == item["bytes"], stem


@pytest.mark.parametrize("stem", sorted(EXPECTED))
def test_each_broken_variant_fails_with_its_expected_message(stem: str) -> None:
    expected = EXPECTED[stem]
    report = validate(BROKEN / f"{stem}.knowledge.json")
    hits = [
        f
        for f in report["findings"]
        if f["path"] == expected["path"]
        and f["rule"] == expected["rule"]
        and expected["message"] in f["message"]
    ]
    assert hits, (stem, report["findings"])
    if expected["rule"] == "unknown-key":
        assert report["ok"] and hits[0]["level"] == "warning"
    else:
        assert not report["ok"] and hits[0]["level"] == "error"
    assert report["conformanceScore"] == max(0, 100 - 10 * report["errorCount"] - 2 * report["warningCount"])


@pytest.mark.parametrize("stem", sorted(EXPECTED))
def test_both_schema_engines_give_the_same_findings(stem: str) -> None:
    value = json.loads((BROKEN / f"{stem}.knowledge.json").read_text("utf-8"))
    compiled = validate_value(value, engine="compiled")
    reference = validate_value(value, engine="jsonschema")
    assert compiled.findings == reference.findings


def test_one_problem_counts_once_where_schema_and_rule_meet(contextual: dict[str, Any]) -> None:
    contextual["metadata"]["sources"][0]["url"] = "javascript:alert(1)"
    findings = [f for f in validate_value(contextual).findings if f.path == "$.metadata.sources[0].url"]
    assert [f.rule for f in findings] == ["unsafe-url"]


def test_warnings_cost_two_and_errors_ten(minimal: dict[str, Any]) -> None:
    minimal["nodes"][0]["colour"] = "red"  # warning
    minimal["clusters"].append({"id": "c3", "label": "Empty", "concepts": []})  # warning + count error
    report = validate_value(minimal, check_stored_scores=False).report()
    assert (report["errorCount"], report["warningCount"]) == (1, 2)
    assert report["conformanceScore"] == 100 - 10 - 4


def test_an_unknown_well_formed_spec_version_is_a_warning(minimal: dict[str, Any]) -> None:
    minimal["metadata"]["distiller_spec_version"] = "9.9"
    minimal["metadata"]["quality_score"] = 98
    report = validate_value(minimal).report()
    assert report["ok"] and [f["rule"] for f in report["findings"]] == ["unknown-spec-version"]
    assert report["conformanceScore"] == 98


def test_a_spec_1_1_graph_without_conformance_score_is_warned(contextual: dict[str, Any]) -> None:
    del contextual["metadata"]["conformance_score"]
    contextual["metadata"]["quality_score"] = 98
    report = validate_value(contextual).report()
    assert [f["rule"] for f in report["findings"]] == ["missing-conformance-score"]


def test_a_label_holding_script_is_text_not_a_finding(minimal: dict[str, Any]) -> None:
    minimal["nodes"][0]["label"] = "<script>alert(1)</script>"
    assert validate_value(minimal).report()["findings"] == []


# -- bad input: clean errors at $, never a crash ------------------------------------------------


def _cli(*args: str) -> Any:
    return invoke("graph", "validate", *args, "--json")


def test_not_json_is_invalid_input_at_the_root(tmp_path: Path) -> None:
    path = tmp_path / "g.knowledge.json"
    path.write_bytes(b"{not json")
    result = _cli(str(path))
    assert result.exit_code == 3
    error = result.envelope["error"]
    assert error["code"] == "INVALID_INPUT" and error["details"]["path"] == "$"


@pytest.mark.parametrize(
    "data,words",
    [
        (b'{"a": 1, "a": 2}', "duplicate key"),
        (b'{"a": NaN}', "NaN"),
        (b'{"a": "\\ud800"}', "surrogate"),
        (b"\xff\xfe{}", "UTF-8"),
        (b'{"a": ' + b"9" * 5000 + b"}", "digits"),
        (b"[" * 10_000 + b"]" * 10_000, "nesting"),
        (b"[" * 257 + b"]" * 257, "nesting deeper than 256"),
        (b'{"a": 1e999}', "too large for a double"),
    ],
)
def test_malformed_json_is_a_clean_error(tmp_path: Path, data: bytes, words: str) -> None:
    path = tmp_path / "g.knowledge.json"
    path.write_bytes(data)
    result = _cli(str(path))
    assert result.exit_code == 3, result.stderr
    assert words in result.envelope["error"]["message"]
    assert "Traceback" not in result.stderr


def test_nesting_of_256_is_read(tmp_path: Path) -> None:
    path = tmp_path / "g.knowledge.json"
    path.write_bytes(b'{"x":' + b"[" * 255 + b"]" * 255 + b"}")  # 256 containers deep
    result = _cli(str(path))
    assert result.exit_code == 3
    assert result.envelope["error"]["details"]["findings"]  # read, then found wanting: not a parse error


def test_the_byte_bound_holds_at_and_just_past_the_limit(tmp_path: Path) -> None:
    data = (FIXTURES / "minimal.knowledge.json").read_bytes()
    path = tmp_path / "g.knowledge.json"
    path.write_bytes(data)
    assert invoke("graph", "validate", str(path), "--max-input-bytes", str(len(data))).exit_code == 0
    result = _cli(str(path), "--max-input-bytes", str(len(data) - 1))
    assert result.exit_code == 5 and result.envelope["error"]["code"] == "LIMIT_EXCEEDED"


def test_a_200_mb_graph_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    path = tmp_path / "huge.knowledge.json"
    with open(path, "wb") as handle:
        handle.truncate(200 * 1024 * 1024)  # sparse: costs no disk
    result = _cli(str(path))
    assert result.exit_code == 5 and result.envelope["error"]["code"] == "LIMIT_EXCEEDED"


def test_a_top_level_array_is_a_finding_at_the_root(tmp_path: Path) -> None:
    path = tmp_path / "g.knowledge.json"
    path.write_text("[]")
    findings = _cli(str(path)).envelope["error"]["details"]["findings"]
    assert findings[0]["path"] == "$" and findings[0]["rule"] == "schema:type"


def test_the_cli_envelope_validates_and_failures_carry_the_report(tmp_path: Path) -> None:
    ok = _cli(str(FIXTURES / "contextual.knowledge.json"))
    assert ok.exit_code == 0
    validate_schema(ok.envelope, "cli-envelope")
    assert ok.envelope["data"]["conformanceScore"] == 100
    broken = _cli(str(BROKEN / "dangling-edge-target.knowledge.json"))
    validate_schema(broken.envelope, "cli-envelope")
    assert broken.envelope["error"]["details"]["errorCount"] >= 1


def test_human_output_names_each_finding_and_the_statement(tmp_path: Path) -> None:
    graph = fixture_graph("minimal")
    graph["nodes"][0]["colour"] = "red"
    graph["metadata"]["quality_score"] = 98
    result = invoke("graph", "validate", str(write_graph(tmp_path / "g.knowledge.json", graph)))
    assert result.exit_code == 0
    assert "warning $.nodes[0].colour: unknown field 'colour'" in result.stdout
    assert "conformance_score 98/100" in result.stdout
    assert "semantic accuracy was not evaluated" in result.stdout


def test_stdin_is_read(tmp_path: Path) -> None:
    data = (FIXTURES / "minimal.knowledge.json").read_bytes()
    result = invoke("graph", "validate", "-", "--json", stdin=data)
    assert result.exit_code == 0 and result.envelope["data"]["file"] == "stdin"


def test_the_library_function_takes_bytes_and_a_home(tmp_path: Path) -> None:
    from episteme_core.api import Home

    data = (FIXTURES / "minimal.knowledge.json").read_bytes()
    report = validate(data, Home(tmp_path / "home"))
    assert report["conformanceScore"] == 100


def test_one_real_error_costs_ten_points_not_thirty(minimal: dict[str, Any]) -> None:
    """The stored scores (both 100) are stale once the graph has an error: they are reported, but
    the error is counted once, so the graph scores 90."""
    minimal["metadata"]["conformance_score"] = 100
    minimal["nodes"][0]["definition"] = ""  # one real error: an empty definition
    report = validate_value(minimal).report()
    rules = sorted(f["rule"] for f in report["findings"])
    assert len(rules) == 3 and rules.count("stored-score") == 2, rules
    assert report["errorCount"] == 1 and report["conformanceScore"] == 90 and not report["ok"]


def test_a_stale_score_alone_is_one_error(minimal: dict[str, Any]) -> None:
    minimal["metadata"]["conformance_score"] = 90
    minimal["metadata"]["quality_score"] = 80  # both stale, and unequal: three findings, one error
    report = validate_value(minimal).report()
    assert [f["rule"] for f in report["findings"]] == ["stored-score"] * 3
    assert report["errorCount"] == 1 and report["conformanceScore"] == 90 and not report["ok"]


@pytest.mark.parametrize(
    "key",
    [
        "r\u0435\u0430s\u043ening",  # Cyrillic е, а, о
        "\u0441hain_of_thought",  # Cyrillic с
        "\uff52\uff45\uff41\uff53\uff4f\uff4e\uff49\uff4e\uff47",  # full-width ｒｅａｓｏｎｉｎｇ
        "\uff23\uff4f\uff54",  # full-width Ｃｏｔ
        "\u03f2\u03bft",  # Greek lunate sigma and omicron: ϲοt
        "scr\u0430tch-p\u0430d",  # Cyrillic а, a separator
        "\U0001d41c\U0001d428\U0001d42d",  # mathematical bold 𝐜𝐨𝐭
        "Hidden \u0422houghts",  # Cyrillic capital Т
        "re\u0430so\u0301ning",  # a combining accent over o
    ],
)
def test_look_alike_private_keys_are_refused(minimal: dict[str, Any], key: str) -> None:
    minimal["nodes"][0][key] = "step one, step two"
    report = validate_value(minimal).report()
    private = [f for f in report["findings"] if f["rule"] == "private-reasoning"]
    from episteme_graph.paths import join

    assert [(f["path"], f["level"]) for f in private] == [(join(["nodes", 0, key]), "error")], report
    assert not report["ok"]


@pytest.mark.parametrize(
    "key", ["r\u00e9sum\u00e9", "\u0441\u0442\u0430\u0442\u0443\u0441", "reasons", "co\u0442s"]
)
def test_other_non_ascii_keys_are_not_private(minimal: dict[str, Any], key: str) -> None:
    minimal["nodes"][0][key] = "x"
    rules = [f["rule"] for f in validate_value(minimal).report()["findings"]]
    assert "private-reasoning" not in rules and "unknown-key" in rules


def test_the_repositorys_schema_copy_equals_the_shipped_schema() -> None:
    """schema/knowledge.schema.json (the repository's schema folder, for producers) is the very file
    the plugin ships and validates with; both reference graphs fit it."""
    from episteme_core.testing import validate as fits

    root = Path(__file__).resolve().parents[3]
    shipped = Path(__file__).resolve().parents[1] / "episteme_graph" / "schema" / "knowledge.schema.json"
    copy = root / "schema" / "knowledge.schema.json"
    assert copy.read_bytes() == shipped.read_bytes()
    for name in ("minimal", "contextual"):
        fits(json.loads((FIXTURES / f"{name}.knowledge.json").read_text("utf-8")), "knowledge")
