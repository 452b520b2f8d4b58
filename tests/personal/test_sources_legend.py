"""The human table of ``sources`` explains itself: each document kind it shows is named (``file``: files
captured by manual-ingest), and so is the ``-`` in a document kind's paragraph column."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import Cli


def _manual_ingest(tmp_path: Path, cli: Cli) -> None:
    page = tmp_path / "page.txt"
    page.write_text("A page of plain text.\n\nIts second paragraph.\n", "utf-8")
    mapping = tmp_path / "map.json"
    mapping.write_text(json.dumps([{"sourceUrl": "https://example.org/page", "localPath": str(page),
                                    "contentType": "text/plain"}]), "utf-8")
    result = cli("manual-ingest", "--map", str(mapping))
    assert result.exit_code == 0, result.stderr


def test_a_file_row_is_named_and_its_dash_explained(tmp_path: Path, books: Path, cli: Cli) -> None:
    assert cli("ingest", "books", str(books)).exit_code == 0
    _manual_ingest(tmp_path, cli)
    lines = cli("sources").stdout.splitlines()
    [row] = [line for line in lines if line.startswith("file ") and " records " in line]
    assert " - paragraphs" in row
    assert "file     files captured by manual-ingest, each stored as the URL its map names" in lines
    legend = "\n".join(lines[lines.index(""):])
    assert legend.count("\n-        not counted: paragraphs are counted for records") == 1
    assert "books" not in legend.split("\n", 2)[1]  # record kinds need no line: their rows say it
    assert "http" not in legend and "warc" not in legend  # only the kinds the table shows


def test_records_alone_need_no_legend(books: Path, cli: Cli) -> None:
    assert cli("ingest", "books", str(books)).exit_code == 0
    text = cli("sources").stdout
    assert text.startswith("books ") and "\n\n" not in text and "not counted" not in text
