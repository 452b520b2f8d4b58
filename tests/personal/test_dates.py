"""A record's time is its text's: ``--since``, the time order of an answer and the spans of
``sources`` follow it, never a book file's modification time (a clone's minute); a record with no
time sorts by its place and is left out by ``--since``. Human output speaks words."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from .conftest import FIXTURES, Cli, projects  # noqa: F401  (the projects fixture)


def _shelf(tmp_path: Path) -> Path:
    shelf = tmp_path / "shelf"
    shutil.copytree(FIXTURES / "books", shelf)  # Gutenberg: released 1998-06-01 and 2001-07-01
    (shelf / "diary.txt").write_text("A diary entry about a whale and a fortune.\n")
    (shelf / "diary.meta.json").write_text(json.dumps({"date": "2026-03-04"}))
    (shelf / "undated.txt").write_text("An undated note about a whale and a fortune.\n")
    for path in shelf.iterdir():  # a fresh checkout: every file stamped now
        os.utime(path, None)
    return shelf


def test_since_keeps_only_what_was_written_after_it(home: Path, tmp_path: Path, cli: Cli) -> None:
    assert cli("ingest", "books", str(_shelf(tmp_path))).exit_code == 0
    for since, kept in (("2026-01-01", {"book:shelf/diary"}),
                        ("2000-01-01", {"book:shelf/diary", "book:shelf/pg2701_moby_dick"})):
        asked = cli("ask", "whale fortune", "--since", since, "--json")
        assert asked.exit_code == 0, asked.stderr
        found = {p["recordId"] for p in asked.envelope["data"]["paragraphs"]}
        assert found and found <= kept, (since, found)
        hits = cli("query", "--term", "whale", "--since", since, "--json").envelope["data"]["results"]
        assert {h["citation"]["recordId"] for h in hits} <= kept
    everything = cli("ask", "whale fortune", "--json").envelope["data"]["paragraphs"]
    assert "book:shelf/undated" in {p["recordId"] for p in everything}


def test_the_answer_is_in_the_texts_time_order_undated_last(home: Path, tmp_path: Path, cli: Cli) -> None:
    shelf = tmp_path / "lights"
    shelf.mkdir()
    books = (("a-late", "2024-05-01"), ("b-early", "1850-01-01"), ("c-none", None), ("d-mid", "1990"))
    for name, date in books:
        (shelf / f"{name}.txt").write_text(f"The lighthouse keeper of {name} kept the lighthouse lamp.\n")
        if date:
            (shelf / f"{name}.meta.json").write_text(json.dumps({"date": date}))
    assert cli("ingest", "books", str(shelf)).exit_code == 0
    asked = cli("ask", "lighthouse keeper lamp", "--json").envelope["data"]["paragraphs"]
    assert [p["recordId"] for p in asked] == ["book:lights/b-early", "book:lights/d-mid",
                                             "book:lights/a-late", "book:lights/c-none"]
    assert [p["time"] for p in asked] == ["1850-01-01T00:00:00Z", "1990-01-01T00:00:00Z",
                                          "2024-05-01T00:00:00Z", None]


def test_sources_shows_the_true_span_and_the_undated(home: Path, tmp_path: Path, cli: Cli) -> None:
    assert cli("ingest", "books", str(_shelf(tmp_path))).exit_code == 0
    [row] = cli("sources", "--json").envelope["data"]["sources"]
    assert row["timeSpan"] == {"from": "1998-06-01T00:00:00Z", "to": "2026-03-04T00:00:00Z"}
    assert row["undated"] == 1
    human = cli("sources").stdout
    assert "1998-06-01..2026-03-04 (1 undated)" in human
    shown = cli("show", "book:shelf/undated#1").stdout
    assert "(undated, text," in shown


def test_human_output_speaks_words_and_json_keeps_its_keys(home: Path, projects: Path, cli: Cli) -> None:  # noqa: F811
    human = cli("ingest", "claude", "--projects", str(projects))
    assert human.exit_code == 0
    assert "file-history snapshot" in human.stdout and "file-history-snapshot" not in human.stdout
    data = cli("ingest", "claude", "--projects", str(projects), "--json").envelope["data"]
    assert "emptyText" in data["skipped"] or "file-history-snapshot" in data["skipped"]
    verified = cli("verify").stdout
    assert " log lines" in verified and "logLines" not in verified
    assert "logLines" in cli("verify", "--json").envelope["data"]["checked"]


def test_skip_reasons_read_as_words() -> None:
    from episteme_core.personal.ingest import describe, reason_words

    assert reason_words("emptyText") == "empty message"
    assert reason_words("file-history-snapshot") == "file-history snapshot"
    assert reason_words("tooLarge") == "too large" and reason_words("someNewReason") == "some new reason"
    line = describe({"source": "claude", "found": 2, "captured": 1, "unchanged": 1,
                     "skipped": {"emptyText": 1, "file-history-snapshot": 1}})
    assert line.endswith("skipped 1 empty message, 1 file-history snapshot")
