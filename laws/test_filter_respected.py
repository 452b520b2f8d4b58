"""FilterRespected: with --filter, every paragraph of the answer (and every shard read) is of a named source."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))  # the laws folder is not a package
from _ask_world import SOURCES, ignore, questions, shard_sets
from hypothesis import given, settings
from hypothesis import strategies as st

from episteme_core.ask.run import AskOptions, ask
from episteme_core.kernel.loader import load_plugins
from episteme_core.store.home import Home

PLUGINS = load_plugins()


@settings(max_examples=150, deadline=None)
@given(shards=shard_sets(), question=questions,
       chosen=st.lists(st.sampled_from(SOURCES), min_size=1, max_size=3, unique=True))
def test_filter_respected(shards, question, chosen) -> None:
    wanted = tuple(sorted(chosen))
    with tempfile.TemporaryDirectory() as tmp:
        result = ask(Home(Path(tmp) / "absent"), AskOptions(question=question, filter=wanted, reader="bm25"),
                     plugins=PLUGINS, warn=ignore, shards=shards)
    assert all(p.source in wanted for p in result.paragraphs)
    assert all(o.source in wanted for o in result.omitted)
    assert all(s.source in wanted for s in result.shards)
