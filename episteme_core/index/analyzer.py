"""The Unicode-aware analyzer that turns text into BM25 tokens, the same way for chunks and queries.

Steps: NFKC (full-width Latin becomes ASCII, ligatures split), casefold ("Straße" → "strasse"),
diacritic folding (the combining marks Latin, Greek and Cyrillic letters carry: "café" → "cafe"),
then tokens are maximal runs of letters, digits and combining marks (so a Hindi word stays one
token; a run longer than 100 characters is cut into 100-character tokens), underscores split
words, and CJK runs become overlapping bigrams ("東京都" → 東京, 京都).
No stopwords and no stemming: specs cite "must" and "may", and evidence is matched as written.
The version string names all of this; a shard built with another version is refused.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable

ANALYZER_VERSION = "unicode-v1"
MAX_TOKEN_CHARS = 100

# Combining marks used as diacritics on Latin, Greek and Cyrillic letters (and symbol marks).
# Indic, Arabic, Hebrew, Thai... marks live elsewhere and are kept: they are part of the word.
_DIACRITICS = "[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+"
_CJK = (
    "\u1100-\u11ff\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3031-\u3035\u3038-\u303c"
    "\u3040-\u30ff\u3100-\u318f\u3190-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f"
    "\uac00-\ud7ff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f"
)
_ASCII_TOKEN = re.compile(f"[a-z0-9]{{1,{MAX_TOKEN_CHARS}}}")
# ASCII text in one pass: letters lowercased, digits kept, everything else a space (then split).
_ASCII_WORDS = {c: (chr(c).lower() if chr(c).isalnum() else " ") for c in range(128)}


@functools.cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """token, diacritics, CJK, CJK split: compiled on the first non-ASCII text (their big character
    classes cost ~20 ms to compile, which an ASCII query never pays)."""
    from episteme_core.index._marks import MARKS

    return (
        re.compile(f"[\\w{MARKS}]{{1,{MAX_TOKEN_CHARS}}}"),
        re.compile(_DIACRITICS),
        re.compile(f"[{_CJK}]"),
        re.compile(f"[{_CJK}]+|[^{_CJK}]+"),
    )


def normalize(text: str) -> str:
    """NFKC, casefold and diacritic folding; ASCII takes a fast path with the same result."""
    if text.isascii():
        return text.lower()
    text = unicodedata.normalize("NFKC", text).casefold()
    if not text.isascii():
        decomposed = unicodedata.normalize("NFD", text)
        stripped = _patterns()[1].sub("", decomposed)
        text = unicodedata.normalize("NFC", stripped)
    return text


def _cjk_bigrams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def tokenize(text: str) -> list[str]:
    """The tokens of ``text`` in order (repeats kept: they are term frequency)."""
    if text.isascii():  # the common case: one translate and a split, as the regex would cut it
        words = text.translate(_ASCII_WORDS).split()
        if words and max(map(len, words)) > MAX_TOKEN_CHARS:
            return _ASCII_TOKEN.findall(text.lower())
        return words
    text = normalize(text)
    if text.isascii():
        return _ASCII_TOKEN.findall(text)
    token_re, _, cjk, cjk_split = _patterns()
    tokens: list[str] = []
    for token in token_re.findall(text.replace("_", " ")):
        if cjk.search(token) is None:
            tokens.append(token)
            continue
        for part in cjk_split.findall(token):
            if cjk.match(part):
                tokens.extend(_cjk_bigrams(part))
            else:
                tokens.append(part)
    return tokens


def document_tokens(heading: str | None, text: str, heading_weight: int) -> list[str]:
    """A chunk's tokens: its heading's tokens ``heading_weight`` times, then its body's."""
    tokens = tokenize(heading) * heading_weight if heading else []
    tokens.extend(tokenize(text))
    return tokens


def query_terms(text: str) -> list[str]:
    """A query's distinct terms, sorted (so scoring adds them in one fixed order)."""
    return sorted(set(tokenize(text)))


def analyzer_params() -> dict[str, object]:
    """What a shard records about the analyzer it was built with."""
    return {"version": ANALYZER_VERSION, "unicode": "NFKC+casefold+diacritics", "cjk": "bigrams"}


def vocabulary(token_lists: Iterable[list[str]]) -> list[str]:
    """The sorted vocabulary of ``token_lists``: sorted, so ids never depend on PYTHONHASHSEED."""
    seen: set[str] = set()
    for tokens in token_lists:
        seen.update(tokens)
    return sorted(seen)
