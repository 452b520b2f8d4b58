"""``ask`` end to end over in-memory shards: readers name, the answer is stored text, verbatim."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from episteme_core.ask.memory import MemoryShard
from episteme_core.ask.reference_server import ReferenceServer
from episteme_core.ask.run import AskOptions, ask, parse_filter, parse_since
from episteme_core.errors import EpistemeError
from episteme_core.kernel.loader import load_plugins
from episteme_core.records.convert import unstructure
from episteme_core.store.home import Home
from episteme_core.testing import validate

from .conftest import Warnings, write_config

PLUGINS = load_plugins()


def run(home: Path, shards: list[MemoryShard], warnings: Warnings, question: str = "white whale",
        **options: object):
    return ask(Home(home), AskOptions(question=question, **options), plugins=PLUGINS,  # type: ignore[arg-type]
               warn=warnings, shards=shards)


def stored(shards: list[MemoryShard]) -> dict[str, str]:
    return {c.id: c.text for s in shards for c in s.chunks.values()}


def test_bm25_answer_is_verbatim_cited_and_in_time_order(home: Path, shards: list[MemoryShard],
                                                         warnings: Warnings) -> None:
    result = run(home, shards, warnings, question="whale")
    data = unstructure(result)
    validate(data, "ask-result")
    texts = stored(shards)
    assert result.paragraphs, "the whale paragraphs are found"
    for p in result.paragraphs:
        assert texts[p.ref] == p.text and p.content_trust == "untrusted-source"
        assert p.citation["ref"] == p.ref and p.citation["shard"] == p.shard
    times = [p.time for p in result.paragraphs]
    assert times == sorted(times)
    assert {p.source for p in result.paragraphs} == {"books", "claude"}
    assert all(s.reader == "bm25" for s in result.shards if s.candidates)


def test_http_reader_from_config(home: Path, shards: list[MemoryShard], warnings: Warnings,
                                 reference: ReferenceServer) -> None:
    write_config(home, [{"name": "ref", "url": reference.url, "slots": 2, "timeout": 5}])
    result = run(home, shards, warnings)
    assert warnings == []
    assert {s.reader for s in result.shards if s.candidates} == {"ref"}
    assert [r.name for r in result.readers] == ["ref"]
    assert sorted(reference.stats()["runs"][0]["shards"]) == ["books-0001", "books-0002", "claude-0001"]
    assert all(p.text == stored(shards)[p.ref] for p in result.paragraphs)


def test_reader_option_picks_bm25_over_config(home: Path, shards: list[MemoryShard], warnings: Warnings,
                                              reference: ReferenceServer) -> None:
    write_config(home, [{"name": "ref", "url": reference.url}])
    result = run(home, shards, warnings, reader="bm25")
    assert {s.reader for s in result.shards if s.candidates} == {"bm25"}
    assert reference.stats()["chat"] == 0
    with pytest.raises(EpistemeError, match="unknown reader 'nope'") as caught:
        run(home, shards, warnings, reader="nope")
    assert caught.value.code == "INVALID_USAGE"


def test_filter_and_since(home: Path, shards: list[MemoryShard], warnings: Warnings) -> None:
    only_chats = run(home, shards, warnings, question="whale", filter=("claude",))
    assert {p.source for p in only_chats.paragraphs} == {"claude"}
    recent = run(home, shards, warnings, question="whale", since=parse_since("2020-01-01"))
    assert recent.paragraphs and all(p.time >= "2020-01-01" for p in recent.paragraphs)
    with pytest.raises(EpistemeError, match="unknown source") as caught:
        run(home, shards, warnings, filter=("nosuch",))
    assert caught.value.code == "INVALID_USAGE"


def test_budget_lists_omitted(home: Path, shards: list[MemoryShard], warnings: Warnings) -> None:
    result = run(home, shards, warnings, budget=40)
    assert result.chars <= 40 and result.omitted
    assert all(o.reason == "budget" for o in result.omitted)


@pytest.mark.parametrize("text", ["yesterday", "2024-13-01", "2024/01/01", "", "12"])
def test_bad_since(text: str) -> None:
    with pytest.raises(EpistemeError, match="is not a date") as caught:
        parse_since(text)
    assert caught.value.code == "INVALID_USAGE"


def test_filter_parsing() -> None:
    assert parse_filter(" claude, books ,claude") == ("books", "claude")
    with pytest.raises(EpistemeError):
        parse_filter(" , ")


def test_config_with_a_non_http_url_is_a_clear_error(home: Path, shards: list[MemoryShard],
                                                     warnings: Warnings) -> None:
    write_config(home, [{"name": "x", "url": "ftp://example.org/"}])
    with pytest.raises(EpistemeError, match=r"url must be http:// or https://") as caught:
        run(home, shards, warnings)
    assert caught.value.code == "INVALID_INPUT"


def test_one_telemetry_line_per_question(home: Path, shards: list[MemoryShard], warnings: Warnings) -> None:
    home.mkdir()
    run(home, shards, warnings)
    run(home, shards, warnings, filter=("books",))
    lines = (home / "telemetry.jsonl").read_text("utf-8").splitlines()
    assert len(lines) == 2
    first = json.loads(lines[0])
    validate(first, "telemetry-line")
    assert first["command"] == "ask" and first["question"] == "white whale" and first["ok"]
    assert {s["source"] for s in first["sources"]} == {"books", "claude"}
    assert json.loads(lines[1])["filter"] == ["books"]
