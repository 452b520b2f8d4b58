"""A snapshot no extractor or family can take (a family or extractor an older episteme committed
without checking) fails alone: its document is ``failed`` with a diagnostic, every other source
extracts, the stage commits, and the summaries name the failed one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from episteme_core.stages.snapshots import SnapshotWriter, make_identity
from episteme_core.store.home import Home
from episteme_core.testing import invoke, validate


def _older_home(root: Path) -> Home:
    """What an older episteme committed: three pages, one naming an unknown family, one an unknown
    extractor (its manifest passed then)."""
    home = Home(root)
    with SnapshotWriter(home, "snapshot") as writer:
        for url, body, options in (
            ("https://example.org/good", b"<h1>Good</h1><p>Good evidence.</p>", {}),
            ("https://example.org/family", b"<p>Family evidence.</p>", {"family": "gone-family"}),
            ("https://example.org/extractor", b"<p>Extractor evidence.</p>", {"extractor": "docx"}),
        ):
            identity = make_identity("http", url, body, final_url=url, content_type="text/html")
            writer.observe(identity, body, options=options)
        writer.commit()
    return home


def test_extract_commits_every_other_document_and_names_the_failed(tmp_path: Path) -> None:
    home = _older_home(tmp_path / "home")
    result = invoke("--home", str(home.root), "extract", "--json")
    assert result.exit_code == 0, result.stderr
    data = result.envelope["data"]
    assert data["counts"] == {"extracted": 1, "reused": 0, "failed": 2}
    rows = {row["source"]: row for row in data["documents"]}
    assert rows["https://example.org/family"]["diagnostics"] == ["FAMILY_UNKNOWN"]
    assert rows["https://example.org/extractor"]["diagnostics"] == ["EXTRACTOR_UNKNOWN"]
    assert rows["https://example.org/good"]["status"] == "ok"
    warned = [w for w in result.envelope["warnings"] if w["code"] == "EXTRACTION_FAILED"]
    assert sorted(w["source"] for w in warned) == ["https://example.org/extractor", "https://example.org/family"]
    assert "gone-family" in warned[1]["message"] and "known: generic" in warned[1]["message"]
    documents = json.loads((home.root / "documents" / "index.json").read_bytes())
    assert len(documents["entries"]) == 3  # committed, the failed ones too
    human = invoke("--home", str(home.root), "extract", "--force")
    assert human.exit_code == 0
    assert "failed: https://example.org/family (FAMILY_UNKNOWN)" in human.stdout
    again = invoke("--home", str(home.root), "extract", "--json")
    assert again.envelope["data"]["counts"] == {"extracted": 0, "reused": 1, "failed": 2}  # decided once


def test_the_failed_document_says_why_and_what_to_do(tmp_path: Path) -> None:
    home = _older_home(tmp_path / "home")
    assert invoke("--home", str(home.root), "extract").exit_code == 0
    from episteme_core.stages.documents import read_documents

    failed = {d.source: d for d in read_documents(home) if d.status == "failed"}
    document = failed["https://example.org/family"]
    validate(json.loads(document.to_bytes()), "document")
    [diagnostic] = document.diagnostics
    assert diagnostic.code == "FAMILY_UNKNOWN" and diagnostic.level == "error"
    assert "install the plugin" in (diagnostic.detail or "")
    assert document.sections == []


@pytest.mark.parametrize("command", [["pipeline"], ["ingest"]])
def test_the_pipeline_and_a_pack_go_on_past_it(tmp_path: Path, command: list[str]) -> None:
    home = _older_home(tmp_path / "home")
    files = tmp_path / "files"
    files.mkdir()
    (files / "a.txt").write_text("Mapped evidence.\n")
    mapping = files / "map.json"
    mapping.write_text(json.dumps([{"sourceUrl": "https://example.org/mapped", "localPath": "a.txt"}]))
    args = [*command, "--map", str(mapping)] if command == ["pipeline"] else command
    result = invoke("--home", str(home.root), *args, "--json")
    assert result.exit_code == 0, result.stderr
    data = result.envelope["data"]
    if command == ["pipeline"]:
        assert sorted(data["extract"]["failed"]) == ["https://example.org/extractor", "https://example.org/family"]
        assert sorted(data["extract"]["extracted"]) == ["https://example.org/good", "https://example.org/mapped"]
        human = invoke("--home", str(home.root), "pipeline", "--map", str(mapping))
        assert "extract: 0 extracted, 0 failed, 4 unchanged" in human.stdout
    else:
        assert data["pack"]["status"] == "ok" and data["pack"]["extracted"] == 1
        assert sorted(data["pack"]["failed"]) == ["https://example.org/extractor", "https://example.org/family"]
    hits = invoke("--home", str(home.root), "query", "--term", "evidence", "--json")
    assert hits.exit_code == 0 and hits.envelope["data"]["results"]
