"""``episteme forget``: a source, a record or a paragraph out of every stage, blob and log line, a
tombstone in its place; nothing forgotten findable by any reader or in any file of the home."""

from __future__ import annotations

import json
import shutil
import signal
from pathlib import Path

import pytest

from episteme_core.testing import invoke, validate
from episteme_core.testing.crashmatrix import episteme

from .conftest import Cli, tree

SECRET = "xyzzy-the-secret-phrase"


@pytest.fixture
def shelf(tmp_path: Path) -> Path:
    """Two books: ``notes`` holds a secret in its second paragraph; ``other`` was changed once."""
    folder = tmp_path / "shelf"
    folder.mkdir()
    (folder / "notes.md").write_text(f"# Notes\n\nPublic evidence first.\n\nThe password is {SECRET}.\n\n"
                                     "Evidence after it.\n", encoding="utf-8")
    (folder / "other.txt").write_text(f"Other evidence quoting {SECRET}, first version.\n", encoding="utf-8")
    return folder


@pytest.fixture
def packed(home: Path, shelf: Path, cli: Cli) -> Path:
    assert cli("ingest", "books", str(shelf)).exit_code == 0
    (shelf / "other.txt").write_text(f"Other evidence quoting {SECRET}, second version.\n", encoding="utf-8")
    assert cli("ingest", "books", str(shelf)).exit_code == 0
    return home


def holders(home: Path, text: str) -> list[str]:
    """Every file under the home that holds ``text`` (its bytes read whole)."""
    needle = text.encode()
    return sorted(str(p.relative_to(home)) for p in home.rglob("*")
                  if p.is_file() and needle in p.read_bytes())


def log_lines(home: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (home / "log.jsonl").read_text().splitlines()]


def test_forgetting_a_record_removes_it_everywhere_and_leaves_a_tombstone(packed: Path, cli: Cli) -> None:
    assert holders(packed, "second version")  # blobs, documents, chunks, shards, before
    before = log_lines(packed)
    result = cli("forget", "book:shelf/other", "--reason", "a wrong book", "--json")
    assert result.exit_code == 0, result.stderr
    data = result.envelope["data"]
    [row] = data["forgotten"]
    assert row["kind"] == "source" and row["source"] == "book:shelf/other"
    assert len(row["snapshots"]) == 2 and len(row["blobs"]) == 2 and row["logLines"] == [2, 3]
    for text in ("first version", "second version", "book:shelf/other"):
        assert holders(packed, text) == [], text
    after = log_lines(packed)
    assert len(after) == len(before) + 1
    assert [line["status"] for line in after[:-1]] == ["captured", "redacted", "redacted"]
    assert after[0] == before[0]  # the other book's line: untouched
    tombstone = after[-1]
    validate(tombstone, "log-entry")
    assert tombstone["status"] == "forgotten" and tombstone["reason"] == "a wrong book"
    assert tombstone["id"] == data["tombstone"] and tombstone["command"] == "forget"
    [item] = tombstone["items"]
    assert item["kind"] == "source" and item["lines"] == [2, 3]
    import hashlib

    assert item["sourceSha256"] == hashlib.sha256(b"book:shelf/other").hexdigest()
    for line in after[:-1]:
        validate(line, "log-entry")
    assert cli("verify").exit_code == 0
    assert cli("show", "book:shelf/other").exit_code == 3
    assert cli("query", "--term", "second version", "--json").envelope["data"]["results"] == []
    sources = cli("sources", "--json").envelope["data"]
    assert sources["records"] == 1


def test_a_forgotten_paragraph_is_gone_from_every_version_and_stays_gone(
        packed: Path, shelf: Path, cli: Cli) -> None:
    record = cli("show", "book:shelf/notes", "--json").envelope["data"]["record"]
    assert record["paragraphs"][2]["text"] == f"The password is {SECRET}."
    result = cli("forget", "book:shelf/notes#3", "--json")
    assert result.exit_code == 0, result.stderr
    [row] = result.envelope["data"]["forgotten"]
    assert row["kind"] == "paragraphs" and row["paragraphs"] == [3] and len(row["replacedBy"]) == 1
    assert holders(packed, "password") == []
    assert holders(packed, SECRET) != []  # the other book quotes it: that book is not forgotten
    shown = cli("show", "book:shelf/notes", "--json").envelope["data"]["record"]
    assert [p["kind"] for p in shown["paragraphs"]] == ["heading", "text", "forgotten", "text"]
    assert shown["paragraphs"][2]["text"] == "" and shown["paragraphs"][3]["text"] == "Evidence after it."
    refused = cli("show", "book:shelf/notes#3", "--json")
    assert refused.exit_code == 3 and "was forgotten" in refused.envelope["error"]["message"]
    assert cli("show", "book:shelf/notes#4").exit_code == 0  # the numbers stay
    again = cli("ingest", "books", str(shelf), "--json")
    assert again.exit_code == 0 and again.envelope["data"]["redactedParagraphs"] == 1
    assert again.envelope["data"]["captured"] == 0  # stored redacted: the same bytes as before
    assert holders(packed, "password") == []
    assert cli("verify").exit_code == 0
    lines = log_lines(packed)
    assert lines[0]["snapshotId"] == row["replacedBy"][0]  # the observation now names the redacted version


def test_the_dry_run_lists_exactly_what_goes_and_changes_nothing(
        packed: Path, cli: Cli, tmp_path: Path) -> None:
    before = tree(packed)
    dry = cli("forget", "--source", "book:shelf/other", "book:shelf/notes#3", "--dry-run", "--json")
    assert dry.exit_code == 0 and tree(packed) == before
    listed = dry.envelope["data"]
    assert listed["dryRun"] is True and listed["tombstone"] is None
    copy = tmp_path / "copy"
    shutil.copytree(packed, copy)
    done = invoke("--home", str(copy), "forget", "--source", "book:shelf/other", "book:shelf/notes#3",
                  "--json")
    assert done.envelope["data"]["forgotten"] == listed["forgotten"]
    gone = {path for path in before if path not in tree(copy)}
    for row in listed["forgotten"]:
        for blob in row["blobs"]:
            assert f"blobs/sha256/{blob[:2]}/{blob}" in gone
    human = cli("forget", "--source", "book:shelf/other", "--dry-run")
    assert "would forget book:shelf/other: 2 snapshot(s), 2 blob(s)" in human.stdout
    assert "nothing was changed (--dry-run)" in human.stdout
    assert listed["garbage"] == []  # nothing unnamed here; one stray blob is listed, then removed
    stray = packed / "blobs" / "sha256" / "ab" / ("ab" + "0" * 62)
    stray.parent.mkdir(parents=True, exist_ok=True)
    stray.write_bytes(b"")  # (a name that is not its content: listed and removed all the same)
    listed = cli("forget", "--source", "book:shelf/other", "--dry-run", "--json").envelope["data"]
    assert listed["garbage"] == [str(stray.relative_to(packed))] and stray.exists()
    assert cli("forget", "--source", "book:shelf/other").exit_code == 0 and not stray.exists()


def test_capturing_a_forgotten_source_again_is_refused_unless_allowed(
        packed: Path, shelf: Path, cli: Cli) -> None:
    assert cli("forget", "book:shelf/other").exit_code == 0
    refused = cli("ingest", "books", str(shelf), "--json")
    assert refused.exit_code == 0
    assert refused.envelope["data"]["forgotten"] == 1
    assert "FORGOTTEN_REFUSED" in [w["code"] for w in refused.envelope["warnings"]]
    assert holders(packed, "second version") == []
    allowed = cli("ingest", "books", str(shelf), "--allow-forgotten", "--json")
    assert allowed.exit_code == 0 and allowed.envelope["data"]["captured"] == 1
    assert log_lines(packed)[-1]["code"] == "FORGOTTEN_ALLOWED"
    assert cli("verify").exit_code == 0  # the tombstone is lifted by the capture it allowed
    assert cli("show", "book:shelf/other").exit_code == 0
    again = cli("forget", "book:shelf/other", "--json")
    assert again.exit_code == 0 and again.envelope["data"]["tombstone"]


def test_verify_reports_what_a_tombstone_names_that_is_back(packed: Path, cli: Cli, tmp_path: Path) -> None:
    backup = tmp_path / "backup"
    shutil.copytree(packed / "blobs", backup)
    assert cli("forget", "book:shelf/other").exit_code == 0
    assert cli("verify").exit_code == 0
    shutil.copytree(backup, packed / "blobs", dirs_exist_ok=True)  # restored from a backup
    result = cli("verify", "--json")
    assert result.exit_code == 3
    problems = result.envelope["error"]["details"]["problems"]
    assert {p["code"] for p in problems} == {"FORGOTTEN_PRESENT"} and len(problems) == 2
    assert all("forgotten (tombstone" in p["message"] for p in problems)


def test_names_that_are_nowhere_and_names_already_forgotten(packed: Path, cli: Cli) -> None:
    missing = cli("forget", "--source", "book:shelf/nothing", "--json")
    assert missing.exit_code == 3 and "nothing named" in missing.envelope["error"]["message"]
    assert cli("forget", "--json").exit_code == 2  # nothing named at all
    assert cli("forget", "book:shelf/notes#99", "--json").exit_code == 3
    assert cli("forget", "book:shelf/other").exit_code == 0
    before = tree(packed)
    again = cli("forget", "book:shelf/other", "--json")
    assert again.exit_code == 0 and again.envelope["data"]["alreadyForgotten"] == ["book:shelf/other"]
    assert tree(packed) == before
    long = cli("forget", "book:shelf/notes", "--reason", "x" * 1001, "--json")
    assert long.exit_code == 2
    assert cli("forget", "book:shelf/notes", "--reason", "x" * 1000, "--json").exit_code == 0


def test_a_prefix_forgets_every_source_under_it(packed: Path, cli: Cli) -> None:
    result = cli("forget", "--prefix", "book:shelf/", "--json")
    assert result.exit_code == 0
    assert sorted(row["source"] for row in result.envelope["data"]["forgotten"]) == [
        "book:shelf/notes", "book:shelf/other"]
    assert holders(packed, SECRET) == [] and holders(packed, "Public evidence") == []
    assert cli("forget", "--prefix", "book:none/", "--json").exit_code == 3


def test_a_web_source_is_forgotten_and_its_capture_refused(home: Path, tmp_path: Path, cli: Cli) -> None:
    (tmp_path / "page.html").write_text(f"<h1>Page</h1><p>Private {SECRET} on a page.</p>", encoding="utf-8")
    (tmp_path / "keep.txt").write_text("Kept evidence.\n", encoding="utf-8")
    mapping = tmp_path / "map.json"
    mapping.write_text(json.dumps([{"sourceUrl": "https://example.org/private#part",
                                    "localPath": "page.html"},
                                   {"sourceUrl": "https://example.org/keep", "localPath": "keep.txt"}]))
    assert cli("pipeline", "--map", str(mapping)).exit_code == 0
    assert cli("forget", "--source", "HTTPS://Example.org/private#other").exit_code == 0  # normalised
    assert holders(home, SECRET) == [] and holders(home, "example.org/private") == []
    assert not (home / "stat-cache.json").exists()  # it named the file and the source
    again = cli("pipeline", "--map", str(mapping), "--json")
    assert again.exit_code == 0
    rows = again.envelope["data"]["capture"]["sources"]
    assert [(r["source"], r["status"], r["code"]) for r in rows if r["status"] == "failed"] == [
        ("https://example.org/private", "failed", "INVALID_INPUT")]
    assert holders(home, SECRET) == []
    exported = cli("export", "warc", "--out", "-", "--json")
    assert exported.exit_code == 0 and SECRET not in json.dumps(exported.envelope)
    allowed = cli("manual-ingest", "--map", str(mapping), "--allow-forgotten", "--json")
    assert allowed.exit_code == 0 and holders(home, SECRET) != []


def test_a_paragraph_of_a_transcript_stays_forgotten_as_the_transcript_grows(
        home: Path, tmp_path: Path, cli: Cli) -> None:
    folder = tmp_path / "projects" / "-home-me-p"
    folder.mkdir(parents=True)

    def line(n: int, text: str) -> str:
        return json.dumps({"type": "user", "uuid": f"u{n}", "timestamp": f"2025-01-01T00:00:0{n}Z",
                           "message": {"role": "user", "content": text}}) + "\n"

    session = folder / "s1.jsonl"
    session.write_text(line(1, "hello there") + line(2, f"my key is {SECRET}"))
    projects = str(tmp_path / "projects")
    assert cli("ingest", "claude", "--projects", projects).exit_code == 0
    record = cli("sources", "--json")
    assert record.exit_code == 0
    assert cli("forget", "chat:claude/-home-me-p/s1#2").exit_code == 0
    assert holders(home, SECRET) == []
    with open(session, "a") as out:
        out.write(line(3, "a later message"))
    grown = cli("ingest", "claude", "--projects", projects, "--json")
    assert grown.exit_code == 0 and grown.envelope["data"]["appendedParagraphs"] == 1
    assert holders(home, SECRET) == []
    shown = cli("show", "chat:claude/-home-me-p/s1", "--json").envelope["data"]["record"]
    assert [p["kind"] for p in shown["paragraphs"]] == ["text", "forgotten", "text"]


def test_an_interrupted_forget_is_finished_by_the_next_forget_or_gc(packed: Path, tmp_path: Path) -> None:
    for finisher in (["gc"], ["forget"]):
        home = tmp_path / f"home-{finisher[0]}"
        shutil.copytree(packed, home)
        killed = episteme(home, ["forget", "book:shelf/other"], {"EPISTEME_FAULT": "after-index-write:1"})
        assert killed.returncode == -signal.SIGKILL
        assert (home / "forgetting.json").exists()
        verified = invoke("--home", str(home), "verify", "--json")
        assert verified.exit_code == 0  # a note, not a problem
        assert "FORGET_UNFINISHED" in [w["code"] for w in verified.envelope["warnings"]]
        done = invoke("--home", str(home), *finisher, "--json")
        assert done.exit_code == 0, done.stderr
        assert not (home / "forgetting.json").exists()
        assert holders(home, "second version") == [] and holders(home, "book:shelf/other") == []
        assert invoke("--home", str(home), "verify").exit_code == 0
        assert sum(1 for line in log_lines(home) if line["status"] == "forgotten") == 1


def test_ask_and_sources_never_see_a_forgotten_book(packed: Path, cli: Cli) -> None:
    def texts() -> list[str]:
        asked = cli("ask", "what is the password", "--json")
        assert asked.exit_code == 0
        return [p["text"] for p in asked.envelope["data"]["paragraphs"]]

    assert any("password" in text for text in texts())
    assert cli("forget", "book:shelf/notes#3").exit_code == 0
    assert not any("password" in text for text in texts())
    assert "password" not in json.dumps(cli("sources", "--json").envelope)


def test_a_forget_leaves_the_same_bytes_under_any_hash_seed(packed: Path, tmp_path: Path) -> None:
    """Derived bytes depend only on inputs: the same forget in two processes with different
    PYTHONHASHSEED values leaves the same stages, blobs and log (its times aside)."""
    from episteme_core.testing.crashmatrix import home_state

    results = []
    for seed in ("1", "2"):
        home = tmp_path / f"seed-{seed}"
        shutil.copytree(packed, home)
        proc = episteme(home, ["forget", "book:shelf/other", "book:shelf/notes#3", "--reason", "seeds"],
                        {"PYTHONHASHSEED": seed})
        assert proc.returncode == 0, proc.stderr
        tombstone = log_lines(home)[-1]
        tombstone.pop("time")
        results.append((home_state(home, files=True), tombstone))
    assert results[0] == results[1]
