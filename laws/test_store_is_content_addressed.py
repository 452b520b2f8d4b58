"""StoreIsContentAddressed: bytes are stored once, under the sha256 of exactly those bytes, and read back verified.

Holds for blobs and for stage objects alike, whatever the bytes and however often they are stored.
"""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from episteme_core.store.blobs import BlobStore
from episteme_core.store.commits import Stage
from episteme_core.store.home import Home


@settings(max_examples=60, deadline=None)
@given(st.lists(st.binary(max_size=2048), min_size=1, max_size=8))
def test_blobs_are_named_by_their_sha256_and_stored_once(contents: list[bytes]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        blobs = BlobStore(Path(tmp))
        names = [blobs.put(data) for data in contents + contents]
        for data, name in zip(contents + contents, names, strict=True):
            assert name == hashlib.sha256(data).hexdigest()
            assert blobs.path_for(name).name == name
            assert blobs.get(name) == data
        assert len(list(blobs.iter_paths())) == len(set(contents))


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=10), st.binary(max_size=512), min_size=1, max_size=6))
def test_stage_objects_are_named_by_content_not_by_key(objects: dict[str, bytes]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        stage = Stage(Home(Path(tmp)), "chunks")
        entries = [stage.put_bytes(key, data) for key, data in objects.items()]
        index = stage.commit(entries)
        for entry in index.entries:
            data = objects[entry.key]
            assert entry.sha256 == hashlib.sha256(data).hexdigest()
            assert entry.path.endswith(entry.sha256)
            assert stage.read_bytes(entry) == data
        stored = [p for p in stage.objects_dir.rglob("*") if p.is_file()]
        assert len(stored) == len(set(objects.values()))
