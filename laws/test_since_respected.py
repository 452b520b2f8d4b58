"""SinceRespected: with --since, every paragraph of the answer has a time at or after it."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))  # the laws folder is not a package
from _ask_world import ignore, questions, shard_sets
from hypothesis import given, settings
from hypothesis import strategies as st

from episteme_core.ask.answer import parse_time
from episteme_core.ask.run import AskOptions, ask, parse_since
from episteme_core.kernel.loader import load_plugins
from episteme_core.store.home import Home

PLUGINS = load_plugins()


@settings(max_examples=150, deadline=None)
@given(shards=shard_sets(), question=questions, since=st.dates().map(lambda d: d.isoformat()))
def test_since_respected(shards, question, since) -> None:
    bound = parse_since(since)
    with tempfile.TemporaryDirectory() as tmp:
        result = ask(Home(Path(tmp) / "absent"), AskOptions(question=question, since=bound, reader="bm25"),
                     plugins=PLUGINS, warn=ignore, shards=shards)
    floor = parse_time(bound)
    for p in [*result.paragraphs, *result.omitted]:
        moment = parse_time(p.time)
        assert moment is not None and floor is not None and moment >= floor
