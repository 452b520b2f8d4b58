"""BudgetRespected: an answer holds whole paragraphs totalling at most the budget; none that was left
out would still have fitted.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))  # the laws folder is not a package
from _ask_world import ScriptedReader, ignore, questions, replies, shard_sets, stored
from hypothesis import given, settings
from hypothesis import strategies as st

from episteme_core.ask.run import AskOptions, ask
from episteme_core.kernel.loader import load_plugins
from episteme_core.store.home import Home

PLUGINS = load_plugins()


@settings(max_examples=150, deadline=None)
@given(shards=shard_sets(), question=questions, scripted=replies, budget=st.integers(1, 400))
def test_budget_respected(shards, question, scripted, budget) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        result = ask(Home(Path(tmp) / "absent"), AskOptions(question=question, budget=budget), plugins=PLUGINS,
                     warn=ignore, shards=shards, readers=[ScriptedReader(scripted)])
    held = stored(shards)
    assert result.chars == sum(len(p.text) for p in result.paragraphs) <= budget
    for p in result.paragraphs:
        kept_text = held[p.ref].text
        assert p.text == (kept_text[p.excerpt.start : p.excerpt.end] if p.excerpt else kept_text)
    for o in result.omitted:
        assert result.chars + o.chars > budget
