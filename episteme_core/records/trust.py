"""The labels every stage puts on source text, in one light module the query path can import.

Every chunk, paragraph and answer says its words are the source's, not episteme's; some paragraph
kinds (a model's thinking, a tool's call or result) are kept but left out of ``ask`` unless asked for.
"""

from __future__ import annotations

CONTENT_TRUST = "untrusted-source"

# Paragraph kinds kept in a record but left out of ``ask`` unless ``--include-marked``: their words
# are a model's or a tool's, not the person's (a transcript's ``summary`` is a title a model wrote).
MARKED_KINDS = frozenset({"thinking", "tool_call", "tool_result", "summary"})
