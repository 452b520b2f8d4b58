"""Books: Gutenberg header and licence out of the paragraphs, encodings, front matter, bad files."""

from __future__ import annotations

import json
import os
from pathlib import Path

from episteme_core.personal.books import read_book, scan_books
from episteme_core.personal.plaintext import decode_text, split_paragraphs
from episteme_core.testing import validate

from .conftest import Cli, tree


def test_gutenberg_header_and_licence_are_metadata_not_paragraphs(books: Path) -> None:
    path = books / "pg1342_pride_and_prejudice.txt"
    record = read_book(path, "library", "pg1342_pride_and_prejudice")
    assert record.id == "book:library/pg1342_pride_and_prejudice"
    assert record.title == "Pride and Prejudice"
    texts = [p.text for p in record.paragraphs]
    assert not any("PROJECT GUTENBERG" in t.upper() for t in texts)
    gutenberg = record.metadata["gutenberg"]
    assert gutenberg["author"] == "Jane Austen" and gutenberg["ebook"] == 1342
    assert gutenberg["header"].startswith("The Project Gutenberg eBook of Pride and Prejudice")
    assert "*** START OF THE PROJECT GUTENBERG EBOOK PRIDE AND PREJUDICE ***" in gutenberg["header"]
    assert "*** END OF THE PROJECT GUTENBERG EBOOK" in gutenberg["footer"]
    assert "Updated editions will replace" in gutenberg["footer"]
    # BOM dropped, CRLF gone, paragraphs numbered 1..N with the line they start on
    assert record.metadata["encoding"] == "utf-8-sig" and record.metadata["crlf"] is True
    assert all("\r" not in t and "\ufeff" not in t for t in texts)
    assert [p.n for p in record.paragraphs] == list(range(1, len(texts) + 1))
    lines = path.read_bytes().decode("utf-8-sig").split("\r\n")
    first = record.paragraphs[0]
    assert lines[first.attributes["line"] - 1] == first.text.split("\n")[0]
    validate(json.loads(record.to_bytes()), "record")


def test_windows_1252_is_detected_and_recorded(books: Path) -> None:
    record = read_book(books / "pg2701_moby_dick.txt", "library", "pg2701_moby_dick")
    assert record.metadata["encoding"] == "windows-1252"
    assert any("\u2019" in p.text for p in record.paragraphs)  # 0x92 is a right single quote
    assert record.metadata["gutenberg"]["title"] == "Moby Dick; Or, The Whale"


def test_decoding_rules() -> None:
    assert decode_text("café".encode()) == ("café", "utf-8")
    assert decode_text(b"\xef\xbb\xbfhi") == ("hi", "utf-8-sig")
    assert decode_text("hé’".encode("cp1252")) == ("hé’", "windows-1252")
    assert decode_text("é".encode() + b"\x92") == ("é’", "utf-8+windows-1252")
    assert decode_text("hi".encode("utf-16")) == ("hi", "utf-16")


def test_markdown_front_matter_date_and_fences(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "diary.md").write_text(
        "---\ntitle: My diary\ndate: 2024-03-05\n---\n# Monday\n\nFirst line\nsecond line\n\n"
        "```\ncode\n\nstill code\n```\n\nLast.\n",
        encoding="utf-8",
    )
    record = read_book(folder / "diary.md", "notes", "diary")
    assert record.time == "2024-03-05T00:00:00Z" and record.metadata["timeFrom"] == "frontMatter"
    assert record.title == "My diary"
    assert record.metadata["frontMatter"] == {"title": "My diary", "date": "2024-03-05"}
    assert [p.text for p in record.paragraphs] == [
        "# Monday", "First line\nsecond line", "```\ncode\n\nstill code\n```", "Last."
    ]
    assert record.paragraphs[0].kind == "heading"
    assert record.paragraphs[1].attributes["line"] == 7


def test_a_book_without_a_date_has_no_time_never_its_file_time(tmp_path: Path) -> None:
    """The file's modification time is the minute of a checkout after a clone or a copy: it never
    becomes the book's time (nor its paragraphs'), and a front-matter date that is no date is
    passed over with a warning."""
    folder = tmp_path / "c"
    folder.mkdir()
    (folder / "a.txt").write_text("One.\n\nTwo.\n", encoding="utf-8")
    os.utime(folder / "a.txt", (1_700_000_000, 1_700_000_000))
    (folder / "b.md").write_text("---\ndate: not a date\n---\nText\n", encoding="utf-8")
    os.utime(folder / "b.md", (1_600_000_000, 1_600_000_000))
    warnings: list[tuple[str, str]] = []
    scan = scan_books([folder], warn=lambda code, message: warnings.append((code, message)))
    by_id = {r.id: r for r in scan.records}
    for record in by_id.values():
        assert record.time is None
        assert {p.time for p in record.paragraphs} == {None}
        assert "timeFrom" not in record.metadata
    assert by_id["book:c/b"].metadata["badDate"] == "not a date"
    assert [code for code, _ in warnings] == ["BAD_DATE"]
    os.utime(folder / "a.txt", (1_800_000_000, 1_800_000_000))  # a checkout: the same record bytes
    again = {r.id: r for r in scan_books([folder]).records}
    assert again["book:c/a"].to_bytes() == by_id["book:c/a"].to_bytes()


def test_a_gutenberg_book_takes_its_original_publication_year_else_its_release_date(books: Path) -> None:
    scan = scan_books([books])
    by_id = {r.id: r for r in scan.records}
    moby = by_id["book:library/pg2701_moby_dick"]
    assert moby.time == "2001-07-01T00:00:00Z"  # "Release date: July 1, 2001 [eBook #2701]"
    assert moby.metadata["timeFrom"] == "releaseDate" and moby.metadata["timePrecision"] == "day"
    assert moby.metadata["gutenberg"]["releaseDate"] == "July 1, 2001"
    assert {p.time for p in moby.paragraphs} == {"2001-07-01T00:00:00Z"}
    path = books / "pg1342_pride_and_prejudice.txt"
    text = path.read_text(encoding="utf-8")
    at = text.index("Release date:")
    path.write_text(text[:at] + "Original publication: London: T. Egerton, 1813\n\n" + text[at:],
                    encoding="utf-8")
    pride = {r.id: r for r in scan_books([books]).records}["book:library/pg1342_pride_and_prejudice"]
    assert pride.time == "1813-01-01T00:00:00Z"
    assert pride.metadata["timeFrom"] == "originalPublication" and pride.metadata["timePrecision"] == "year"


def test_a_sidecar_date_comes_first_and_is_no_book(tmp_path: Path, books: Path) -> None:
    (books / "pg2701_moby_dick.meta.json").write_text('{"date": "1851-10-18"}', encoding="utf-8")
    (books / "pg1342_pride_and_prejudice.meta.json").write_text('{"date": "January 28, 1813"}',
                                                                encoding="utf-8")
    scan = scan_books([books])
    by_id = {r.id: r for r in scan.records}
    assert sorted(by_id) == ["book:library/pg1342_pride_and_prejudice", "book:library/pg2701_moby_dick"]
    assert scan.skipped == {}  # a sidecar is read with its book, never counted as a skipped file
    assert by_id["book:library/pg2701_moby_dick"].time == "1851-10-18T00:00:00Z"
    assert by_id["book:library/pg2701_moby_dick"].metadata["timeFrom"] == "sidecar"
    assert by_id["book:library/pg1342_pride_and_prejudice"].time == "1813-01-28T00:00:00Z"
    (books / "pg2701_moby_dick.meta.json").write_text('{"date": 1851}', encoding="utf-8")
    warnings: list[str] = []
    again = {r.id: r for r in scan_books([books], warn=lambda code, _: warnings.append(code)).records}
    assert again["book:library/pg2701_moby_dick"].time == "2001-07-01T00:00:00Z"  # the header's
    assert warnings == ["BAD_DATE"]
    (books / "pg2701_moby_dick.meta.json").write_text("[1, 2", encoding="utf-8")
    warnings.clear()
    scan_books([books], warn=lambda code, _: warnings.append(code))
    assert warnings == ["BAD_SIDECAR"]


def test_binary_symlink_and_empty_files_are_skipped_and_counted(tmp_path: Path, books: Path) -> None:
    (books / "image.txt").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00IHDR")
    (books / "empty.md").write_text("\n\n  \n", encoding="utf-8")
    (books / "notes.pdf").write_bytes(b"%PDF-1.4")
    outside = tmp_path / "secret.txt"
    outside.write_text("do not read me\n", encoding="utf-8")
    (books / "link.txt").symlink_to(outside)
    (books / ".hidden.txt").write_text("hidden\n", encoding="utf-8")
    warnings: list[str] = []
    scan = scan_books([books], warn=lambda code, message: warnings.append(code))
    assert sorted(r.id for r in scan.records) == [
        "book:library/pg1342_pride_and_prejudice", "book:library/pg2701_moby_dick"
    ]
    assert scan.skipped == {"binary": 1, "empty": 1, "notText": 1, "symlink": 1}
    assert warnings.count("BOOK_SKIPPED") == 3


def test_split_paragraphs_keeps_lines_verbatim() -> None:
    assert split_paragraphs("  a\nb  \n\n\n c\n \n") == [("  a\nb  ", 1), (" c", 5)]


def test_cli_ingest_books_is_incremental_and_keeps_history(books: Path, home: Path, cli: Cli) -> None:
    first = cli("ingest", "books", str(books), "--no-pack", "--json")
    assert first.exit_code == 0, first.stderr
    data = first.envelope["data"]
    assert data["captured"] == 2 and data["unchanged"] == 0
    before = tree(home)
    again = cli("ingest", "books", str(books), "--no-pack", "--json")
    assert again.envelope["data"]["captured"] == 0 and again.envelope["data"]["unchanged"] == 2
    assert tree(home) == before  # IngestIsIncremental: nothing written at all
    book = books / "pg2701_moby_dick.txt"
    book.write_bytes(book.read_bytes() + b"A new closing paragraph.\r\n")
    changed = cli("ingest", "books", str(books), "--no-pack", "--json")
    assert changed.envelope["data"]["records"] == ["book:library/pg2701_moby_dick"]
    catalog = json.loads((home / "snapshots" / "index.json").read_bytes())
    history = catalog["meta"]["sources"]["book:library/pg2701_moby_dick"]["history"]
    assert len(history) == 2  # the old snapshot stays in the record's history
    log = (home / "log.jsonl").read_text().splitlines()
    assert len(log) == 3 and all(json.loads(line)["source"] == "books" for line in log)


def test_cli_refuses_a_folder_that_does_not_exist(tmp_path: Path, home: Path, cli: Cli) -> None:
    result = cli("ingest", "books", str(tmp_path / "nope"), "--json")
    assert result.exit_code == 3
    assert result.envelope["error"]["code"] == "INVALID_INPUT"
    assert not (home / "snapshots").exists()


def test_max_bytes_is_a_bound(books: Path, cli: Cli) -> None:
    size = (books / "pg2701_moby_dick.txt").stat().st_size
    at = cli("ingest", "books", str(books), "--no-pack", "--max-bytes", str(size), "--json")
    assert "book:library/pg2701_moby_dick" in at.envelope["data"]["records"]
    past = cli("ingest", "books", str(books), "--no-pack", "--max-bytes", "0", "--json")
    assert past.exit_code == 2 and past.envelope["error"]["code"] == "INVALID_USAGE"


def test_max_paragraphs_is_a_bound(tmp_path: Path, cli: Cli) -> None:
    """A book of exactly ``--max-paragraphs`` paragraphs is read; one more and it is skipped with a
    warning naming it (its record would be held whole), the other books stored."""
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    (shelf / "three.txt").write_text("a\n\nb\n\nc\n", encoding="utf-8")
    (shelf / "four.txt").write_text("a\n\nb\n\nc\n\nd\n", encoding="utf-8")
    result = cli("ingest", "books", str(shelf), "--no-pack", "--max-paragraphs", "3", "--json")
    data = result.envelope["data"]
    assert result.exit_code == 0 and data["records"] == ["book:shelf/three"]
    assert data["skipped"] == {"tooManyParagraphs": 1}
    messages = [w["message"] for w in result.envelope["warnings"]]
    assert any("four.txt: more than 3 paragraphs, skipped" in m for m in messages)
    again = cli("ingest", "books", str(shelf), "--no-pack", "--max-paragraphs", "4", "--json")
    assert again.envelope["data"]["records"] == ["book:shelf/four"] and not again.envelope["data"]["skipped"]
    past = cli("ingest", "books", str(shelf), "--no-pack", "--max-paragraphs", "0", "--json")
    assert past.exit_code == 2 and past.envelope["error"]["code"] == "INVALID_USAGE"


def test_dashes_in_a_plain_text_book_are_not_front_matter(tmp_path: Path) -> None:
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "a.txt").write_text("---\nA scene break, not metadata.\n---\n\nNext.\n", encoding="utf-8")
    record = read_book(folder / "a.txt", "t", "a")
    assert [p.text for p in record.paragraphs] == ["---\nA scene break, not metadata.\n---", "Next."]
    assert "frontMatter" not in record.metadata
    (folder / "b.md").write_text("---\ntags:\n  - x\n---\nBody\n", encoding="utf-8")
    kept = read_book(folder / "b.md", "t", "b")
    assert kept.metadata["frontMatterText"] == "tags:\n  - x"  # kept whole, nothing lost


def test_names_with_spaces_and_hashes_become_safe_ids(tmp_path: Path) -> None:
    folder = tmp_path / "My Books"
    (folder / "Vol #1").mkdir(parents=True)
    (folder / "Vol #1" / "Pride and Prejudice.txt").write_text("It is a truth.\n", encoding="utf-8")
    scan = scan_books([folder])
    [record] = scan.records
    assert record.id == "book:My%20Books/Vol%20%231/Pride%20and%20Prejudice"
    assert record.title == "Pride and Prejudice"
    assert record.metadata["path"] == "Vol #1/Pride and Prejudice.txt"


def test_a_name_that_would_make_a_dot_segment_is_skipped_not_fatal(tmp_path: Path) -> None:
    """A file named ':..txt' would read as the id 'book:shelf/:.', whose '.' segment could walk a
    path: that one book is skipped with a warning and the others are read (found by fuzzing)."""
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    (shelf / ":..txt").write_text("A dotted name.\n", encoding="utf-8")
    (shelf / "kept.txt").write_text("A plain name.\n", encoding="utf-8")
    warnings: list[tuple[str, str]] = []
    scan = scan_books([shelf], warn=lambda code, message: warnings.append((code, message)))
    assert [record.id for record in scan.records] == ["book:shelf/kept"]
    assert scan.skipped == {"badName": 1}
    [(code, message)] = warnings
    assert code == "BOOK_SKIPPED" and ":." in message
