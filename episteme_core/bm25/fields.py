"""The fields of a chunk that BM25 weighs: title, URL, section path, heading, defined terms and body.

Weighting is BM25F with one length normalisation, done as boosted copies: a field of weight ``w``
adds its terms ``w`` times to the scored unit (so its term frequency and its length count ``w``
times). Title, URL path, section path and heading say what a passage is about in few words, and a
defined term (the ``dt`` of a definition list) names what the passage defines; the body is
everything else.
A field already said by a heavier one is not repeated (a record's heading is its title). The weights
are chosen on the dev question set (``bench/quality.py``) and recorded in every shard.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from episteme_core.text.analyzer import (
    DEFAULT_LANGUAGE,
    identifier_words,
    language_of,
    surface,
    tokenize,
    words,
)

FIELDS = ("title", "url", "path", "heading", "terms", "body")
LABEL_FIELDS = FIELDS[:-1]
FIELD_DEFAULTS: dict[str, int] = {"title": 1, "url": 2, "path": 1, "heading": 3, "terms": 2, "body": 1}
_NOT_WORD = re.compile(r"[^A-Za-z0-9]+")
_DIGIT_EDGE = re.compile(r"(?<=[A-Za-z])(?=[0-9])|(?<=[0-9])(?=[A-Za-z])")
MIN_WEIGHT, MAX_WEIGHT = 0, 10
# A heading's leading section number ("10.2.3.", "4.", "A.1", "Appendix B."): a dotted number or a
# number ending in a dot, not a bare number ("404 Not Found" keeps its 404).
_SECTION_NUMBER = re.compile(
    r"^\s*(?:(?:Appendix|Annex|Section|§)\s*)?(?:[0-9]+(?:\.[0-9]+)+\.?|[0-9]+\.|[A-Z](?:\.[0-9]+)+\.?|[A-Z]\.)"
    r"(?=\s)\s*")
# What the index keeps of a chunk (besides its bytes): small, so a million chunks fit in memory.
FACETS = ("family", "authority", "documentType", "normativity")


def defined_terms(row: dict[str, Any]) -> str:
    """The terms the chunk's definition blocks define: the first line of each ``definition`` block
    whose start the chunk holds (``dt`` text; its ``dd`` follows on the next lines)."""
    text: str = row.get("text") or ""
    found = []
    for block in row.get("blocks") or ():
        if block.get("kind") == "definition" and not block.get("start"):
            offset = int(block.get("offset", 0))
            found.append(text[offset : offset + int(block["end"]) - int(block["start"])].split("\n", 1)[0])
    return "\n".join(found)


def url_words(url: object) -> str:
    """The words of a URL's path, letters and digits apart ("/rfc/rfc2119.txt" → "rfc rfc 2119 txt"):
    a document's address often names it better than its title does (an RFC's number)."""
    if not isinstance(url, str) or "://" not in url:
        return ""
    path = url.split("://", 1)[1].partition("/")[2].split("?", 1)[0].split("#", 1)[0]
    return _DIGIT_EDGE.sub(" ", _NOT_WORD.sub(" ", path)).strip()


def heading_words(heading: str) -> str:
    """A heading without its leading section number ("10.2.3.\u00a0Retry-After" → "Retry-After"): the
    number says where a section sits, not what it is about, and only some formats put it in the
    heading (the body's heading line keeps it, so a query for "9.3.1" still finds the section)."""
    lead = heading.lstrip()[:2]
    if not lead or not (lead[0].isdigit() or lead[1:] == "." or lead[0] in "AS§"):
        return heading  # most headings: no regex
    return _SECTION_NUMBER.sub("", heading, count=1)


def _labels(row: dict[str, Any]) -> tuple[str, str, str, str]:
    """(title, URL words, section path above the heading, heading) of a chunk's JSON; headings
    without their section numbers."""
    heading = row.get("heading") or ""
    title = row.get("title") or ""
    path = "\n".join(heading_words(p) for p in (row.get("sectionPath") or ())
                     if isinstance(p, str) and p not in (heading, title))
    return title, url_words(row.get("url")), path, heading_words(heading) if heading != title else ""


def indexed(row: dict[str, Any], labels: dict[tuple[Any, ...], tuple[str, str, str, str]] | None = None
            ) -> dict[str, Any]:
    """The part of a chunk's JSON the index reads: labels, fields, text, and where it sits.

    ``labels`` caches the document labels by their values (the chunks of a document share them: one
    copy of each string in memory, the URL's words split once)."""
    if labels is None:
        title, url, path, heading = _labels(row)
    else:
        key = (row.get("title"), row.get("url"), row.get("heading"), tuple(row.get("sectionPath") or ()))
        found = labels.get(key)
        if found is None:
            found = labels[key] = _labels(row)
        title, url, path, heading = found
    part = row.get("part")
    return {
        "id": row["id"],
        "sourceKind": row.get("sourceKind"),
        "source": row.get("source"),
        "sectionId": row.get("sectionId"),
        "title": title,
        "url": url,
        "path": path,
        "heading": heading,
        "terms": defined_terms(row),
        "text": row.get("text") or "",
        "time": row.get("time"),
        "language": language_of(row.get("language")),
        "recordId": row.get("recordId"),
        "paragraph": row.get("paragraph"),
        "partIndex": part.get("index", 1) if isinstance(part, dict) else 1,
        "family": row.get("family"),
        "authority": row.get("authority"),
        "documentType": row.get("documentType"),
        "normativity": row.get("normativity"),
        "paragraphKind": (row.get("attributes") or {}).get("paragraphKind"),
    }


def unit_tokens(rows: list[dict[str, Any]], weights: dict[str, int], *, stem: bool = True,
                labels: dict[tuple[str, str], list[str]] | None = None) -> list[str]:
    """The terms of a scored unit (one chunk, or a run of consecutive chunks): the labelled fields of
    its first chunk, each ``weight`` times, then every chunk's body ``body`` times. ``stem=False``
    gives the words unstemmed (a shard of one language stems each distinct word once); ``labels``
    caches the terms of field values (a document's title repeats on every chunk)."""
    return unit_tokenizer(weights, stem=stem, labels=labels)(rows)


def unit_tokenizer(weights: dict[str, int], *, stem: bool = True,
                   labels: dict[tuple[str, str], list[str]] | None = None
                   ) -> Callable[..., list[str]]:
    """``unit_tokens`` with the weights read once: a shard build calls it for every unit."""
    weighted = [(field, weight) for field in LABEL_FIELDS if (weight := weights.get(field, 0))]
    body = weights.get("body", 1)

    def terms(text: str, lang: str) -> list[str]:
        return tokenize(text, lang) if stem else surface(text)

    def tokens_of(rows: list[dict[str, Any]], spans: list[tuple[int, int]] | None = None) -> list[str]:
        """The unit's tokens; with ``spans`` (unstemmed only), each row's ``(offset, count)`` of its
        text's words (``analyzer.words``, what ``surface`` begins with) among them, appended."""
        first = rows[0]
        language = first.get("language") or DEFAULT_LANGUAGE
        tokens: list[str] = []
        for field, weight in weighted:
            value = first.get(field)
            if not value:
                continue
            cached = None if labels is None else labels.get((value, language))
            found = terms(value, language) if cached is None else cached
            if labels is not None and cached is None:
                labels[(value, language)] = found
            tokens.extend(found * weight if weight != 1 else found)
        for row in rows:
            if spans is not None and not stem:
                part = words(row["text"])
                spans.append((len(tokens), len(part)))
                part.extend(identifier_words(row["text"]))  # = surface(text)
            else:
                part = terms(row["text"], row.get("language") or language)
            tokens.extend(part * body if body != 1 else part)
        return tokens

    return tokens_of


def document_tokens(heading: str | None, text: str, heading_weight: int) -> list[str]:
    """A chunk's tokens with only a heading field: its heading's tokens ``heading_weight`` times, then
    its body's (the shape the bm25s comparison tests and the synthetic bench use)."""
    tokens = tokenize(heading) * heading_weight if heading else []
    tokens.extend(tokenize(text))
    return tokens
