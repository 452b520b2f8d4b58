"""The labels every stage puts on source text, in one light module the query path can import.

Every chunk, paragraph and answer says its words are the source's, not episteme's. Some paragraph
kinds are kept in a record but marked: a model's thinking and a transcript's summary line (a model's
words), a tool's call and output (a tool's), and a book's non-prose parts (contents, captions, a
licence notice). Tool output is offered to ``ask`` like any paragraph, labelled, because that is
where an agent's answers often are (a page fetched, a command's output); the other marked kinds are
left out of ``ask`` unless asked for, and the non-prose ones weigh less in ``query``.
"""

from __future__ import annotations

CONTENT_TRUST = "untrusted-source"

# Paragraph kinds kept in a record and marked (``marked: true`` on their chunks).
MARKED_KINDS = frozenset({"thinking", "tool_call", "tool_result", "summary", "contents", "caption",
                          "boilerplate"})
# Marked kinds ``ask`` offers by default (``--exclude-marked`` leaves them out too).
OFFERED_MARKED_KINDS = frozenset({"tool_result"})
# A book's parts that are not prose (``personal.frontmatter``): ``query`` weighs them less.
NON_PROSE_KINDS = frozenset({"contents", "caption", "boilerplate"})
# What an answer calls a marked paragraph (``markedAs``), so a reader knows whose words they are.
MARKED_LABELS = {"thinking": "thinking", "tool_call": "tool call", "tool_result": "tool output",
                 "summary": "summary", "contents": "contents", "caption": "caption",
                 "boilerplate": "boilerplate"}
