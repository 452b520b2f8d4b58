"""ReadersOnlyName: whatever a reader returns, every answer paragraph is byte-identical to a stored one
(or, for a long one, to the characters of it its excerpt names).

Readers may return any labels (invented ones, numbers, junk, duplicates) or fail; the answer holds
only stored paragraphs, each under its own reference, and never anything the reader wrote.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))  # the laws folder is not a package
from _ask_world import ScriptedReader, ignore, questions, replies, shard_sets, stored
from hypothesis import given, settings

from episteme_core.ask.candidates import EXCERPT_CHARS, EXCERPT_FROM
from episteme_core.ask.run import AskOptions, ask
from episteme_core.kernel.loader import load_plugins
from episteme_core.store.home import Home

PLUGINS = load_plugins()


@settings(max_examples=150, deadline=None)
@given(shards=shard_sets(), question=questions, scripted=replies)
def test_readers_only_name(shards, question, scripted) -> None:
    reader = ScriptedReader(scripted)
    with tempfile.TemporaryDirectory() as tmp:
        result = ask(Home(Path(tmp) / "absent"), AskOptions(question=question), plugins=PLUGINS, warn=ignore,
                     shards=shards, readers=[reader])
    held = stored(shards)
    for p in result.paragraphs:
        kept_text = held[p.ref].text
        if p.excerpt is not None:
            assert p.excerpt.chars == len(kept_text) and 0 <= p.excerpt.start < p.excerpt.end <= len(kept_text)
            kept_text = kept_text[p.excerpt.start : p.excerpt.end]
        assert p.text.encode("utf-8") == kept_text.encode("utf-8")
        assert p.record_id == held[p.ref].record_id and p.n == held[p.ref].paragraph
    for o in result.omitted:
        whole = len(held[o.ref].text)  # what it would have taken: itself, or its window when long
        assert o.ref in held and (o.chars == whole if whole <= EXCERPT_FROM else o.chars <= EXCERPT_CHARS)
