"""Query-biased snippets, and words matched as written: quoted phrases and ``--exact``."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from episteme_core.search.query import parse_term, snippet_window
from episteme_core.search.snippets import best_window, structured_lines, term_matches, window_around
from episteme_core.testing import invoke, validate
from episteme_core.text.analyzer import stemmer

from .conftest import make_document, ok

OPENING = ("This section describes the general processing model in some detail, step by step, "
           "without saying anything in particular about any one directive. ") * 12


def test_snippet_is_the_window_that_best_matches_not_the_start(build) -> None:  # type: ignore[no-untyped-def]
    answer = "Modifications to the content attribute of a meta element after parsing will be ignored."
    text = OPENING + answer + " " + OPENING
    root = build([make_document("https://e.org/csp", [("Meta", [text])])], "--max-chars", "6000")
    data = ok("--home", str(root), "query", "--term", "meta content attribute modifications",
              "--max-chars", "300")
    result = data["results"][0]
    assert answer in result["snippet"] and len(result["snippet"]) <= 300
    assert result["snippetStart"] > 0
    assert text[result["snippetStart"]:result["snippetEnd"]] == result["snippet"]
    # the window opens at the start of a sentence, not in the middle of a word
    assert result["snippet"].startswith(("This", "Modifications"))
    quote, position = result["citation"]["selector"]
    assert quote["exact"] in result["snippet"] and position["end"] - position["start"] == len(quote["exact"])
    validate(data, "query-result")


def test_rare_terms_steer_the_window() -> None:
    text = ("common words here " * 30) + "zebra " + ("common words here " * 30)
    start, end = best_window(text, {"common": 0.1, "zebra": 5.0}, 100)
    assert "zebra" in text[start:end] and end - start <= 100


def test_a_window_saying_more_of_the_query_beats_a_denser_one_saying_less() -> None:
    # early: two query words repeated close together; later: all three, each once, 300 characters
    # apart. Coverage wins: the later window holds the question's third word (a bonus for the
    # densest 250 characters chose the early one)
    filler = "and so on in the usual way. "
    dense = "cache policy cache policy cache policy. " * 3
    spread = ("The cache keeps a copy. " + filler * 11 + "Each policy names a limit. " + filler * 11
              + "Stale entries are evicted first.")
    text = dense + filler * 40 + spread + " " + filler * 40
    stem = stemmer("english")
    weights = {stem("cache"): 1.0, stem("policy"): 1.0, stem("evicted"): 1.0}
    start, end = best_window(text, weights, 1600)
    assert end - start <= 1600
    assert "Stale entries are evicted first." in text[start:end]
    assert "cache policy cache" not in text[start:end]


LINKS = "Links: [" + ",".join(
    f'{{"title":"onScroll event not fired on user scroll #{n}",'
    f'"url":"https://github.com/xtermjs/xterm.js/issues/{n}"}}' for n in range(12)) + "]"


def test_a_line_of_structured_data_is_found_and_prose_is_not() -> None:
    """A line that is one JSON array or object with a key (after an optional short label) is
    structured data; prose, code calling a function and a bare list of numbers are not."""
    text = f"Web search results for query: \"scroll\"\n\n{LINKS}\n\nThe summary says it plainly."
    lines = structured_lines(text)
    assert [text[a:b] for a, b in lines] == [LINKS]
    assert structured_lines('{"a": 1}') == [(0, 8)]
    assert structured_lines('  {"key" : [1, 2]},') == [(0, 19)]
    for other in ('foo({"a": 1})', 'She said "stop": and left.', "[1, 2, 3]", "plain prose"):
        assert structured_lines(other) == []


def test_words_in_structured_data_weigh_half_and_the_prose_after_it_is_shown() -> None:
    """A tool's search results list titles dense with the question's words before the prose that
    answers: their matches weigh half, so the window shows the answer, not the list of links."""
    answer = ("The onScroll event is only fired when new lines are introduced, not when the viewport's "
              "scroll position changes, which differs from the documentation.")
    text = f'Web search results for query: "xterm"\n\n{LINKS}\n\nBased on the results: {answer}'
    weights = {stemmer("english")(w): 1.0 for w in ("scroll", "event", "fired", "user")}
    (lo, hi), = structured_lines(text)
    found = term_matches(text, weights)
    assert {weight for start, _, _, weight in found if lo <= start < hi} == {0.5}
    assert {weight for start, _, _, weight in found if not lo <= start < hi} == {1.0}
    start, end = best_window(text, weights, 300)
    assert answer[:120] in text[start:end] and end - start <= 300
    plain = text.replace(LINKS, LINKS.replace('":', '" -'))  # no longer JSON: the dense titles win
    start, end = best_window(plain, weights, 300)
    assert answer[:120] not in plain[start:end]


def test_of_equal_runs_of_matches_the_window_takes_the_later() -> None:
    # the query's words twice, far apart (a list of links, then the lead-in of the answer): both
    # runs score the same, and the answer follows the later one
    answer = "It creates spans from the events of the server and ships in release 0.3.0. "
    text = ("Links: bandit package. " + "filler words here and there. " * 12 + "Found: bandit package. "
            + answer + "more filler words. " * 30)
    start, end = best_window(text, {"bandit": 3.0, "packag": 2.0}, 200)
    assert answer in text[start:end] and end - start <= 200


def test_a_window_opens_at_the_start_of_a_table_row() -> None:
    # rows of tab-separated cells (how the PDF extractor lays out a table) with no sentence ends:
    # the row's first cells (an id, a date) are part of what the matches in its last cell belong to
    rows = [f"ID{n:04d}\t0{n % 9 + 1}/1{n % 9}/2019\tCARD\tSTAFF TRAVEL FOR M BERG TO CITY {n}\t{n}.00"
            for n in range(60)]
    rows[40] = "ID0040\t05/28/2019\tCARD\tTRAIN FARE FOR THE SENATOR TO NEW YORK AND RETURN\t618.00"
    text = "\n".join(rows)
    stem = stemmer("english")
    weights = {stem("train"): 3.0, stem("fare"): 2.0, stem("york"): 2.0}
    start, end = best_window(text, weights, 400)
    assert text[start:end].startswith("ID0040\t05/28/2019") or "\nID0040\t05/28/2019" in text[start:end]
    assert start == 0 or text[start - 1] == "\n"  # never in the middle of a row
    # prose lines (no tab) stay sentence-aligned: a wrapped line's start is not a boundary
    prose = ("The crew worked all day on the deck and\nthe mate said little. " * 20
             + "At last the\ntrain fare to New York was paid. " + "Nothing else happened. " * 30)
    start, _ = best_window(prose, weights, 300)
    assert prose[start - 2 : start] == ". "




def _cut_text(cut: str) -> tuple[str, dict[str, float], int]:
    """Filler; a sentence whose end holds the query's best run of words; filler; then ``cut``, a
    sentence that a 300-character window from that sentence's start cuts; and where the run begins."""
    stem = stemmer("english")
    weights = {stem("name"): 2.0, stem("pair"): 2.0, stem("value"): 2.0}
    lead = "Nothing at all is said here. " * 8
    run = ("It is said, in a long and winding opening of this one sentence, that a name, value and pair "
           "go together. ")
    text = lead + run + "Filler goes on for a while here. " * 5 + cut + " Filler follows. " * 20
    return text, weights, text.index("name")


def test_a_window_ends_the_sentence_about_the_query_that_it_would_cut() -> None:
    # the window opened at the run's sentence and ended at "...its name is"; it moves on by less
    # than a tenth of itself (the words before the run give way) to end that sentence
    text, weights, run_at = _cut_text("Later, when it is asked for again, its name is kept.")
    start, end = best_window(text, weights, 300)
    assert text[start:end].endswith("when it is asked for again, its name is kept.")
    assert end - start <= 300 and start <= run_at and text[start - 1] == " "  # a word start, the run kept


def test_a_window_leaves_a_sentence_it_cuts_when_its_end_is_out_of_reach_or_off_the_query() -> None:
    # the rest of the sentence is longer than a tenth of the window, or it holds no query word
    for cut in ("Later, when it is asked for again, its name is kept for as long as the server keeps "
                "running.", "Later, when it is asked for again, its weather is kept."):
        text, weights, run_at = _cut_text(cut)
        start, end = best_window(text, weights, 300)
        assert text[start:].startswith("It is said, in a long") and end - start <= 300
        assert text[start:end].endswith("Later, when it is asked for")


def test_windows_are_bounded_and_verbatim() -> None:
    text = "word " * 1000
    for max_chars in (80, 81, 1200):
        start, end = snippet_window(text, ["word"], max_chars)
        assert 0 < end - start <= max_chars and text[start:end].strip()
    assert snippet_window("short text", ["x"], 80) == (0, 10)
    assert snippet_window("nothing matches " * 20, ["zzz"], 80)[0] == 0


@settings(max_examples=200, deadline=None)
@given(sentences=st.lists(st.text(alphabet="abc ", min_size=1, max_size=60), min_size=1, max_size=40),
       lo=st.integers(0, 3000), length=st.integers(0, 400), room=st.integers(100, 1500))
def test_a_window_around_a_span_holds_it_bounded_and_from_a_sentence_start(
        sentences: list[str], lo: int, length: int, room: int) -> None:
    """``window_around`` keeps what must be shown (a span and 100 characters or more of room) inside
    a window of at most ``max_chars``; the whole text when it fits."""
    text = ". ".join(sentences)
    lo = min(lo, len(text))
    hi = min(len(text), lo + length)
    max_chars = hi - lo + room
    start, end = window_around(text, (lo, hi), max_chars)
    assert 0 <= start <= lo and hi <= end <= len(text) and end - start <= max_chars
    if len(text) <= max_chars:
        assert (start, end) == (0, len(text))


def test_a_window_around_a_span_opens_at_its_sentence_and_gives_the_room_after() -> None:
    text = "First sentence here. " * 50 + "Then the answer sits in this sentence. " + "Later words. " * 50
    lo = text.index("the answer")
    hi = lo + len("the answer sits in this sentence.")
    start, end = window_around(text, (lo, hi), 400)
    assert text[start:].startswith("Then the answer")  # the sentence the span begins in
    assert end - start > 360 and end - hi > 300  # the room goes after it
    near_end = window_around(text, (len(text) - 10, len(text)), 400)
    assert near_end[1] == len(text) and near_end[1] - near_end[0] > 350  # the whole budget is used
    assert text[near_end[0]:].startswith("Later words.")


def test_quotes_are_parsed() -> None:
    assert parse_term('a "must not" b') == ("a  must not  b", ["must not"])
    assert parse_term('"open') == (" open", ["open"])
    assert parse_term("plain") == ("plain", [])


@pytest.fixture
def phrases(build):  # type: ignore[no-untyped-def]
    return build([make_document("https://e.org/rfc", [
        ("One", ["The client must not retry the request."]),
        ("Two", ["Not every client must retry."]),
        ("Three", ["The server is running and runs well."]),
        ("Four", ["A server may run a job."]),
        ("Five", ["Use the frame-ancestors directive."]),
    ])])


def test_a_quoted_phrase_matches_as_written(phrases) -> None:  # type: ignore[no-untyped-def]
    stemmed = ok("--home", str(phrases), "query", "--term", "must not")
    assert stemmed["total"] == 2 and stemmed["phrases"] == []
    quoted = ok("--home", str(phrases), "query", "--term", '"must not"')
    assert quoted["total"] == 1 and quoted["totalExact"] is True and quoted["phrases"] == ["must not"]
    assert "must not retry" in quoted["results"][0]["snippet"]
    assert ok("--home", str(phrases), "query", "--term", '"MUST NOT"')["total"] == 1  # case still folds
    assert ok("--home", str(phrases), "query", "--term", '"frame ancestors"')["total"] == 1
    none = ok("--home", str(phrases), "query", "--term", '"not must"')
    assert none["total"] == 0 and "quoted phrases" in none["reason"]
    validate(quoted, "query-result")


def test_quoted_phrases_that_leave_less_than_a_page_say_how_many_the_words_match(phrases) -> None:  # type: ignore[no-untyped-def]
    """A question pasted with quotes in it asks for those words as written; when they leave less
    than a page and the words without quotes match more, a warning says so (FEW_PHRASE_MATCHES),
    the results unchanged; a full page, or quotes that cut nothing, say nothing."""
    quoted = invoke("--home", str(phrases), "query", "--term", 'does the client "must not" retry', "--json")
    assert quoted.exit_code == 0 and quoted.envelope["data"]["total"] == 1
    (warning,) = [w for w in quoted.envelope["warnings"] if w["code"] == "FEW_PHRASE_MATCHES"]
    assert warning["total"] == 1 and warning["unquoted"] > 1 and warning["phrases"] == ["must not"]
    assert '"must not"' in warning["message"] and "drop the quotes" in warning["message"]
    human = invoke("--home", str(phrases), "query", "--term", 'client "must not"')
    assert "drop the quotes" in human.stderr and "must not retry" in human.stdout
    validate(quoted.envelope, "cli-envelope")
    full = invoke("--home", str(phrases), "query", "--term", 'client "must not"', "--limit", "1", "--json")
    cut_nothing = invoke("--home", str(phrases), "query", "--term", '"frame ancestors"', "--json")
    for result in (full, cut_nothing):
        assert not [w for w in result.envelope["warnings"] if w["code"] == "FEW_PHRASE_MATCHES"]


def test_exact_matches_words_as_written(phrases) -> None:  # type: ignore[no-untyped-def]
    assert ok("--home", str(phrases), "query", "--term", "running")["total"] == 2  # stems meet: run
    exact = ok("--home", str(phrases), "query", "--term", "running", "--exact")
    assert exact["total"] == 1 and exact["exact"] is True and "running" in exact["results"][0]["snippet"]
    assert ok("--home", str(phrases), "query", "--term", "server running", "--exact")["total"] == 1
    assert ok("--home", str(phrases), "query", "--term", "run", "--exact")["total"] == 1


def test_identifiers_are_found_whole_and_by_parts(phrases) -> None:  # type: ignore[no-untyped-def]
    for term in ("frame-ancestors", "frameAncestors", "frame_ancestors", "ancestors"):
        data = ok("--home", str(phrases), "query", "--term", term)
        assert data["total"] >= 1 and "frame-ancestors" in data["results"][0]["snippet"], term


def test_checking_is_bounded(phrases, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    import episteme_core.search.query as query_module

    monkeypatch.setattr(query_module, "MAX_CHECKED", 1)
    data = invoke("--home", str(phrases), "query", "--term", '"client"', "--json").envelope["data"]
    assert data["totalExact"] is False and data["total"] == 1  # a lower bound: one of two was checked
    text = invoke("--home", str(phrases), "query", "--term", '"client"').stdout
    assert text.startswith("at least 1 result(s)")
