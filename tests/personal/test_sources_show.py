"""``sources`` and ``show``: readers that never write, verbatim text with citations, stale refusal."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from episteme_core.testing import run_cli, validate

from .conftest import SHORT, SPOTTER, Cli, tree


@pytest.fixture
def packed(books: Path, projects: Path, home: Path, cli: Cli) -> Path:
    """A home with books and Claude sessions ingested and packed into shards."""
    assert cli("ingest", "books", str(books), "--no-pack").exit_code == 0
    result = cli("ingest", "claude", "--projects", str(projects), "--json")
    assert result.exit_code == 0, result.stderr
    assert result.envelope["data"]["pack"]["status"] == "ok", result.envelope
    return home


def test_sources_counts_and_shard_status(packed: Path, cli: Cli) -> None:
    result = cli("sources", "--json")
    assert result.exit_code == 0
    data = result.envelope["data"]
    validate(data, "sources")
    validate(result.envelope, "cli-envelope")
    rows = {row["source"]: row for row in data["sources"]}
    assert set(rows) == {"books", "claude"}
    assert rows["books"]["records"] == 2 and rows["claude"]["records"] == 4
    assert rows["claude"]["markedParagraphs"] > 0
    assert rows["claude"]["timeSpan"] == {"from": "2025-06-14T10:02:00Z", "to": "2026-02-12T14:13:05.048Z"}
    assert all(row["shards"] >= 1 and row["shardStatus"] == "current" for row in rows.values())
    assert data["behind"] is False and result.envelope["warnings"] == []
    text = cli("sources").stdout
    assert "books" in text and "claude" in text


def test_show_paragraph_is_verbatim_with_citation(packed: Path, cli: Cli) -> None:
    record_id = f"chat:claude/{SPOTTER}/{SHORT}"
    whole = cli("show", record_id, "--json").envelope["data"]
    validate(whole, "show")
    stored = whole["record"]["paragraphs"]
    for paragraph in stored:
        one = cli("show", f"{record_id}#{paragraph['n']}", "--json").envelope["data"]
        validate(one, "show")
        assert one["paragraph"]["text"] == paragraph["text"]
        assert one["citation"]["cite"] == f"{record_id}#{paragraph['n']}"
        assert one["citation"]["snapshotId"] == whole["citation"]["snapshotId"]
    human = cli("show", f"{record_id}#1")
    assert human.stdout.startswith("mix phx.server doesnt seem to start\n\n-- " + record_id + "#1")


def test_sources_and_show_never_write(packed: Path, cli: Cli) -> None:
    before = tree(packed)
    cli("sources", "--json")
    cli("show", "book:library/pg1342_pride_and_prejudice#2")
    cli("show", "book:library/nope#1")
    assert tree(packed) == before
    assert not (packed / "writer.lock").exists()


def test_show_refuses_when_shards_are_behind(packed: Path, books: Path, cli: Cli) -> None:
    book = books / "pg1342_pride_and_prejudice.txt"
    marker = b"PRIDE AND PREJUDICE ***\r\n"
    book.write_bytes(book.read_bytes().replace(marker, marker + b"\r\nOne more paragraph.\r\n", 1))
    assert cli("ingest", "books", str(books), "--no-pack").exit_code == 0
    refused = cli("show", "book:library/pg1342_pride_and_prejudice#1", "--json")
    assert refused.exit_code == 3
    assert refused.envelope["error"]["code"] == "STALE_INDEX"
    assert refused.envelope["error"]["hint"] == "run episteme ingest"
    rows = {r["source"]: r for r in cli("sources", "--json").envelope["data"]["sources"]}
    assert rows["books"]["behind"] is True and rows["claude"]["behind"] is False
    warned = cli("sources", "--json").envelope["warnings"]
    assert warned and "run episteme ingest" in warned[0]["message"]
    # another source's shards are still current: show works there
    assert cli("show", f"chat:claude/{SPOTTER}/{SHORT}#1").exit_code == 0
    assert cli("show", "book:library/pg1342_pride_and_prejudice#1", "--stale-ok").exit_code == 0
    packed_again = cli("ingest", "--json")
    assert packed_again.exit_code == 0 and packed_again.envelope["data"]["pack"]["status"] == "ok"
    last = cli("show", "book:library/pg1342_pride_and_prejudice", "--json").envelope["data"]["record"]
    assert last["paragraphs"][0]["text"] == "One more paragraph."


@pytest.mark.parametrize("reference", [
    "book:../../etc/passwd", "/etc/passwd", "book:library/x#0", "book:library/x#-1", "book:library/x#abc",
    "book:library/x#1#2", "a b", "book:library/" + "x" * 1100, "book:library/x\\y", "",
])
def test_bad_references_are_clean_errors(packed: Path, cli: Cli, reference: str) -> None:
    result = cli("show", reference, "--json")
    assert result.exit_code == 3, reference
    assert result.envelope["error"]["code"] == "INVALID_INPUT"


def test_unknown_record_and_paragraph(packed: Path, cli: Cli) -> None:
    unknown = cli("show", "book:library/unknown", "--json")
    assert unknown.exit_code == 3 and "no record" in unknown.envelope["error"]["message"]
    whole = cli("show", "book:library/pg1342_pride_and_prejudice", "--json").envelope["data"]
    last = len(whole["record"]["paragraphs"])
    assert cli("show", f"book:library/pg1342_pride_and_prejudice#{last}").exit_code == 0
    past = cli("show", f"book:library/pg1342_pride_and_prejudice#{last + 1}", "--json")
    assert past.exit_code == 3 and past.envelope["error"]["details"]["paragraphs"] == last


def test_show_an_older_snapshot_from_history(packed: Path, books: Path, cli: Cli) -> None:
    first = cli("show", "book:library/pg2701_moby_dick", "--json").envelope["data"]["citation"]["snapshotId"]
    book = books / "pg2701_moby_dick.txt"
    book.write_bytes(b"Call me Ishmael.\r\n")
    cli("ingest", "books", str(books))
    old = cli("show", "book:library/pg2701_moby_dick#1", "--snapshot", first, "--json").envelope["data"]
    assert old["citation"]["latest"] is False and old["paragraph"]["text"] != "Call me Ishmael."
    new = cli("show", "book:library/pg2701_moby_dick#1", "--json").envelope["data"]
    assert new["paragraph"]["text"] == "Call me Ishmael."
    bad = cli("show", "book:library/pg2701_moby_dick", "--snapshot", "0" * 64, "--json")
    assert bad.exit_code == 3


def test_show_refuses_a_snapshot_that_is_not_a_record(packed: Path, tmp_path: Path, cli: Cli) -> None:
    page = tmp_path / "page.txt"
    page.write_text("hello\n", encoding="utf-8")
    mapping = tmp_path / "map.json"
    mapping.write_text(json.dumps([{"sourceUrl": "https://example.org/page", "localPath": "page.txt"}]))
    assert cli("manual-ingest", "--map", str(mapping)).exit_code == 0
    result = cli("show", "https://example.org/page", "--stale-ok", "--json")
    assert result.exit_code == 3 and "not a record" in result.envelope["error"]["message"]


def test_record_bytes_do_not_depend_on_hash_seed(books: Path, tmp_path: Path) -> None:
    os.utime(books / "pg1342_pride_and_prejudice.txt", (1_700_000_000, 1_700_000_000))
    os.utime(books / "pg2701_moby_dick.txt", (1_700_000_000, 1_700_000_000))
    stores = []
    for seed in ("1", "2"):
        home = tmp_path / f"home{seed}"
        result = run_cli(["ingest", "books", str(books), "--no-pack", "--home", str(home)],
                         env={"PYTHONHASHSEED": seed})
        assert result.exit_code == 0, result.stderr
        stores.append({k: v for k, v in tree(home / "blobs").items()})
    assert stores[0] == stores[1]
