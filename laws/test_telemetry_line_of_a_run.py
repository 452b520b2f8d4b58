"""TelemetryLineOfARun: every question asked appends exactly one whole telemetry line with every field,
also when the question is refused and when many are asked at once.
"""

from __future__ import annotations

import json
import sys
import tempfile
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))  # the laws folder is not a package
from _ask_world import SOURCES, ignore, questions, shard_sets
from hypothesis import given, settings
from hypothesis import strategies as st

from episteme_core.ask.run import AskOptions, ask
from episteme_core.errors import EpistemeError
from episteme_core.kernel.loader import load_plugins
from episteme_core.store.home import Home

PLUGINS = load_plugins()
FIELDS = {"schemaVersion", "time", "command", "question", "filter", "since", "durationMs", "sources", "shards",
          "readers", "fallbacks", "answered", "omitted", "ok", "error", "label"}


@settings(max_examples=40, deadline=None)
@given(shards=shard_sets(), asked=st.lists(st.tuples(questions, st.booleans()), min_size=1, max_size=6),
       command=st.sampled_from(["ask", "eval", "serve"]), parallel=st.booleans())
def test_telemetry_line_of_a_run(shards, asked, command, parallel) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Home(Path(tmp))

        def one(question: str, refused: bool) -> None:
            wanted = ("nosuch",) if refused else tuple(SOURCES)
            try:
                ask(home, AskOptions(question=question, filter=wanted, reader="bm25"), plugins=PLUGINS,
                    warn=ignore, shards=shards, command=command)
            except EpistemeError:
                assert refused

        if parallel:
            threads = [threading.Thread(target=one, args=pair) for pair in asked]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        else:
            for pair in asked:
                one(*pair)
        lines = (Path(tmp) / "telemetry.jsonl").read_text("utf-8").splitlines()
    assert len(lines) == len(asked)
    entries = [json.loads(line) for line in lines]
    assert all(set(e) == FIELDS and e["command"] == command for e in entries)
    assert sorted(e["question"] for e in entries) == sorted(q for q, _ in asked)
    assert sorted(e["ok"] for e in entries) == sorted(not refused for _, refused in asked)
