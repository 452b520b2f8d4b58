"""The document's language picks the stemmer: an HTML page's ``lang``, a book's ``Language:`` header."""

from __future__ import annotations

import json
from pathlib import Path

from episteme_core.bm25.shards import open_shards
from episteme_core.stages.chunks import iter_chunk_rows
from episteme_core.store.home import Home
from episteme_core.testing import validate

from .conftest import ok


def test_html_lang_and_a_books_language_reach_the_index(tmp_path: Path) -> None:
    (tmp_path / "fr.html").write_text(
        '<!doctype html><html lang="fr"><title>Chats</title><p>Les chats dormaient sur le toit.</p></html>')
    (tmp_path / "en.html").write_text("<!doctype html><html><title>Cats</title><p>The cats slept.</p></html>")
    (tmp_path / "map.json").write_text(json.dumps([
        {"sourceUrl": f"https://example.org/{name}", "localPath": name, "contentType": "text/html"}
        for name in ("fr.html", "en.html")]))
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    (shelf / "livre.txt").write_text(
        "Title: Le livre\nLanguage: French\n\n*** START OF THE PROJECT GUTENBERG EBOOK LE LIVRE ***\n\n"
        "Ils chantaient toute la nuit.\n\n*** END OF THE PROJECT GUTENBERG EBOOK LE LIVRE ***\n")
    home = tmp_path / "home"
    ok("--home", str(home), "pipeline", "--map", str(tmp_path / "map.json"))
    ok("--home", str(home), "ingest", "books", str(shelf))
    languages = {row["source"].rsplit("/", 1)[-1]: row["language"] for row, _ in iter_chunk_rows(Home(home))}
    assert languages == {"fr.html": "fr", "en.html": None, "livre": "French"}
    for row, _ in iter_chunk_rows(Home(home)):
        validate(row, "chunk")
    shards = {s.source: s.languages for s in open_shards(Home(home)).shards}
    assert shards == {"file": ["english", "french"], "books": ["french"]}
    # French stems meet: "dormait" finds "dormaient", "chanter" finds "chantaient"
    assert ok("--home", str(home), "query", "--term", "dormait")["results"][0]["source"].endswith("fr.html")
    assert ok("--home", str(home), "query", "--term", "chanter")["results"][0]["source"] == "book:shelf/livre"
    assert ok("--home", str(home), "query", "--term", "sleeping")["total"] == 0  # English "slept" stays
