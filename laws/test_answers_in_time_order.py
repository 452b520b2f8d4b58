"""AnswersInTimeOrder: an answer's paragraphs are in time order; those without a time come last.

Times mix dates, naive and zoned datetimes and unparseable strings; order is by the instant in UTC.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))  # the laws folder is not a package
from _ask_world import ScriptedReader, ignore, questions, replies, shard_sets
from hypothesis import given, settings

from episteme_core.ask.answer import parse_time
from episteme_core.ask.run import AskOptions, ask
from episteme_core.kernel.loader import load_plugins
from episteme_core.store.home import Home

PLUGINS = load_plugins()


@settings(max_examples=150, deadline=None)
@given(shards=shard_sets(), question=questions, scripted=replies)
def test_answers_in_time_order(shards, question, scripted) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        result = ask(Home(Path(tmp) / "absent"), AskOptions(question=question), plugins=PLUGINS, warn=ignore,
                     shards=shards, readers=[ScriptedReader(scripted)])
    moments = [parse_time(p.time) for p in result.paragraphs]
    timed = [m for m in moments if m is not None]
    assert timed == sorted(timed)
    first_untimed = next((i for i, m in enumerate(moments) if m is None), len(moments))
    assert all(m is None for m in moments[first_untimed:])
