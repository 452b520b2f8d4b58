"""``episteme diff`` between two homes, and ``episteme pipeline`` (progress, summary, idempotent re-run)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from episteme_core.testing import invoke, validate

from .conftest import FIXTURES, commit, make_document, ok


def test_diff_reports_documents_sections_and_blocks(tmp_path: Path) -> None:
    old = commit(tmp_path / "old", [
        make_document("https://e.org/a", [("One", ["same", "before"]), ("Two", ["gone"])]),
        make_document("https://e.org/b", [("B", ["removed doc"])]),
    ]).root
    new = commit(tmp_path / "new", [
        make_document("https://e.org/a", [("One", ["same", "after"]), ("Three", ["x"]), ("Four", ["y"])]),
        make_document("https://e.org/c", [("C", ["added doc"])]),
    ]).root
    data = ok("diff", "--from", str(old), "--to", str(new), "--out", "-")
    artifact = data["artifact"]
    validate(artifact, "diff")
    s = artifact["summary"]
    assert s["documents"] == {"added": 1, "removed": 1, "changed": 1}
    changed = next(d for d in artifact["documents"] if d["status"] == "changed")
    assert changed["sections"]["changed"] == ["s1", "s2"]  # s1's block text, s2 heading
    assert changed["sections"]["added"] == ["s3"]
    assert changed["blocks"]["changed"] == ["b2", "b3"]
    assert [d["source"] for d in artifact["documents"]] == sorted(d["source"] for d in artifact["documents"])
    same = ok("diff", "--from", str(old), "--to", str(old), "--out", "-")["artifact"]
    assert same["documents"] == []


def test_diff_writes_a_file_and_needs_json_for_stdout(tmp_path: Path, monkeypatch) -> None:
    old = commit(tmp_path / "old", [make_document("https://e.org/a", [("A", ["x"])])]).root
    out = tmp_path / "diff.json"
    data = ok("diff", "--from", str(old), "--to", str(old), "--out", str(out))
    assert json.loads(out.read_text())["fingerprint"] == data["fingerprint"]
    assert data["bytes"] == len(out.read_bytes()) and data["outputPath"] == str(out)
    monkeypatch.chdir(tmp_path)  # without --out: diffs/diff.json under the current folder
    default = ok("diff", "--from", str(old), "--to", str(old))
    written = tmp_path / "diffs" / "diff.json"
    assert default["outputPath"] == str(written) and "artifact" not in default
    assert written.read_bytes() == out.read_bytes()
    inline = ok("diff", "--from", str(old), "--to", str(old), "--out", "-")
    validate(inline["artifact"], "artifact")
    assert inline["outputPath"] is None and inline["bytes"] == len(out.read_bytes())
    result = invoke("diff", "--from", str(old), "--to", str(old), "--out", "-")
    assert result.exit_code == 2
    missing = invoke("diff", "--from", str(tmp_path / "nope"), "--to", str(old), "--json")
    assert missing.exit_code == 3 and "no such home" in missing.envelope["error"]["message"]
    empty = tmp_path / "empty"
    empty.mkdir()
    none = invoke("diff", "--from", str(empty), "--to", str(old), "--json")
    assert none.exit_code == 3 and "no extracted documents" in none.envelope["error"]["message"]


def test_pipeline_runs_every_stage_and_reruns_do_nothing(tmp_path: Path) -> None:
    root = tmp_path / "home"
    first = invoke("--home", str(root), "pipeline", "--map", str(FIXTURES / "map.json"), "--json",
                   "--progress", "always")
    assert first.exit_code == 0, first.stderr
    data = first.envelope["data"]
    assert data["capture"]["counts"]["captured"] == 2
    assert len(data["extract"]["extracted"]) == 2 and data["chunk"]["chunked"] == 2
    assert data["index"]["built"] == ["file-0001"]
    events = [json.loads(line) for line in first.stderr.splitlines() if line.startswith("{")]
    stages = {e["stage"] for e in events}
    assert {"pipeline", "manual-ingest", "extract", "chunk", "index"} <= stages
    for event in events:
        validate(event, "progress-event")
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and p.name != "log.jsonl"}
    again = invoke("--home", str(root), "pipeline", "--map", str(FIXTURES / "map.json"), "--json")
    data = again.envelope["data"]
    assert data["capture"]["counts"]["unchanged"] == 2
    assert data["extract"]["extracted"] == [] and data["chunk"]["chunked"] == 0
    assert data["index"]["built"] == [] and data["index"]["changed"] is False
    after = {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and p.name != "log.jsonl"}
    assert after == before
    assert ok("--home", str(root), "query", "--term", "lighthouses")["total"] == 1


def test_pipeline_picks_up_a_changed_file(tmp_path: Path) -> None:
    work = tmp_path / "src"
    shutil.copytree(FIXTURES, work)
    root = tmp_path / "home"
    ok("--home", str(root), "pipeline", "--map", str(work / "map.json"))
    (work / "notes.txt").write_text("Only lighthouses now.\n\nAnd a second paragraph.\n", "utf-8")
    data = ok("--home", str(root), "pipeline", "--map", str(work / "map.json"))
    assert data["extract"]["extracted"] == ["https://example.org/notes.txt"]
    assert data["chunk"]["chunked"] == 1 and data["index"]["built"] == ["file-0002"]
    assert ok("--home", str(root), "query", "--term", "harbour")["total"] == 0


def test_pipeline_needs_a_manifest_or_a_map(tmp_path: Path) -> None:
    result = invoke("--home", str(tmp_path / "h"), "pipeline", "--json")
    assert result.exit_code == 2
    bad = invoke("--home", str(tmp_path / "h"), "pipeline", "--map", str(FIXTURES / "map.json"),
                 "--max-chars", "300", "--overlap-chars", "300", "--json")
    assert bad.exit_code == 2 and not (tmp_path / "h" / "snapshots").exists()
