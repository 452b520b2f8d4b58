"""The ingest dispatcher (bare, --all, --reshard, the lock), the record extractor, one store for all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from episteme_core.extract.family import Family
from episteme_core.personal.extractor import RecordExtractor
from episteme_core.personal.limits import RECORD_CONTENT_TYPE
from episteme_core.personal.model import Paragraph, build_record
from episteme_core.records.canonical import canonical_bytes
from episteme_core.records.extraction import ExtractRequest
from episteme_core.records.storage import SnapshotRecord
from episteme_core.stages.snapshots import make_identity
from episteme_core.store.lock import WriterLock

from .conftest import SHORT, SPOTTER, Cli, tree


@pytest.fixture(autouse=True)
def _no_honcho(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HONCHO_BASE_URL", "HONCHO_API_KEY", "HONCHO_WORKSPACE_ID"):
        monkeypatch.delenv(name, raising=False)


def _snapshot(data: bytes, source: str, record_id: str) -> SnapshotRecord:
    identity = make_identity(source, record_id, data, content_type=RECORD_CONTENT_TYPE, charset="utf-8")
    return SnapshotRecord(
        id=identity.snapshot_id, capture_kind=source, source=record_id, final_url=None,
        content_type=RECORD_CONTENT_TYPE, charset="utf-8", byte_length=len(data),
        content_sha256=identity.content_sha256, observed_at="2025-01-01T00:00:00Z",
    )


def test_record_extractor_one_block_per_paragraph() -> None:
    record = build_record(
        id="chat:claude/p/s", source="claude", time="2025-01-01T00:00:00Z", title="t",
        paragraphs=[
            Paragraph(n=0, text="hello", time="2025-01-01T00:00:01Z", attributes={"role": "user"}),
            Paragraph(n=0, text="Bash {}", time=None, kind="tool_call", attributes={"role": "assistant"}),
        ],
    )
    data = record.to_bytes()
    document = RecordExtractor().extract(
        ExtractRequest(record=_snapshot(data, "claude", record.id), content=data, family=Family())
    )
    assert document.document_type == "record" and document.status == "ok"
    assert document.source == "chat:claude/p/s" and document.source_kind == "claude"
    blocks = document.blocks()
    assert [(b.kind, b.text, b.anchor, b.time) for b in blocks] == [
        ("message", "hello", "1", "2025-01-01T00:00:01Z"),
        ("message", "Bash {}", "2", "2025-01-01T00:00:00Z"),
    ]
    assert blocks[0].attributes == {"role": "user", "n": 1, "paragraphKind": "text"}
    assert blocks[1].attributes["marked"] is True and blocks[1].attributes["n"] == 2
    broken = RecordExtractor().extract(
        ExtractRequest(record=_snapshot(b"{nope", "claude", "x"), content=b"{nope", family=Family())
    )
    assert broken.status == "failed" and broken.diagnostics[0].code == "RECORD_INVALID"


def test_bare_ingest_on_an_empty_home(cli: Cli) -> None:
    result = cli("ingest", "--json")
    assert result.exit_code == 0 and result.envelope["data"]["pack"]["status"] == "empty"


def test_all_runs_configured_sources_then_packs(home: Path, projects: Path, cli: Cli) -> None:
    home.mkdir()
    (home / "config.json").write_bytes(canonical_bytes({"claude_projects": str(projects)}))
    (home / "intent.md").write_text("# Why\nTo remember.\n", encoding="utf-8")
    result = cli("ingest", "--all", "--json")
    assert result.exit_code == 0, result.stderr
    rows = {row["source"]: row for row in result.envelope["data"]["sources"]}
    assert rows["claude"]["captured"] == 4 and rows["intent"]["captured"] == 1
    assert rows.get("honcho", {"status": "not configured"})["status"] == "not configured"
    assert result.envelope["data"]["pack"]["status"] == "ok"
    listed = {r["source"]: r for r in cli("sources", "--json").envelope["data"]["sources"]}
    assert listed["claude"]["shardStatus"] == listed["intent"]["shardStatus"] == "current"
    again = cli("ingest", "--all", "--json")
    assert all(row.get("captured", 0) == 0 for row in again.envelope["data"]["sources"])


def test_all_runs_the_rest_and_exits_with_the_worst_status_naming_the_failed(
        home: Path, projects: Path, cli: Cli) -> None:
    home.mkdir()
    (home / "config.json").write_bytes(canonical_bytes({"claude_projects": str(projects)}))
    (home / "intent.md").mkdir()  # not a file: the intent source fails
    result = cli("ingest", "--all", "--no-pack-does-not-exist", "--json")
    assert result.exit_code == 2  # unknown option
    result = cli("ingest", "--all", "--json")
    assert result.exit_code == 3  # the intent source's INVALID_INPUT: a run with a failure is not a success
    error = result.envelope["error"]
    assert error["code"] == "INVALID_INPUT" and error["details"]["failed"] == ["intent"]
    assert "1 of 2 source(s) failed: intent (INVALID_INPUT" in error["message"]
    rows = {row["source"]: row for row in error["details"]["sources"]}
    assert rows["intent"]["status"] == "failed" and rows["intent"]["error"]["code"] == "INVALID_INPUT"
    assert rows["claude"]["captured"] == 4  # the others ran, and were packed
    assert error["details"]["pack"]["status"] == "ok"
    assert "SOURCE_FAILED" in [w["code"] for w in result.envelope["warnings"]]
    assert cli("sources", "--json").envelope["data"]["records"] == 4
    human = cli("ingest", "--all")
    assert human.exit_code == 3 and "intent" in human.stderr


def test_all_fails_when_every_configured_source_fails(home: Path, cli: Cli) -> None:
    home.mkdir()
    (home / "intent.md").mkdir()
    (home / "config.json").write_bytes(canonical_bytes({"claude_projects": str(home / "none")}))
    result = cli("ingest", "--all", "--json")
    assert result.exit_code == 3 and result.envelope["error"]["code"] == "INVALID_INPUT"


def test_all_with_a_source_is_a_usage_error(books: Path, cli: Cli) -> None:
    result = cli("ingest", "--all", "books", str(books), "--json")
    assert result.exit_code == 2 and result.envelope["error"]["code"] == "INVALID_USAGE"


def test_reshard_rebuilds_every_shard(books: Path, cli: Cli) -> None:
    first = cli("ingest", "books", str(books), "--json").envelope["data"]["pack"]
    assert first["status"] == "ok" and first["shardsBuilt"] >= 1
    same = cli("ingest", "--json").envelope["data"]["pack"]
    assert same["shardsBuilt"] == 0
    rebuilt = cli("ingest", "--reshard", "--json").envelope["data"]["pack"]
    assert rebuilt["resharded"] is True and rebuilt["shardsBuilt"] == rebuilt["shards"] >= 1


def test_a_second_writer_gets_resource_busy(home: Path, books: Path, cli: Cli) -> None:
    home.mkdir()
    with WriterLock(home / "writer.lock", "test holder"):
        before = tree(home)
        result = cli("ingest", "books", str(books), "--json")
        assert result.exit_code == 7 and result.envelope["error"]["code"] == "RESOURCE_BUSY"
        assert cli("ingest", "--json").exit_code == 7
        assert tree(home) == before
        # readers do not need the lock
        assert cli("sources", "--json").exit_code == 0


def test_one_store_ask_reaches_books_and_chats(books: Path, projects: Path, cli: Cli) -> None:
    assert cli("ingest", "books", str(books), "--no-pack").exit_code == 0
    assert cli("ingest", "claude", "--projects", str(projects)).exit_code == 0
    chat = cli("ask", "phx.server doesnt seem to start", "--filter", "claude", "--json")
    assert chat.exit_code == 0, chat.stderr
    answer = {p["ref"]: p["text"] for p in chat.envelope["data"]["paragraphs"]}
    ref = f"chat:claude/{SPOTTER}/{SHORT}#1"
    assert ref in answer
    # what ask cites is exactly what show prints
    assert cli("show", ref, "--json").envelope["data"]["paragraph"]["text"] == answer[ref]
    assert all(not r.startswith("book:") for r in answer)
    book = cli("ask", "Elizabeth Darcy pride", "--filter", "books", "--json")
    assert book.exit_code == 0 and "book:library/pg1342_pride_and_prejudice" in book.stdout
    recent = cli("ask", "parser lexer", "--since", "2026-01-01", "--json")
    assert recent.exit_code == 0 and "-path-to-Demo" not in recent.stdout  # that session is from 2025


def test_one_store_query_reaches_specs_and_records(projects: Path, tmp_path: Path, cli: Cli) -> None:
    page = tmp_path / "spec.txt"
    page.write_text("The parser MUST reject a lexer token it cannot read.\n", encoding="utf-8")
    entry = {"sourceUrl": "https://example.org/spec", "localPath": "spec.txt"}
    (tmp_path / "map.json").write_text(json.dumps([entry]))
    assert cli("manual-ingest", "--map", str(tmp_path / "map.json")).exit_code == 0
    assert cli("ingest", "claude", "--projects", str(projects)).exit_code == 0  # packs the spec too
    both = cli("query", "--term", "parser lexer", "--limit", "20", "--json")
    assert both.exit_code == 0, both.stderr
    kinds = {r["citation"].get("recordId") is None for r in both.envelope["data"]["results"]}
    assert kinds == {True, False}  # a spec chunk and record chunks in one ranking
    narrowed = cli("query", "--term", "parser lexer", "--source", "claude", "--json")
    assert narrowed.envelope["data"]["results"]
    assert all(r["citation"].get("recordId", "").startswith("chat:claude/")
               for r in narrowed.envelope["data"]["results"])
    since = cli("query", "--term", "parser lexer", "--source", "claude", "--since", "2026-01-01", "--json")
    assert not any("-path-to-Demo" in json.dumps(r) for r in since.envelope["data"]["results"])
