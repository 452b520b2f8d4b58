"""Fuzz the reading of git's output: any raw commit object becomes a record that can be stored."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from episteme_core.testing.fuzzing import LONG
from episteme_core.testing.fuzzing import count_input as ran
from episteme_git.repo import Repo, parse_commit

SHA = "a" * 40
HEADERS = st.lists(st.sampled_from([
    b"tree " + b"b" * 40, b"parent " + b"c" * 40, b"author Ada <ada@example.org> 1714550400 +0200",
    b"author \xff\xfe <> -99999999999999999999 +9999", b"committer Bob <b@x> 0", b"committer",
    b"encoding ISO-8859-1", b"encoding unicode_escape", b"encoding base64", b"encoding utf-16",
    b"parent \xff\xfe", b"author Jos\xe9 <j@e.org> 1 +0000",
    b"encoding nope", b"gpgsig -----BEGIN", b" continuation", b"mergetag object", b"",
]), max_size=8).map(b"\n".join)
MESSAGES = st.one_of(st.binary(max_size=200), st.sampled_from([
    b"\\ud83d cut emoji", b"caf\xe9", b"\r\n\r\nsubject\r\n\r\nbody", b"\x00\x00", b"\xef\xbb\xbfbom",
    "\u2028\u2029".encode(), b"\\U0010ffff\\x00",
]))


@settings(max_examples=2000 if LONG else 200, deadline=None, derandomize=not LONG)
@given(headers=HEADERS, message=MESSAGES, stat=st.booleans(),
       paths=st.lists(st.fixed_dictionaries({"path": st.text(max_size=10),
                                             "added": st.none() | st.integers(0, 9),
                                             "deleted": st.none() | st.integers(0, 9)}), max_size=3))
def test_any_commit_object_becomes_a_storable_record(headers: bytes, message: bytes, stat: bool,
                                                     paths: list[dict]) -> None:  # type: ignore[type-arg]
    ran("git commit objects")
    paths = [{**p, "path": p["path"].encode("utf-8", "replace").decode("utf-8")} for p in paths]
    repo = Repo(Path("/r"), "r", Path("/r/.git"), Path("/r/.git/objects"))
    record = parse_commit(repo, SHA, headers + b"\n\n" + message, paths, stat=stat)
    record.to_bytes()  # canonical JSON: no lone surrogate, nothing unstorable
