"""The human eval report explains itself: each answer's paragraph count beside its scores, and a legend
of the measures under the table (what each means; why a full answer's precision is low)."""

from __future__ import annotations

import json
from pathlib import Path

from episteme_core.testing import invoke

BOOKS = Path(__file__).parent.parent / "fixtures" / "ask" / "books"


def test_the_eval_table_counts_paragraphs_and_has_a_legend(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert invoke("--home", str(home), "ingest", "books", str(BOOKS)).exit_code == 0
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"question": "Call me Ishmael",
                                     "expected": ["book:classics/moby-dick#3"]}) + "\n", "utf-8")
    result = invoke("--home", str(home), "eval", str(questions), "--label", "legend", "--budget", "900")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["#", "hit", "recall", "prec", "mrr", "ndcg10", "chars", "paras", "ms",
                                "question"]
    report = json.loads((home / "evals" / "legend.json").read_text("utf-8"))
    [question] = report["questions"]
    row = lines[1].split()
    assert int(row[7]) == len(question["answered"]) > 0
    assert float(row[3]) == round(question["precision"], 3)
    legend = {line.split()[0]: line for line in lines if line and line[0] != " " and not line[0].isdigit()}
    for measure in ("hit", "recall", "prec", "mrr", "ndcg10", "chars"):
        assert measure in legend, measure
    text = result.stdout
    assert "up to the budget (900 chars)" in text  # the run's own budget
    assert "more readers or a larger budget return more and lower it" in text
    assert lines[-1] == f"saved {home / 'evals' / 'legend.json'}"
