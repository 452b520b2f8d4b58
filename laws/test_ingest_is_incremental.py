"""IngestIsIncremental: re-ingesting unchanged sources writes nothing; a change writes only that record.

For any set of books, a second `ingest books` leaves every byte of the home as it was (no blob, no
log line, no commit), and changing one book captures exactly that record, keeping its old snapshot in
its history.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from episteme_core.testing import invoke

WORD = st.text(alphabet=st.characters(whitelist_categories=("Ll", "Lu", "Nd")), min_size=1, max_size=12)
BOOK = st.lists(st.lists(WORD, min_size=1, max_size=8).map(" ".join), min_size=1, max_size=4)


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(books=st.lists(BOOK, min_size=1, max_size=4), changed=st.integers(min_value=0, max_value=3))
def test_reingest_writes_nothing_and_a_change_writes_one(books: list[list[str]], changed: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        shelf = root / "shelf"
        shelf.mkdir()
        for i, paragraphs in enumerate(books):
            path = shelf / f"b{i}.txt"
            path.write_text("\n\n".join(paragraphs) + "\n", encoding="utf-8")
            os.utime(path, (1_700_000_000, 1_700_000_000))
        home = root / "home"
        args = ("ingest", "books", str(shelf), "--no-pack", "--json", "--home", str(home))
        first = invoke(*args)
        assert first.exit_code == 0 and first.envelope["data"]["captured"] == len(books)
        before = _tree(home)
        second = invoke(*args)
        assert second.envelope["data"]["captured"] == 0
        assert _tree(home) == before
        target = shelf / f"b{changed % len(books)}.txt"
        target.write_text(target.read_text(encoding="utf-8") + "\nA new paragraph.\n", encoding="utf-8")
        os.utime(target, (1_700_000_000, 1_700_000_000))
        third = invoke(*args)
        record_id = f"book:shelf/{target.stem}"
        assert third.envelope["data"]["records"] == [record_id]
        index = json.loads((home / "snapshots" / "index.json").read_bytes())
        assert len(index["meta"]["sources"][record_id]["history"]) == 2
        assert len((home / "log.jsonl").read_text().splitlines()) == len(books) + 1
