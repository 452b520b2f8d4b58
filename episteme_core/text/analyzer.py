"""The analyzer that turns text into BM25 terms, the same way for chunks and queries (``episteme-3``).

Steps: NFKC (full-width Latin becomes ASCII, ligatures split), casefold ("Straße" → "strasse"),
diacritic folding (the combining marks Latin, Greek and Cyrillic letters carry: "café" → "cafe");
words are maximal runs of letters, digits and combining marks (a Hindi word stays one word; a run
longer than 100 characters is cut into 100-character words), underscores and hyphens split words,
CJK runs become overlapping bigrams ("東京都" → 東京, 京都). Then each word is stemmed with the
Snowball stemmer of the text's language (PyStemmer; English unless the document says otherwise), so
"policies" meets "policy" and "running" meets "run". Identifiers are found whole and by their parts:
``frame-ancestors`` gives "frame", "ancestor" and the whole "frameancestor"; ``maxIdleTimeout``
gives "maxidletimeout" and "max", "idl", "timeout"; ``binary64`` and ``RFC2119`` also give their
letters and digits ("binary", "64"; "rfc", "2119"); a word behind a sigil (``@vocab``, ``#1343``,
``$HOME``) is also found with it. The index keeps every word (quoted phrases such as "must not" stay
findable); a query leaves out English stop words ("what", "does", "the": the words of the question,
not of the answer), unless it has nothing else (measured on the dev set, docs/benchmarks.md).

``words`` gives the same words unstemmed, with their places in the original text: what quoted
phrases and ``--exact`` compare, and what snippets score. The name and version name all of this; a
shard built by another is refused.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Iterable

ANALYZER_NAME = "episteme"
ANALYZER_VERSION = "3"
DEFAULT_LANGUAGE = "english"
MAX_TOKEN_CHARS = 100
MAX_CACHED_STEMS = 1_000_000  # words whose stems a process keeps

# Combining marks used as diacritics on Latin, Greek and Cyrillic letters (and symbol marks).
# Indic, Arabic, Hebrew, Thai... marks live elsewhere and are kept: they are part of the word.
_DIACRITICS = "[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+"
_CJK = (
    "\u1100-\u11ff\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3031-\u3035\u3038-\u303c"
    "\u3040-\u30ff\u3100-\u318f\u3190-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f"
    "\uac00-\ud7ff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f"
)
_ASCII_TOKEN = re.compile(f"[a-z0-9]{{1,{MAX_TOKEN_CHARS}}}")
_ASCII_WORD_SPANS = re.compile("[A-Za-z0-9]+")
# ASCII text in one pass: letters lowercased, digits kept, everything else a space (then split).
_ASCII_WORDS = {c: (chr(c).lower() if chr(c).isalnum() else " ") for c in range(128)}
# The same table for ``bytes.translate`` (a byte-to-byte table runs several times faster than a
# ``str.translate`` dict); only ASCII text goes through it, so the upper half is never used.
_ASCII_WORD_BYTES = bytes(ord(_ASCII_WORDS[c]) for c in range(128)) + b" " * 128
# Identifiers joined by hyphens or underscores (``frame-ancestors``, ``max_idle_timeout``).
_JOINED = re.compile(r"(?<![A-Za-z0-9])[A-Za-z0-9]++(?:[-_][A-Za-z0-9]++)+")
# Capital runs (where a case change inside a word may be), and how such a word splits.
_CAPITALS = re.compile("[A-Z]+")
_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")
_CAMEL_PARTS = re.compile(r"[A-Z]+s(?![a-z])|[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_HAS_LETTER = re.compile("[A-Za-z]")
_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
# Runs of digits: where one follows a letter, a word joins letters and digits ("binary64", "RFC2119",
# "utf8"; not "2FA" or "5ms").
_DIGITS = re.compile("[0-9]+")
_DIGIT_CHARS = "0123456789"
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
MAX_MIXED_PARTS = 3  # a word of more parts (a hash, a serial number) adds none
# A word behind a sigil: JSON-LD keywords (@vocab), issue numbers (#1343), variables ($HOME).
_SIGILS = frozenset("@#$")
_SIGILED = re.compile(r"(?<![A-Za-z0-9@#$])[@#$][A-Za-z0-9][A-Za-z0-9_]*")
# English stop words left out of queries (NLTK's list): question words, pronouns, auxiliaries.
QUERY_STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being below
between both but by can could did do does doing don down during each few for from further had has
have having he her here hers herself him himself his how i if in into is it its itself just me more
most my myself no nor not now of off on once only or other our ours ourselves out over own same she
should so some such than that the their theirs them themselves then there these they this those
through to too under until up very was we were what when where which while who whom why will with
would you your yours yourself yourselves
""".split())

# ISO 639-1 codes and names of the Snowball stemmers PyStemmer ships.
LANGUAGES = {
    "ar": "arabic", "hy": "armenian", "eu": "basque", "ca": "catalan", "cs": "czech", "da": "danish",
    "nl": "dutch", "en": "english", "eo": "esperanto", "et": "estonian", "fi": "finnish", "fr": "french",
    "de": "german", "el": "greek", "hi": "hindi", "hu": "hungarian", "id": "indonesian", "ga": "irish",
    "it": "italian", "lt": "lithuanian", "ne": "nepali", "no": "norwegian", "nb": "norwegian",
    "nn": "norwegian", "fa": "persian", "pl": "polish", "pt": "portuguese", "ro": "romanian",
    "ru": "russian", "sr": "serbian", "st": "sesotho", "es": "spanish", "sv": "swedish", "ta": "tamil",
    "tr": "turkish", "yi": "yiddish",
}
NO_STEMMING = "none"


@functools.cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """token, diacritics, CJK, CJK split: compiled on the first non-ASCII text (their big character
    classes cost ~20 ms to compile, which an ASCII query never pays)."""
    from episteme_core.text.marks import MARKS

    word = f"[^\\W_]|[{MARKS}]"
    return (
        re.compile(f"(?:{word}){{1,{MAX_TOKEN_CHARS}}}"),
        re.compile(_DIACRITICS),
        re.compile(f"[{_CJK}]"),
        re.compile(f"[{_CJK}]+|[^{_CJK}]+"),
    )


def language_of(value: object) -> str:
    """The Snowball stemmer for a language tag or name ("en-GB", "English", "fr"); English when the
    tag is missing, ``none`` (no stemming) for a language without a stemmer (Japanese, ...)."""
    if not isinstance(value, str) or not value.strip():
        return DEFAULT_LANGUAGE
    tag = value.strip().lower().replace("_", "-")
    if tag in LANGUAGES.values():
        return tag
    return LANGUAGES.get(tag.split("-")[0], NO_STEMMING)


@functools.cache
def stemmer(language: str) -> Callable[[str], str]:
    """``word -> stem`` for a Snowball language (cached per word; identity for ``none``)."""
    if language == NO_STEMMING:
        return str
    return _stems(language).one


class _Stems:
    """One Snowball stemmer with a cache of the words it has stemmed (numbers and words of one or
    two characters stay as written)."""

    def __init__(self, language: str) -> None:
        import Stemmer

        self._snowball = Stemmer.Stemmer(language, 0)  # our dict caches; the C cache would copy it
        self.cache: dict[str, str] = {}

    def _stem(self, word: str) -> str:
        return word if len(word) <= 2 or word.isdigit() else str(self._snowball.stemWord(word))

    def one(self, word: str) -> str:
        found = self.cache.get(word)
        if found is None:
            found = self._stem(word)
            if len(self.cache) < MAX_CACHED_STEMS:
                self.cache[word] = found
        return found

    def all(self, words: list[str]) -> list[str]:
        cache = self.cache
        found = list(map(cache.get, words))  # the usual case once warm: every word stemmed before
        if None not in found:
            return found  # type: ignore[return-value]
        missing = set(words).difference(cache)
        if missing:
            if len(cache) + len(missing) > MAX_CACHED_STEMS:
                return [self.one(word) for word in words]
            for word in missing:
                cache[word] = self._stem(word)
        return list(map(cache.__getitem__, words))


@functools.cache
def _stems(language: str) -> _Stems:
    return _Stems(language)


def stem_words(found: list[str], language: str = DEFAULT_LANGUAGE) -> list[str]:
    """``found`` (normalized words) stemmed in ``language``, one for one (cached per word)."""
    if language == NO_STEMMING:
        return list(found)
    return _stems(language).all(found)


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


def words(text: str) -> list[str]:
    """The words of ``text`` in order, normalized but not stemmed (repeats kept)."""
    if text.isascii():  # the common case: one translate and a split, as the regex would cut it
        found = text.encode("ascii").translate(_ASCII_WORD_BYTES).decode("ascii").split()
        if found and max(map(len, found)) > MAX_TOKEN_CHARS:
            return _ASCII_TOKEN.findall(text.lower())
        return found
    text = normalize(text)
    if text.isascii():
        return _ASCII_TOKEN.findall(text)
    token_re, _, cjk, cjk_split = _patterns()
    out: list[str] = []
    for token in token_re.findall(text):
        if cjk.search(token) is None:
            out.append(token)
            continue
        for part in cjk_split.findall(token):
            if cjk.match(part):
                out.extend(_cjk_bigrams(part))
            else:
                out.append(part)
    return out


def _camel_words(text: str) -> list[str]:
    """The ASCII words of ``text`` with a case change inside (``camelCase``: a capital after a small
    letter; ``HTTPServer``: capitals before a capital and a small letter). Found from the runs of
    capitals, then widened to the word: cheap on ordinary text, which has few capitals."""
    if text.islower() or not text:
        return []
    found: list[str] = []
    end = -1
    size = len(text)
    for run in _CAPITALS.finditer(text):
        start, stop = run.start(), run.end()
        after_small = start > 0 and text[start - 1] in _LOWER
        before_word = stop - start >= 2 and stop < size and text[stop] in _LOWER
        if not (after_small or before_word) or start < end:
            continue
        while start > 0 and text[start - 1] in _ALNUM:
            start -= 1
        end = stop
        while end < size and text[end] in _ALNUM:
            end += 1
        found.append(text[start:end])
    return found


def _mixed_words(text: str) -> list[str]:
    """The ASCII words of ``text`` where digits follow letters ("binary64", "RFC2119"), found from
    the edges and widened to the word."""
    if not any(digit in text for digit in _DIGIT_CHARS):  # most prose: ten C scans, no regex
        return []
    found: list[str] = []
    end = -1
    size = len(text)
    for run in _DIGITS.finditer(text):
        start = run.start()
        if start < end or start == 0 or text[start - 1] not in _LETTERS:
            continue
        while start > 0 and text[start - 1] in _ALNUM:
            start -= 1
        end = run.end()
        while end < size and text[end] in _ALNUM:
            end += 1
        found.append(text[start:end])
    return found


def identifier_words(text: str) -> list[str]:
    """What identifiers add to the words: the whole of each hyphen- or underscore-joined run of ASCII
    letters and digits ("frameancestors"), the parts of each camelCase word ("max", "idle",
    "timeout"), the letters and the digits of a word where digits follow letters ("binary64" →
    "binary", "64"; "RFC2119" → "rfc", "2119"; a word of more than three such parts, a hash, adds
    none) and each word behind a sigil ("@vocab")."""
    extra: list[str] = []
    if "-" in text or "_" in text:
        for run in _JOINED.findall(text):
            whole = run.replace("-", "").replace("_", "")
            if len(whole) <= MAX_TOKEN_CHARS and _HAS_LETTER.search(whole):
                extra.append(whole.lower())
    camel = _camel_words(text)
    split = set(camel)
    for word in camel:
        parts = _CAMEL_PARTS.findall(word)
        if len(parts) > 1:
            extra.extend(part.lower() for part in parts)
    for word in _mixed_words(text):
        parts = _CAMEL_PARTS.findall(word)
        if len(parts) <= MAX_MIXED_PARTS and len(word) <= MAX_TOKEN_CHARS and word not in split:
            extra.extend(part.lower() for part in parts)
    if "@" in text or "#" in text or "$" in text:
        extra.extend(word.lower() for word in _SIGILED.findall(text) if len(word) <= MAX_TOKEN_CHARS)
    return extra


def surface(text: str) -> list[str]:
    """The words of ``text`` then what its identifiers add, not stemmed (``tokenize`` stems them;
    the shard builder stems each distinct one once instead)."""
    found = words(text)
    found.extend(identifier_words(text))
    return found


def tokenize(text: str, language: str = DEFAULT_LANGUAGE,
             stopwords: frozenset[str] = frozenset()) -> list[str]:
    """The terms of ``text`` in order (repeats kept: they are term frequency): stemmed words, then
    what identifiers add; words in ``stopwords`` (unstemmed forms) are left out."""
    found = surface(text)
    if stopwords:
        kept = [word for word in found if word not in stopwords]
        found = kept or found  # a query of stop words only ("to be or not to be") keeps them
    if language == NO_STEMMING:
        return found
    return _stems(language).all(found)


def query_terms(text: str, language: str = DEFAULT_LANGUAGE) -> list[str]:
    """A query's distinct terms, sorted (so scoring adds them in one fixed order); stop words out."""
    return sorted(set(tokenize(text, language, QUERY_STOPWORDS)))


def query_terms_for(text: str, languages: Iterable[str]) -> list[str]:
    """The query's terms under each language a shard holds (a term per stemming), sorted."""
    terms: set[str] = set()
    for language in languages:
        terms.update(tokenize(text, language, QUERY_STOPWORDS))
    return sorted(terms)


# A query term that only an identifier adds (the whole of ``64-bit``, the parts of ``JavaScript``) weighs
# this much of a word: it repeats what the query's own words already say (measured, docs/benchmarks.md).
IDENTIFIER_TERM_WEIGHT = 0.5


def query_term_weights(text: str, languages: Iterable[str]) -> dict[str, float]:
    """The weight of each of the query's terms (``query_terms_for``): 1 for a word of the query and a
    word behind a sigil (``@type``), ``IDENTIFIER_TERM_WEIGHT`` for a term that only an identifier
    adds (the whole of a joined run, the parts of a camelCase or letter-digit word). Without it one
    word such as ``JavaScript`` counts three times (``javascript``, ``java``, ``script``)."""
    languages = list(languages)
    terms = query_terms_for(text, languages)
    found = [word for word in words(text) if word not in QUERY_STOPWORDS] or words(text)
    added = [word for word in identifier_words(text)
             if word not in QUERY_STOPWORDS and word[:1] not in _SIGILS]
    own: set[str] = set()
    extra: set[str] = set()
    for language in languages:
        own.update(stem_words(found, language))
        extra.update(stem_words(added, language))
    return {term: IDENTIFIER_TERM_WEIGHT if term in extra and term not in own else 1.0 for term in terms}


def word_spans(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, word)`` for each word of ``text``: where it sits in the original text and its
    normalized, unstemmed form (a CJK run gives its bigrams, all at the run's place)."""
    if text.isascii():
        spans: list[tuple[int, int, str]] = []
        for match in _ASCII_WORD_SPANS.finditer(text):
            start, word = match.start(), match.group().lower()
            for i in range(0, len(word), MAX_TOKEN_CHARS):  # a run over 100 characters is cut
                piece = word[i : i + MAX_TOKEN_CHARS]
                spans.append((start + i, start + i + len(piece), piece))
        return spans
    token_re = _patterns()[0]
    spans = []
    # find words in the original text (marks attached), then normalize each one on its own
    for match in token_re.finditer(text):
        for word in words(match.group()):
            spans.append((match.start(), match.end(), word))
    return spans


def analyzer_params(language: str = DEFAULT_LANGUAGE) -> dict[str, object]:
    """What a shard records about the analyzer it was built with."""
    return {
        "name": ANALYZER_NAME,
        "version": ANALYZER_VERSION,
        "unicode": "NFKC+casefold+diacritics",
        "cjk": "bigrams",
        "stemmer": "snowball",
        "defaultLanguage": language,
        "stopwords": "queries: english (nltk)",
        "identifiers": "whole+parts",
    }


def analyzer_id(meta: dict[str, object] | None) -> str:
    """``name-version`` of the analyzer a shard's metadata names (``unicode-v1`` for the first)."""
    meta = meta or {}
    name, version = meta.get("name"), meta.get("version")
    return f"{name}-{version}" if name else str(version)


def vocabulary(token_lists: Iterable[list[str]]) -> list[str]:
    """The sorted vocabulary of ``token_lists``: sorted, so ids never depend on PYTHONHASHSEED."""
    seen: set[str] = set()
    for tokens in token_lists:
        seen.update(tokens)
    return sorted(seen)
