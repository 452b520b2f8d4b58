"""A stage's index is encoded in one pass to exactly the converter's canonical bytes, is not
written again when a commit would not change it, and prune removes only what no entry names."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import attrs
from hypothesis import given, settings
from hypothesis import strategies as st

from episteme_core.records.canonical import canonical_bytes, fingerprint
from episteme_core.records.convert import unstructure
from episteme_core.records.storage import StageEntry, StageIndex
from episteme_core.store.commits import Stage, encode_index
from episteme_core.store.home import Home

TEXT = st.text(max_size=12)  # any code point but lone surrogates (those are refused either way)
JSON = st.recursive(st.none() | st.booleans() | st.integers() | TEXT,
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
                    max_leaves=12)
ENTRY = st.builds(StageEntry, key=TEXT, sha256=st.text("0123456789abcdef", min_size=64, max_size=64),
                  bytes=st.integers(0, 2**40), path=TEXT)


def _by_converter(index: StageIndex) -> bytes:
    data: dict[str, Any] = unstructure(index)
    data.pop("fingerprint")
    return canonical_bytes(unstructure(attrs.evolve(index, fingerprint=fingerprint(data))))


@settings(max_examples=60, deadline=None)
@given(entries=st.lists(ENTRY, max_size=6), meta=st.dictionaries(TEXT, JSON, max_size=4), stage=TEXT)
def test_the_one_pass_encoding_is_the_converters(entries: list[StageEntry], meta: dict[str, Any],
                                                 stage: str) -> None:
    index = StageIndex(stage=stage, episteme_version="0.1.0", entries=entries, meta=meta)
    data, digest = encode_index(index)
    assert data == _by_converter(index)
    assert f'"fingerprint":"{digest}"'.encode() in data


def test_a_commit_that_changes_nothing_does_not_write_the_index(tmp_path: Path) -> None:
    stage = Stage(Home(tmp_path), "chunks")
    one, two = stage.put_json("a", {"n": 1}), stage.put_json("b", {"n": 2})
    first = stage.commit([one, two], {"m": [1, 2]})
    before = os.stat(stage.index_path)
    again = stage.commit([two, one], {"m": [1, 2]})
    after = os.stat(stage.index_path)
    assert again == first and stage.read_index() == first
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)  # not replaced
    changed = stage.commit([one], {"m": [1, 2]})
    assert changed != first and stage.read_index() == changed
    assert os.stat(stage.index_path).st_ino != before.st_ino  # replaced atomically (a new file)


def test_prune_removes_what_no_entry_names_and_leaves_temp_files(tmp_path: Path) -> None:
    stage = Stage(Home(tmp_path), "documents")
    kept, gone = stage.put_json("a", {"n": 1}), stage.put_json("b", {"n": 2})
    temp = stage.objects_dir / "ab" / ".x.json.1.tmp"
    temp.parent.mkdir(parents=True, exist_ok=True)
    temp.write_bytes(b"partial")
    index = stage.commit([kept])
    assert stage.prune(index) == 1
    assert stage.object_path(kept).exists() and not stage.object_path(gone).exists() and temp.exists()
    assert stage.prune(index) == 0
