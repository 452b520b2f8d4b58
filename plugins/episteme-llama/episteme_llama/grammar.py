"""The GBNF grammar a generating read is held to: ``{"ids": [...]}`` naming only offered labels, each
at most once, at most K of them, in the order they were offered.

Order is what makes "each at most once" expressible in a small grammar: a rule per (label, picks
left) says "this label, then optionally a later one", so the grammar has about 2·N·K rules, where an
any-order grammar would need one per subset. Labels are offered in BM25 order, so the reply lists the
model's choices in BM25 order. The grammar always closes: once it is complete, only the end of
generation can follow, so a model cannot loop.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

OPEN = '{"ids": ['
CLOSE = "]}"
SEPARATOR = ", "


def literal(text: str) -> str:
    """``text`` as a GBNF string literal."""
    out = []
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\r":
            out.append("\\r")
        elif char == "\t":
            out.append("\\t")
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\x{ord(char):02X}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def ids_grammar(labels: Sequence[str], most: int) -> str:
    """A grammar for ``{"ids": [...]}`` with at most ``most`` of ``labels``, in their order, no repeats.

    Rules: ``pick-I-C`` takes label I or a later one, with C picks allowed from there on;
    ``next-I-C`` is optionally a separator and ``pick-I-C``."""
    if len(set(labels)) != len(labels):
        raise ValueError("labels must be distinct")
    most = min(most, len(labels))
    if most <= 0:
        return f"root ::= {literal(OPEN + CLOSE)}\n"
    quoted = [literal(json.dumps(label, ensure_ascii=False)) for label in labels]
    n = len(labels)
    rules = [f"root ::= {literal(OPEN)} pick-0-{most}? {literal(CLOSE)}"]
    for left in range(1, most + 1):
        for i in range(n):
            then = f" next-{i + 1}-{left - 1}" if left > 1 and i + 1 < n else ""
            alternatives = [quoted[i] + then]
            if i + 1 < n:
                alternatives.append(f"pick-{i + 1}-{left}")
            rules.append(f"pick-{i}-{left} ::= " + " | ".join(alternatives))
    for left in range(1, most):
        for i in range(1, n):
            rules.append(f"next-{i}-{left} ::= ( {literal(SEPARATOR)} pick-{i}-{left} )?")
    return "\n".join(rules) + "\n"


def max_reply_tokens(labels: Sequence[str], most: int, tokens_per_char: float = 1.0) -> int:
    """A token budget that always lets the longest allowed reply finish (one token per character at
    worst, plus the end token)."""
    longest = sorted((len(json.dumps(label, ensure_ascii=False)) for label in labels), reverse=True)
    chars = len(OPEN) + len(CLOSE) + sum(longest[:most]) + len(SEPARATOR) * max(0, min(most, len(labels)) - 1)
    return int(chars * tokens_per_char) + 2
