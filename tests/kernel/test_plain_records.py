"""``convert.plain`` (the read path's records to JSON, without cattrs) gives exactly what the converter's
``unstructure`` gives, on real query results and on records of every shape a result holds."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest

from episteme_core.records.canonical import canonical_bytes
from episteme_core.records.convert import get_converter, plain
from episteme_core.records.hits import Filters
from episteme_core.search.query import query
from episteme_core.store.home import Home
from episteme_core.testing import run_cli


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Home:
    """A document (``pipeline --map``) and a book's records (``ingest books``): chunks and runs."""
    root = tmp_path_factory.mktemp("plain")
    (root / "notes.txt").write_text("Retention rules\n\nBackups are kept for thirty days, then deleted.\n"
                                    "\nA \"quoted phrase\" and more words about backups.\n")
    (root / "map.json").write_text(json.dumps([{"sourceUrl": "https://example.org/notes.txt#part",
                                                "localPath": "notes.txt", "contentType": "text/plain"}]))
    shelf = root / "shelf"
    shelf.mkdir()
    (shelf / "tale.md").write_text("# A tale\n\nThe keeper kept thirty backups of the log.\n\n"
                                   "Then the fog came in over the harbour, thirty days long.\n")
    for args in (["pipeline", "--map", str(root / "map.json")], ["ingest", "books", str(shelf)]):
        built = run_cli(["--home", str(root / "home"), *args], env={"EPISTEME_LOAD_PLUGINS": ""})
        assert built.exit_code == 0, built.stderr
    return Home(root / "home")


@pytest.mark.parametrize(("term", "options"), [
    ("backups thirty", {}),
    ("thirty", {"limit": 1, "offset": 1}),
    ('"quoted phrase"', {}),
    ("backups", {"exact": True, "filters": Filters(source=("books",))}),
    ("nothing-matches-this", {}),
    ("!!!", {}),
])
def test_plain_equals_the_converter_on_query_results(home: Home, term: str,
                                                     options: dict[str, object]) -> None:
    result = query(home, term, **options)  # type: ignore[arg-type]
    converted = get_converter().unstructure(result)
    assert plain(result) == converted
    assert canonical_bytes(plain(result)) == canonical_bytes(converted)


def test_a_result_with_results_and_paragraphs_is_covered(home: Home) -> None:
    result = query(home, "thirty backups")
    assert result.results and any(r.paragraphs for r in result.results)  # runs of a record's paragraphs
    assert any(r.citation.selector for r in result.results)


@attrs.frozen
class _Inner:
    snake_name: int
    values: tuple[str, ...] = ()


@attrs.frozen
class _Outer:
    inner: _Inner
    inners: list[_Inner]
    by_key: dict[str, _Inner]
    maybe: _Inner | None = None
    number: float = 1.5
    flag: bool = False
    text: str | None = None


def test_plain_equals_the_converter_on_every_shape() -> None:
    record = _Outer(inner=_Inner(1, ("a", "b")), inners=[_Inner(2), _Inner(3, ("c",))],
                    by_key={"k": _Inner(4)}, maybe=_Inner(5), text="t")
    assert plain(record) == get_converter().unstructure(record)
    assert plain(record)["inner"] == {"snakeName": 1, "values": ["a", "b"]}
    empty = _Outer(inner=_Inner(0), inners=[], by_key={})
    assert plain(empty) == get_converter().unstructure(empty)


def test_the_query_command_answers_with_plain_data(home: Home, tmp_path: Path) -> None:
    found = run_cli(["--home", str(home.root), "query", "--term", "thirty backups", "--json"],
                    env={"EPISTEME_LOAD_PLUGINS": ""})
    assert found.exit_code == 0, found.stderr
    expected = get_converter().unstructure(query(home, "thirty backups"))
    assert found.envelope["data"] == json.loads(canonical_bytes(expected))
