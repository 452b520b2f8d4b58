"""One bad record never fails a whole run: lone surrogates in transcripts, file names that are not
UTF-8, and the envelope of a run that met them."""

from __future__ import annotations

import json
import os
from pathlib import Path

from episteme_core.testing import invoke, validate

from .conftest import unreferenced

LINE_OK = {"type": "user", "uuid": "u-ok", "timestamp": "2025-01-01T00:00:01Z",
           "message": {"role": "user", "content": "a line that is fine"}}
# A cut emoji: the high half of a surrogate pair, alone. JSON can write it; no text can hold it.
LINE_CUT = ('{"type":"user","uuid":"u-cut","timestamp":"2025-01-01T00:00:00Z",'
            '"message":{"role":"user","content":"hi \\ud83d there"}}')


def test_a_time_outside_the_calendar_in_utc_leaves_its_line_untimed(tmp_path: Path, home: Path) -> None:
    # Year 1 at +05:00 is in year 0 in UTC: converting it raised OverflowError and failed the run.
    projects = tmp_path / "projects"
    edge = {**LINE_OK, "uuid": "u-edge", "timestamp": "0001-01-01T00:00:00+05:00",
            "message": {"role": "user", "content": "a line from the edge of time"}}
    _project(projects, "p1", "s1", [json.dumps(edge), json.dumps(LINE_OK)])
    result = invoke("--json", "--home", str(home), "ingest", "claude", "--projects", str(projects),
                    "--no-pack")
    assert result.exit_code == 0, result.stderr
    shown = invoke("--json", "--home", str(home), "show", "chat:claude/p1/s1", "--stale-ok")
    assert shown.exit_code == 0, shown.stderr
    assert "a line from the edge of time" in shown.stdout and "a line that is fine" in shown.stdout


def _project(root: Path, name: str | bytes, session: str | bytes, lines: list[str]) -> None:
    folder = os.path.join(os.fsencode(root), os.fsencode(name))
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, os.fsencode(session) + b".jsonl"), "w", encoding="utf-8") as out:
        out.write("".join(line + "\n" for line in lines))


def test_a_lone_surrogate_skips_its_line_not_the_run(tmp_path: Path, home: Path) -> None:
    projects = tmp_path / "projects"
    _project(projects, "p1", "s1", [LINE_CUT, json.dumps(LINE_OK)])
    _project(projects, "p2", "s2", [json.dumps({**LINE_OK, "uuid": "u-2"})])
    result = invoke("--json", "--home", str(home), "ingest", "claude", "--projects", str(projects),
                    "--no-pack")
    assert result.exit_code == 0, result.stderr
    envelope = result.envelope
    validate(envelope, "cli-envelope")
    data = envelope["data"]
    assert data["records"] == ["chat:claude/p1/s1", "chat:claude/p2/s2"]
    assert data["skipped"] == {"loneSurrogate": 1}
    assert [w["code"] for w in envelope["warnings"]] == ["LINES_SKIPPED"]
    assert "skipped 1 lone surrogate line(s)" in envelope["warnings"][0]["message"]  # words, not a key
    shown = invoke("--json", "--home", str(home), "show", "chat:claude/p1/s1", "--stale-ok")
    assert shown.exit_code == 0, shown.stderr
    assert "a line that is fine" in shown.stdout and "there" not in shown.stdout


def test_a_session_name_that_is_not_utf8_is_read_with_its_bytes_percent_encoded(
    tmp_path: Path, home: Path
) -> None:
    projects = tmp_path / "projects"
    _project(projects, b"caf\xe9", b"s\xff", [json.dumps(LINE_OK)])
    result = invoke("--json", "--home", str(home), "ingest", "claude", "--projects", str(projects),
                    "--no-pack")
    assert result.exit_code == 0, result.stderr
    data = result.envelope["data"]
    assert data["records"] == ["chat:claude/caf%E9/s%FF"] and data["namesNotUtf8"] == 1
    assert [w["code"] for w in result.envelope["warnings"]] == ["TRANSCRIPT_NAME_NOT_UTF8"]
    assert "caf\\xe9" in result.envelope["warnings"][0]["message"]


def _books(tmp_path: Path) -> Path:
    folder = tmp_path / "shelf"
    folder.mkdir()
    (folder / "good.txt").write_text("A good book.\n\nIts second paragraph.\n")
    with open(os.path.join(os.fsencode(folder), b"caf\xe9.txt"), "wb") as out:
        out.write(b"Un livre.\n\nSecond paragraphe.\n")
    return folder


def test_a_book_whose_name_is_not_utf8_is_read_and_counted(tmp_path: Path, home: Path) -> None:
    folder = _books(tmp_path)
    result = invoke("--json", "--home", str(home), "ingest", "books", str(folder), "--no-pack")
    assert result.exit_code == 0, result.stderr
    validate(result.envelope, "cli-envelope")
    data = result.envelope["data"]
    assert data["records"] == ["book:shelf/caf%E9", "book:shelf/good"]
    assert data["namesNotUtf8"] == 1
    warnings = result.envelope["warnings"]
    assert [w["code"] for w in warnings] == ["BOOK_NAME_NOT_UTF8"]
    shown = invoke("--json", "--home", str(home), "show", "book:shelf/caf%E9#1", "--stale-ok")
    assert shown.exit_code == 0 and "Un livre." in shown.stdout
    again = invoke("--json", "--home", str(home), "ingest", "books", str(folder), "--no-pack")
    assert again.envelope["data"]["unchanged"] == 2  # the same ids every time


def test_max_bytes_with_a_name_that_is_not_utf8_gives_an_envelope_and_leaves_no_litter(
    tmp_path: Path, home: Path
) -> None:
    folder = _books(tmp_path)
    with open(os.path.join(os.fsencode(folder), b"big\xe9.txt"), "wb") as out:
        out.write(b"word " * 1000)
    result = invoke("--json", "--home", str(home), "ingest", "books", str(folder), "--max-bytes", "1000")
    assert result.exit_code == 0, result.stderr
    envelope = result.envelope
    validate(envelope, "cli-envelope")
    assert envelope["data"]["skipped"] == {"tooLarge": 1}
    assert any("big\\xe9.txt" in w["message"] for w in envelope["warnings"])
    assert unreferenced(home) == []
    verify = invoke("--json", "--home", str(home), "verify")
    assert verify.exit_code == 0, verify.stderr


def test_a_failing_save_removes_what_it_wrote(tmp_path: Path, home: Path) -> None:
    """A record that cannot be stored (an id no check would pass, built by a buggy source) fails the
    save, and the blobs and objects of the records before it are removed again."""
    from episteme_core.errors import EpistemeError
    from episteme_core.personal.model import Paragraph, Record, build_record
    from episteme_core.personal.stored import save_records
    from episteme_core.store.home import Home

    good = build_record(id="book:x/good", source="books", time="2025-01-01T00:00:00Z",
                        paragraphs=[Paragraph(n=0, text="fine")])
    bad = Record(id="book:x/bad", source="books", time="2025-01-01T00:00:00Z",
                 paragraphs=[Paragraph(n=1, text="cut \ud83d")])
    try:
        save_records(Home(home), "test", [good, bad])
    except EpistemeError as error:
        assert error.code == "INVALID_INPUT"
    else:
        raise AssertionError("the record with a lone surrogate was stored")
    assert [p for p in home.rglob("*") if p.is_file()] == []


def test_an_argument_that_is_not_utf8_gets_an_envelope(tmp_path: Path, home: Path) -> None:
    missing = os.fsdecode(os.path.join(os.fsencode(tmp_path), b"m\xe9.json"))
    result = invoke("--json", "--home", str(home), "snapshot", "--manifest", missing)
    assert result.exit_code == 3
    envelope = result.envelope
    validate(envelope, "cli-envelope")
    assert "m\\xe9.json" in envelope["error"]["message"]
    human = invoke("--home", str(home), "snapshot", "--manifest", missing)
    assert human.exit_code == 3 and "m\\xe9.json: no such file" in human.stderr


def test_an_envelope_is_one_line_to_every_reader(tmp_path: Path, home: Path) -> None:
    """Found by the long fuzz run: a key holding U+2028 (a line separator to Python's splitlines and
    to JavaScript) split the one-line envelope in two for such readers."""
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps([{"\u2028\u2029\x85": None}], ensure_ascii=False))
    result = invoke("--json", "--home", str(home), "snapshot", "--manifest", str(manifest))
    assert result.exit_code == 3
    assert len(result.stderr.strip().splitlines()) == 1
    envelope = result.envelope
    validate(envelope, "cli-envelope")
    assert "\u2028\u2029\x85" in envelope["error"]["message"]  # escaped on the wire, whole when parsed
