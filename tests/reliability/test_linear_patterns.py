"""Every regular expression applied to source text runs in linear time: each is fed, the way its
module uses it, 1 MB of every character run that could make it backtrack (after the prefix that
reaches the backtracking part), under a bound of 2 s against a hang (a quadratic pattern takes hours
on 1 MB). The list names where each pattern is used; a meta-test keeps it complete."""

from __future__ import annotations

import ast
import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from episteme_core.ask import memory, protocol
from episteme_core.bm25 import fields
from episteme_core.capture import manifest, urls
from episteme_core.chunking import layout
from episteme_core.cli import envelope
from episteme_core.extract import html, pdf_headings, text, xml
from episteme_core.personal import books, claude, frontmatter, intent, model, plaintext, record_reader
from episteme_core.records import canonical
from episteme_core.search import snippets
from episteme_core.stages import diff
from episteme_core.text import analyzer

ROOT = Path(__file__).resolve().parents[2]
SIZE = 1_000_000
BOUND = 2.0  # seconds per input: against a hang, not a timing target
FILLS = (" ", "a", "A", "0", ".", "-", "\t", "\n", "\r\n", "a ", "a.", "0.", " .", "#", "*", "[", "&", "\\u")


@attrs.frozen
class Case:
    """A pattern, the method its module calls, where, and the prefixes that reach its repeats."""

    where: str
    pattern: re.Pattern[Any]
    use: str = "search"
    prefixes: tuple[str, ...] = ("",)


def _cases() -> list[Case]:
    token, diacritics, cjk, cjk_split = analyzer._patterns()
    cases = [
        Case("text/analyzer.py: ASCII tokens of every indexed text", analyzer._ASCII_TOKEN, "findall"),
        Case("text/analyzer.py: word spans", analyzer._ASCII_WORD_SPANS, "finditer"),
        Case("text/analyzer.py: joined words (a-b_c)", analyzer._JOINED, "finditer"),
        Case("text/analyzer.py: capitals", analyzer._CAPITALS, "search"),
        Case("text/analyzer.py: camelCase parts", analyzer._CAMEL_PARTS, "findall"),
        Case("text/analyzer.py: has a letter", analyzer._HAS_LETTER, "search"),
        Case("text/analyzer.py: digits", analyzer._DIGITS, "findall"),
        Case("text/analyzer.py: @handles, #tags, $vars", analyzer._SIGILED, "finditer", ("", "@", "#a")),
        Case("text/analyzer.py: Unicode tokens", token, "findall"),
        Case("text/analyzer.py: diacritics", diacritics, "sub"),
        Case("text/analyzer.py: CJK", cjk, "search"),
        Case("text/analyzer.py: CJK split", cjk_split, "findall"),
        Case("stages/diff.py: words of a changed block", diff._WORD, "findall"),
        Case("extract/text.py: blank lines", text._BLANK, "split", ("", "\n")),
        Case("extract/text.py: ATX headings (per line)", text._ATX, "match", ("#", "# a", "###### ")),
        Case("extract/pdf_headings.py: subset font names", pdf_headings._SUBSET, "match"),
        Case("search/snippets.py: a structured line's label (per line)", snippets._STRUCTURED_LABEL, "match",
             ("", "a", "Links")),
        Case("extract/pdf_headings.py: bold font names", pdf_headings._BOLD, "search"),
        Case("extract/pdf_headings.py: heading numbers", pdf_headings._NUMBER, "match", ("1", "1.2", "A.1")),
        Case("extract/html.py: non-normative lines", html.NON_NORMATIVE_LINE, "match",
             ("", "this", "this section is")),
        Case("extract/html.py: white space", html._WS, "sub"),
        Case("extract/xml.py: XML declaration", xml._DECL, "match", ("", "<?xml")),
        Case("extract/xml.py: DOCTYPE", xml._DOCTYPE_START, "search"),
        Case("extract/xml.py: entity declarations", xml._ENTITY, "finditer",
             ("<!ENTITY", "<!ENTITY a", "<!ENTITY a \"", "<!ENTITY a SYSTEM", "<!ENTITY % a '")),
        Case("extract/xml.py: entity references", xml._REF, "findall", ("&", "&a")),
        Case("extract/xml.py: white space", xml._WS, "sub"),
        Case("ask/memory.py: words", memory._WORD, "findall"),
        Case("ask/protocol.py: a reader's ids object", protocol._IDS_OBJECT, "search", ("{", "{ \"ids\"")),
        Case("bm25/fields.py: not words", fields._NOT_WORD, "sub"),
        Case("bm25/fields.py: digit edges", fields._DIGIT_EDGE, "split"),
        Case("bm25/fields.py: section numbers", fields._SECTION_NUMBER, "match",
             ("", "Appendix", "1", "1.1", "A")),
        Case("cli/envelope.py: unsafe characters in human output", envelope._UNSAFE, "sub"),
        Case("cli/envelope.py: lone surrogates", envelope._SURROGATE, "sub"),
        Case("personal/model.py: id characters", model._ID_FORBIDDEN, "search"),
        Case("personal/model.py: name characters", model._NAME_FORBIDDEN, "search"),
        Case("personal/model.py: id encoding", model._ENCODE, "sub"),
        Case("personal/claude.py: escaped surrogates in transcript lines", claude._SURROGATE_ESCAPE,
             "search"),
        Case("personal/record_reader.py: a flat paragraph object", record_reader._FLAT_OBJECT, "match",
             ("{", '{"', '{"a":{', '{"a":{"', '{"a":"\\')),
        Case("personal/record_reader.py: JSON tokens", record_reader._TOKEN, "finditer", ("", '"', '"\\')),
        Case("personal/plaintext.py: code fences", plaintext._FENCE, "match", ("", " ")),
        Case("personal/plaintext.py: undecodable bytes", plaintext._ESCAPED, "search"),
        Case("personal/books.py: Gutenberg start line", books._START, "search",
             ("***", "*** START OF THE PROJECT GUTENBERG EBOOK")),
        Case("personal/books.py: Gutenberg end line", books._END, "search",
             ("***", "*** END OF THE PROJECT GUTENBERG EBOOK")),
        Case("personal/books.py: old Gutenberg end line", books._END_OLD, "search",
             ("End of", "End of the Project Gutenberg")),
        *(Case(f"personal/books.py: header {name}", pattern, "search", ("", f"{name.title()}:"))
          for name, pattern in books._HEADER_FIELDS.items()),
        Case("personal/books.py: eBook number", books._EBOOK_NUMBER, "search", ("[ebook #",)),
        Case("personal/books.py: Markdown headings", books._HEADING, "match", ("#",)),
        Case("personal/intent.py: headings (per line)", intent._HEADING, "match", ("#", "# a", "   #")),
        Case("personal/intent.py: code fences", intent._FENCE, "match", ("", " ")),
        Case("personal/frontmatter.py: illustration captions", frontmatter._CAPTION_OPEN, "match",
             ("[", "[illustration")),
        Case("personal/frontmatter.py: lines of a table of contents (per line)", frontmatter._PAGED_LINE,
             "match", ("x", "Chapter I")),
        Case("personal/frontmatter.py: contents headings", frontmatter._CONTENTS_HEADING, "match",
             ("table", "list of")),
        Case("personal/frontmatter.py: Gutenberg boilerplate", frontmatter._BOILERPLATE, "search",
             ("project",)),
        Case("personal/frontmatter.py: not words", frontmatter._NOT_WORD, "sub"),
        Case("capture/urls.py: control characters in URLs", urls._CONTROL, "search"),
        Case("capture/urls.py: ASCII hosts", urls._HOST_ASCII, "match"),
        Case("capture/urls.py: numeric host labels", urls._NUMERIC_LABEL, "match", ("", "0x")),
        Case("capture/manifest.py: content types", manifest.CONTENT_TYPE_PATTERN, "match",
             ("a/b", "a/b;", "a/b; c=", "a/b; c=\"")),
        Case("chunking/layout.py: sentence ends", layout._SENTENCE_END, "search", ("", ".")),
        Case("chunking/layout.py: spaces", layout._SPACE, "search"),
        Case("records/canonical.py: escaped surrogates in JSON", canonical._SURROGATE_ESCAPE, "search"),
    ]
    return cases + _plugin_cases()


def _plugin_cases() -> list[Case]:
    """The plugins' patterns, for the plugins installed."""
    cases: list[Case] = []
    try:
        from episteme_rfc import plugin as rfc
    except ImportError:
        pass
    else:
        cases += [
            Case("episteme-rfc: BCP 14 keywords", rfc.BCP14, "finditer", ("MUST",)),
            Case("episteme-rfc: page footers (per line)", rfc._FOOTER, "search", ("[Page 1]",)),
            Case("episteme-rfc: page headers (per line)", rfc._HEADER, "match", ("RFC", "RFC 1 a")),
            Case("episteme-rfc: numbered headings (per line)", rfc._NUMBERED, "match", ("1", "1.", "1 a")),
            Case("episteme-rfc: run-in headings (per line)", rfc._RUN_IN, "match", ("1", "1 A", "1 A B")),
            Case("episteme-rfc: appendix headings (per line)", rfc._APPENDIX, "match",
                 ("Appendix", "Appendix A", "Appendix A a")),
        ]
    try:
        from episteme_w3c import plugin as w3c
    except ImportError:
        pass
    else:
        cases.append(Case("episteme-w3c: BCP 14 keywords", w3c._BCP14, "finditer", ("MUST",)))
    try:
        from episteme_graph import model as graph_model
        from episteme_graph import normalize, rules, textviews
        from episteme_graph.export import chunks
    except ImportError:
        pass
    else:
        cases += [
            Case("episteme-graph normalize.py: paragraphs", normalize._PARAGRAPH, "finditer", ("", "a")),
            Case("episteme-graph normalize.py: URI schemes", normalize._SCHEME, "match", ("a",)),
            Case("episteme-graph model.py: citation markers", graph_model._MARKER, "sub", ("", " [1")),
            Case("episteme-graph rules.py: citation markers", rules._MARKER, "findall", ("[1",)),
            Case("episteme-graph rules.py: headings", rules._HEADING, "search", ("", "#")),
            Case("episteme-graph rules.py: emoji", rules._EMOJI, "search"),
            Case("episteme-graph export/chunks.py: arrows", chunks._ARROWS, "sub", ("", "-", "<-")),
            Case("episteme-graph export/chunks.py: headings", chunks._HEADING, "sub", ("", "#")),
            Case("episteme-graph export/chunks.py: spaces", chunks._SPACES, "sub"),
            Case("episteme-graph textviews.py: HTML ids", textviews._HTML_ID, "finditer",
                 (" id", " id=", " id=\"", " name='")),
        ]
    try:
        from episteme_git import repo
    except ImportError:
        pass
    else:
        cases.append(Case("episteme-git repo.py: commit authors", repo._PERSON, "match",
                          ("a", "a <", "a <b> ", "a <b> 1 ")))
    return cases


CASES = _cases()


class Hang(Exception):
    pass


def _interrupt(signum: int, frame: Any) -> None:
    raise Hang


def _inputs(case: Case) -> Iterator[tuple[str, Any]]:
    for prefix in case.prefixes:
        for fill in FILLS:
            value = prefix + fill * (SIZE // len(fill)) + "!"
            label = f"{prefix!r} + {fill!r} * {SIZE // len(fill)} + '!'"
            if isinstance(case.pattern.pattern, bytes):
                yield label, value.encode("utf-8", "surrogatepass")
            else:
                yield label, value


def _apply(case: Case, value: Any) -> None:
    method = getattr(case.pattern, case.use)
    if case.use == "finditer":
        for _ in method(value):
            pass
    elif case.use == "sub":
        method(b"" if isinstance(value, bytes) else "", value)
    else:
        method(value)


@pytest.mark.parametrize("case", CASES, ids=[c.where for c in CASES])
def test_a_pattern_is_linear_on_a_megabyte_of_any_run(case: Case) -> None:
    previous = signal.signal(signal.SIGALRM, _interrupt)
    try:
        for label, value in _inputs(case):
            started = time.monotonic()
            signal.setitimer(signal.ITIMER_REAL, BOUND)
            try:
                _apply(case, value)
            except Hang:
                pytest.fail(f"{case.where}: {case.pattern.pattern!r} backtracks: past {BOUND} s on {label}")
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            assert time.monotonic() - started < BOUND * 2  # the alarm came late: still a hang
    finally:
        signal.signal(signal.SIGALRM, previous)


def test_the_release_date_header_is_read_in_linear_time() -> None:
    """The release-date line once went through a regex that took 41 s on 40k spaces; it is parsed
    without one now (``bookdates.header_values``), and a 1 MB line stays under the bound."""
    from episteme_core.personal import bookdates

    line = "Release Date: x" + " " * SIZE + "y"
    previous = signal.signal(signal.SIGALRM, _interrupt)
    signal.setitimer(signal.ITIMER_REAL, BOUND)
    try:
        values = bookdates.header_values(f"Title: A\n{line}\n")
        assert bookdates.parse_date(values.get("release date", "")) is None
    except Hang:
        pytest.fail(f"the release-date line took over {BOUND} s")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


SCANNED = ("episteme_core", "plugins")
NOT_SOURCE_TEXT_FILES = {  # files whose patterns read only names, ids, options, messages or our output
    "episteme_core/serve/guards.py", "episteme_core/serve/calls.py", "episteme_core/ask/config.py",
    "episteme_core/ask/evalrun.py", "episteme_core/ask/run.py", "episteme_core/ask/telemetry.py",
    "episteme_core/ask/reference_server.py", "episteme_core/bm25/writer.py",
    "episteme_core/capture/statcache.py",
    "episteme_core/extract/changed.py", "episteme_core/extract/html_offsets.py",
    "episteme_core/personal/library.py", "episteme_core/search/query.py",
}
# Patterns left out of CASES, by file and name: one character class (linear by construction), or
# anchored with bounded repeats over names, ids and dates; onnx and llama are not installed here.
LINEAR_BY_CONSTRUCTION = {
    "episteme_core/capture/manifest.py": {"FAMILY_PATTERN"},
    "episteme_core/capture/manual.py": {"_HEX_PAIR"},
    "episteme_core/personal/record_reader.py": {"_SPACE"},
    "plugins/episteme-git/episteme_git/repo.py": {"_SHA"},
    "plugins/episteme-graph/episteme_graph/dates.py": {"_PART"},
    "plugins/episteme-graph/episteme_graph/export/chunks.py": {"_EMOJI"},
    "plugins/episteme-graph/episteme_graph/export/cypher.py": {"_PROPERTY", "_CONTROL", "_NEEDS_ESCAPE"},
    "plugins/episteme-graph/episteme_graph/export/graphml.py": {"_NOT_XML"},
    "plugins/episteme-graph/episteme_graph/export/html.py": {"_TOKEN"},
    "plugins/episteme-graph/episteme_graph/export/markdown.py": {"_CONTROL"},
    "plugins/episteme-graph/episteme_graph/mergefiles.py": {"_ARCHIVE"},
    "plugins/episteme-graph/episteme_graph/paths.py": {"_NAME"},
    "plugins/episteme-graph/episteme_graph/policy.py": {"_STEP"},
    "plugins/episteme-graph/episteme_graph/rules.py": {"_NON_ALNUM"},
    "plugins/episteme-graph/episteme_graph/schema.py": {"_URI", "_BAD_PERCENT", "_DATE_TIME"},
    "plugins/episteme-graph/episteme_graph/urls.py": {"_CONTROL", "_NON_ALNUM"},
    "plugins/episteme-graph/episteme_graph/verify.py": {"_SNAPSHOT_SOURCE", "_SPACE", "_CELL"},
    "plugins/episteme-llama/episteme_llama/chat_request.py": {"_LABEL"},
    "plugins/episteme-onnx/episteme_onnx/rerank.py": {"BLANK_LINE"},
}


def _installed(rel: str) -> bool:
    """True when the plugin holding ``rel`` (``plugins/DIST/PACKAGE/...``) can be imported here."""
    import importlib.util

    parts = rel.split("/")
    return len(parts) > 3 and importlib.util.find_spec(parts[2]) is not None


def test_every_compiled_pattern_in_a_source_text_module_is_listed() -> None:
    """A new ``re.compile`` at module level in a module listed here must join CASES (or its file the
    list of modules that never read source text)."""
    listed = {case.pattern.pattern for case in CASES}
    missing = []
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = str(path.relative_to(ROOT))
            if "/tests/" in rel or rel in NOT_SOURCE_TEXT_FILES:
                continue
            if top == "plugins" and not _installed(rel):  # its cases are only built where it imports
                continue
            for node in ast.parse(path.read_text("utf-8")).body:
                if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Call):
                    continue
                func, args = node.value.func, node.value.args
                if (isinstance(func, ast.Attribute) and func.attr == "compile" and args
                        and isinstance(args[0], ast.Constant)):
                    names = {t.id for t in node.targets if isinstance(t, ast.Name)}
                    if args[0].value not in listed and not names & LINEAR_BY_CONSTRUCTION.get(rel, set()):
                        missing.append(f"{rel}: {sorted(names)}")
    assert not missing
