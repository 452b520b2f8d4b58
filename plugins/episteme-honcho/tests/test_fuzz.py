"""Fuzz the reading of Honcho's pages: any page is a list of items or SOURCE_UNAVAILABLE, and any
session's messages become a storable record (or are counted as skipped)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from episteme_core.api import EpistemeError
from episteme_core.testing.fuzzing import LONG
from episteme_core.testing.fuzzing import count_input as ran
from episteme_honcho.client import HonchoClient
from episteme_honcho.source import session_record

NASTY = st.lists(st.sampled_from(["a", " ", "\ud83d", "\udc80", "\x00", "#", "/", "é", "\U0001f600", ""]),
                 max_size=8).map("".join)
VALUE = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | NASTY,
                     lambda c: st.lists(c, max_size=3) | st.dictionaries(NASTY, c, max_size=3), max_leaves=8)
MESSAGE = st.fixed_dictionaries({}, optional={
    "id": NASTY | VALUE, "content": NASTY | VALUE, "peer_id": NASTY | VALUE,
    "created_at": st.sampled_from(["2024-01-15T10:00:00Z", "nope", "9999-99-99", ""]) | VALUE,
})
SESSION = st.fixed_dictionaries({"id": st.sampled_from(["s1", "s-2"])}, optional={
    "metadata": VALUE, "is_active": VALUE, "created_at": VALUE})


@settings(max_examples=3000 if LONG else 300, deadline=None, derandomize=not LONG)
@given(session=SESSION, messages=st.lists(MESSAGE, max_size=5))
def test_any_session_becomes_a_storable_record_or_is_skipped(session: dict[str, Any],
                                                             messages: list[dict[str, Any]]) -> None:
    ran("Honcho sessions")
    skipped: dict[str, int] = {}
    record = session_record("w", session, messages, skipped)
    if record is not None:
        record.to_bytes()


@settings(max_examples=3000 if LONG else 300, deadline=None, derandomize=not LONG)
@given(body=st.one_of(st.binary(max_size=100), VALUE.map(lambda v: json.dumps(v).encode()),
                      st.fixed_dictionaries({"items": st.lists(VALUE, max_size=3)},
                                            optional={"page": VALUE, "pages": VALUE})
                      .map(lambda v: json.dumps(v).encode())))
def test_any_page_is_items_or_a_clean_error(body: bytes) -> None:
    ran("Honcho pages")
    client = HonchoClient("http://127.0.0.1:9", "key")
    try:
        items, pages = client._check_page(client._parse(body, "POST /x"), "/x", 1)
    except EpistemeError as error:
        assert error.code == "SOURCE_UNAVAILABLE"
        return
    assert all(isinstance(item, dict) for item in items)
    assert pages is None or isinstance(pages, int)
