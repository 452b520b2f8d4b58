"""DerivedBytesAreReproducible: the same inputs, options and version give byte-identical documents, chunks,
shards and diffs, whatever PYTHONHASHSEED the process runs under."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from episteme_core.testing import run_cli

from ._retrieval_world import WORDS

_paragraphs = st.lists(
    st.lists(st.sampled_from(WORDS) | st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")),
                                              min_size=1, max_size=12),
             min_size=1, max_size=30).map(" ".join),
    min_size=1, max_size=8,
)


def _stage_bytes(home: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(home)): path.read_bytes()
        for stage in ("documents", "chunks", "shards")
        for path in sorted((home / stage).rglob("*"))
        if path.is_file()
    }


@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(paragraphs=_paragraphs, later=_paragraphs)
def test_derived_bytes_do_not_depend_on_hash_seed(tmp_path_factory, paragraphs, later) -> None:  # type: ignore[no-untyped-def]
    work = tmp_path_factory.mktemp("src")
    (work / "a.txt").write_text("\n\n".join(paragraphs), "utf-8")
    (work / "b.txt").write_text("\n\n".join(later), "utf-8")
    shelf = work / "shelf"  # a book: its paragraphs are scored in runs
    shelf.mkdir()
    (shelf / "book.txt").write_text("\n\n".join([*paragraphs, *later, *paragraphs]), "utf-8")
    (work / "map.json").write_text(json.dumps([
        {"sourceUrl": "https://example.org/a.txt", "localPath": "a.txt", "contentType": "text/plain"},
        {"sourceUrl": "https://example.org/b.txt", "localPath": "b.txt", "contentType": "text/plain"},
    ]))
    outputs = []
    for seed in ("0", "4242"):
        home = tmp_path_factory.mktemp(f"seed{seed}") / "home"
        env = {"PYTHONHASHSEED": seed}
        run = run_cli(["--home", str(home), "pipeline", "--map", str(work / "map.json"), "--max-chars", "300",
                       "--overlap-chars", "50", "--json"], env=env)
        assert run.exit_code == 0, run.stderr
        run = run_cli(["--home", str(home), "ingest", "books", str(shelf), "--json"], env=env)
        assert run.exit_code == 0, run.stderr
        (work / "b.txt").write_text("\n\n".join([*later, "one more paragraph"]), "utf-8")
        other = home.parent / "other"
        run = run_cli(["--home", str(other), "pipeline", "--map", str(work / "map.json"), "--json"], env=env)
        assert run.exit_code == 0, run.stderr
        (work / "b.txt").write_text("\n\n".join(later), "utf-8")
        diff = run_cli(["diff", "--from", str(home), "--to", str(other), "--out", "-", "--json"], env=env)
        assert diff.exit_code == 0, diff.stderr
        outputs.append((_stage_bytes(home), json.loads(diff.stdout)["data"]["artifact"]))
    assert outputs[0][0] == outputs[1][0]
    assert outputs[0][1] == outputs[1][1]
