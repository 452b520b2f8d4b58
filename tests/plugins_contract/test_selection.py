"""Explicit selection: the highest priority wins, a tie is a warning naming both, ``--chunker`` and
``--extractor`` choose by name, and a new chunker re-chunks only the documents it takes."""

from __future__ import annotations

import json
from pathlib import Path

from episteme_core.testing import CliResult, invoke, read_chunks, read_documents, store_snapshot


def _ok(*args: str) -> CliResult:
    result = invoke(*args)
    assert result.exit_code == 0, result.stderr
    return result


def _ties(result: CliResult) -> list[dict]:  # type: ignore[type-arg]
    return [w for w in result.envelope["warnings"] if w["code"] == "COMPONENT_TIE"]


def _home_with_text_and_record(home: Path) -> None:
    store_snapshot(home, "https://e.org/a", b"alpha words\n\nbeta words\n")
    _ok("--home", str(home), "ingest", "books", str(_books(home)), "--no-pack")
    _ok("--home", str(home), "extract")


def _books(home: Path) -> Path:
    folder = home.parent / "shelf"
    folder.mkdir(exist_ok=True)
    (folder / "novel.txt").write_text("A first paragraph.\n\nA second paragraph.\n", "utf-8")
    return folder


def test_a_tie_is_a_warning_naming_both_and_the_first_registered_is_used(plugin_site, home: Path) -> None:
    plugin_site("rival")
    _home_with_text_and_record(home)
    result = _ok("--home", str(home), "--json", "chunk")
    [tie] = _ties(result)
    assert tie["components"] == ["window", "rival"] and tie["kind"] == "chunker"
    assert "'window'" in tie["message"] and "'rival'" in tie["message"]
    assert {c.chunker for c in read_chunks(home)} == {"window/3", "paragraph/3"}


def test_chunker_option_chooses_by_name_where_it_accepts(plugin_site, home: Path) -> None:
    plugin_site("rival")
    _home_with_text_and_record(home)
    _ok("--home", str(home), "chunk")
    chosen = _ok("--home", str(home), "--json", "chunk", "--chunker", "rival")
    assert chosen.envelope["data"]["chunked"] == 1 and chosen.envelope["data"]["reused"] == 1
    assert _ties(chosen) == []
    by_source = {c.source: c.chunker for c in read_chunks(home)}
    assert by_source == {"https://e.org/a": "rival/1", "book:shelf/novel": "paragraph/3"}
    unknown = invoke("--home", str(home), "--json", "chunk", "--chunker", "nope")
    assert unknown.exit_code == 2 and "rival" in unknown.envelope["error"]["message"]


def test_adding_a_chunker_rechunks_only_what_it_takes(plugin_site, home: Path) -> None:
    _home_with_text_and_record(home)
    first = _ok("--home", str(home), "--json", "chunk").envelope["data"]
    assert (first["chunked"], first["reused"]) == (2, 0)
    index_before = (home / "chunks" / "index.json").read_bytes()
    plugin_site("sample")  # adds sample-chunker (priority 10), which takes only "sample" documents
    again = _ok("--home", str(home), "--json", "chunk").envelope["data"]
    assert (again["chunked"], again["reused"]) == (0, 2)
    meta = json.loads((home / "chunks" / "index.json").read_bytes())["meta"]
    assert meta["chunkedBy"] == {"book:shelf/novel": "paragraph/3", "https://e.org/a": "window/3"}
    assert index_before != (home / "chunks" / "index.json").read_bytes()  # the choices it had changed
    store_snapshot(home, "https://sample.example/s", b"# S\none line\n", content_type="text/x-sample")
    _ok("--home", str(home), "extract")
    third = _ok("--home", str(home), "--json", "chunk").envelope["data"]
    assert (third["chunked"], third["reused"]) == (1, 2)
    assert {c.source: c.chunker for c in read_chunks(home)}["https://sample.example/s"] == "sample-chunker/1"


def test_extractor_ties_and_the_extractor_option(plugin_site, home: Path) -> None:
    plugin_site("rival")
    store_snapshot(home, "https://e.org/t", b"plain words\n")
    result = _ok("--home", str(home), "--json", "extract")
    [tie] = _ties(result)
    assert tie["kind"] == "extractor" and tie["components"] == ["text", "rival-text"]
    assert "text/plain" in tie["message"]
    assert read_documents(home)[0].provenance.extractor == "text"
    chosen = _ok("--home", str(home), "--json", "extract", "--extractor", "rival-text")
    assert chosen.envelope["data"]["counts"]["extracted"] == 1
    assert read_documents(home)[0].provenance.extractor == "rival-text"


def test_family_ties_are_warned_and_a_higher_priority_wins(plugin_site, home: Path) -> None:
    plugin_site("rival")
    store_snapshot(home, "https://tie.example/a", b"words\n")
    result = _ok("--home", str(home), "--json", "extract")
    family_ties = [t for t in _ties(result) if t["kind"] == "family"]
    assert [t["components"] for t in family_ties] == [["rival-family", "other-family"]]
    assert read_documents(home)[0].family == "rival-family"


def test_priority_decides_before_registration_order() -> None:
    from episteme_core.kernel.contracts import choose

    class C:
        def __init__(self, name: str, priority: int) -> None:
            self.name, self.priority = name, priority

    warned: list[tuple[str, str]] = []
    low, high, other = C("low", 0), C("high", 5), C("other", 5)
    assert choose([low, high], kind="chunker", what="x", warn=lambda *a, **k: warned.append(a)) is high
    assert warned == []
    assert choose([low, high, other], kind="chunker", what="x",
                  warn=lambda *a, **k: warned.append(a)) is high
    assert len(warned) == 1 and "'high', 'other'" in warned[0][1]
    assert choose([], kind="chunker", what="x") is None
