"""ParallelEqualsSerial: extraction, chunking and the index built by a pool of local worker processes
are byte-identical to the same stages run in one process."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from episteme_core.testing import run_cli

from ._retrieval_world import WORDS

_documents = st.lists(st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=40).map(" ".join),
                               min_size=1, max_size=6).map("\n\n".join), min_size=2, max_size=9)


def _stage_bytes(home: Path) -> dict[str, bytes]:
    return {str(path.relative_to(home)): path.read_bytes()
            for stage in ("documents", "chunks", "shards") for path in sorted((home / stage).rglob("*"))
            if path.is_file()}


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(documents=_documents, shard_size=st.integers(min_value=1, max_value=20))
def test_a_local_pool_writes_the_bytes_of_one_process(tmp_path_factory, documents, shard_size) -> None:  # type: ignore[no-untyped-def]
    work = tmp_path_factory.mktemp("src")
    entries = []
    for number, text in enumerate(documents):
        (work / f"d{number}.txt").write_text(text, "utf-8")
        entries.append({"sourceUrl": f"https://example.org/d{number}", "localPath": f"d{number}.txt",
                        "contentType": "text/plain"})
    (work / "map.json").write_text(json.dumps(entries))
    outputs = []
    for jobs in ("1", "2"):
        home = tmp_path_factory.mktemp(f"jobs{jobs}") / "home"
        home.mkdir()
        (home / "config.json").write_text(json.dumps({"shard_size": shard_size}))
        run = run_cli(["--home", str(home), "pipeline", "--map", str(work / "map.json"), "--max-chars", "300",
                       "--overlap-chars", "20", "--jobs", jobs, "--json"])
        assert run.exit_code == 0, run.stderr
        outputs.append(_stage_bytes(home))
    assert outputs[0] == outputs[1]
