"""``episteme ask`` and ``episteme eval`` on real shards built from real books and transcripts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from episteme_core.ask.reference_server import ReferenceServer
from episteme_core.testing import invoke, run_cli, validate

from .conftest import write_config

FIXTURES = Path(__file__).parent.parent / "fixtures" / "ask"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home holding the fixture books and Claude transcripts, ingested and indexed."""
    home = tmp_path_factory.mktemp("ask") / "home"
    for args in (["ingest", "books", str(FIXTURES / "books" / "classics")],
                 ["ingest", "claude", "--projects", str(FIXTURES / "claude")]):
        result = invoke("--home", str(home), *args, env={"EPISTEME_TELEMETRY": "off"})
        assert result.exit_code == 0, result.stderr
    return home


@pytest.fixture
def home_copy(built: Path, tmp_path: Path) -> Path:
    target = tmp_path / "home"
    shutil.copytree(built, target)
    (target / "telemetry.jsonl").unlink(missing_ok=True)
    return target


def ask(home: Path, *args: str, env: dict[str, str] | None = None):
    return invoke("--home", str(home), "ask", "--json", *args, env=env)


def test_answer_is_stored_paragraphs_verbatim_in_time_order(home_copy: Path) -> None:
    result = ask(home_copy, "whale voyage Ishmael sea")
    assert result.exit_code == 0, result.stderr
    envelope = result.envelope
    validate(envelope, "cli-envelope")
    data = envelope["data"]
    validate(data, "ask-result")
    assert data["paragraphs"] and data["chars"] <= data["budget"]
    excerpts = 0
    for p in data["paragraphs"]:
        shown = invoke("--home", str(home_copy), "show", p["ref"], "--json")
        assert shown.exit_code == 0, shown.stderr
        stored = shown.envelope["data"]["paragraph"]["text"]
        if p["excerpt"] is None:
            assert stored == p["text"]
        else:  # a long paragraph: its best window, a verbatim slice at the stated place
            excerpts += 1
            assert p["excerpt"]["chars"] == len(stored) > len(p["text"]) == p["chars"]
            assert stored[p["excerpt"]["start"] : p["excerpt"]["end"]] == p["text"]
        assert p["contentTrust"] == "untrusted-source"
    assert excerpts < len(data["paragraphs"])
    times = [p["time"] for p in data["paragraphs"]]
    assert times == sorted(times)


def test_human_output_cites_each_paragraph(home_copy: Path) -> None:
    result = invoke("--home", str(home_copy), "ask", "Ishmael")
    assert result.exit_code == 0
    assert "book:classics/moby-dick#" in result.stdout and "source text is untrusted" in result.stdout


def test_filter_since_and_budget(home_copy: Path) -> None:
    chats = ask(home_copy, "--filter", "claude", "xterm scrolling tmux")
    assert chats.exit_code == 0 and {p["source"] for p in chats.envelope["data"]["paragraphs"]} == {"claude"}
    since = ask(home_copy, "--since", "1850-01-01", "truth universally acknowledged whale")
    assert all(p["time"] >= "1850" for p in since.envelope["data"]["paragraphs"])
    tight = ask(home_copy, "--budget", "1", "Ishmael")
    data = tight.envelope["data"]
    assert data["paragraphs"] == [] and data["omitted"] and data["chars"] == 0


@pytest.mark.parametrize(("args", "code", "exit_code", "words"), [
    (["   "], "INVALID_USAGE", 2, "the question is empty"),
    (["--filter", "nosuch", "whale"], "INVALID_USAGE", 2, "unknown source(s): nosuch"),
    (["--since", "last tuesday", "whale"], "INVALID_USAGE", 2, "is not a date"),
    (["--budget", "0", "whale"], "INVALID_USAGE", 2, "between 1 and"),
    (["--reader", "gpt5", "whale"], "INVALID_USAGE", 2, "unknown reader"),
    (["--reader", "http", "whale"], "INVALID_USAGE", 2, "has no url"),
])
def test_bad_input_is_a_clear_error(home_copy: Path, args: list[str], code: str, exit_code: int,
                                    words: str) -> None:
    result = ask(home_copy, *args)
    assert result.exit_code == exit_code
    error = result.envelope["error"]
    assert error["code"] == code and words in error["message"]


def test_config_reader_url_must_be_http(home_copy: Path) -> None:
    write_config(home_copy, [{"name": "gpu", "url": "ftp://10.0.0.1/"}])
    result = ask(home_copy, "whale")
    assert result.exit_code == 3
    assert result.envelope["error"]["code"] == "INVALID_INPUT"
    assert "url must be http:// or https://" in result.envelope["error"]["message"]


def test_stale_shards_are_refused(home_copy: Path, tmp_path: Path) -> None:
    extra = tmp_path / "more"
    extra.mkdir()
    (extra / "note.md").write_text("---\ndate: 2020-01-01\n---\n\nA new whale note.\n", "utf-8")
    ingest = invoke("--home", str(home_copy), "ingest", "books", str(extra), "--no-pack")
    assert ingest.exit_code == 0, ingest.stderr
    result = ask(home_copy, "whale")
    assert result.exit_code == 3
    error = result.envelope["error"]
    assert error["code"] == "STALE_INDEX" and "run episteme ingest" in error["message"]


def test_missing_index_is_refused(tmp_path: Path) -> None:
    result = ask(tmp_path / "empty", "whale")
    assert result.exit_code == 3 and result.envelope["error"]["code"] == "STALE_INDEX"


def test_http_reader_pool_and_telemetry(home_copy: Path) -> None:
    with ReferenceServer() as server:
        write_config(home_copy, [{"name": "ref", "url": server.url, "slots": 2, "timeout": 5}])
        result = ask(home_copy, "Ishmael whale")
        runs = server.stats()["runs"]
    assert result.exit_code == 0, result.stderr
    data = result.envelope["data"]
    assert result.envelope["warnings"] == []
    assert {s["reader"] for s in data["shards"] if s["candidates"]} == {"ref"}
    assert runs and runs[0]["question"] == "Ishmael whale"
    [line] = (home_copy / "telemetry.jsonl").read_text("utf-8").splitlines()
    entry = json.loads(line)
    validate(entry, "telemetry-line")
    assert entry["readers"] == ["ref"] and entry["answered"] == len(data["paragraphs"])


def test_reader_down_falls_back_with_a_warning(home_copy: Path) -> None:
    server = ReferenceServer().start()
    url = server.url
    server.stop()
    write_config(home_copy, [{"name": "ref", "url": url, "timeout": 1}])
    result = ask(home_copy, "Ishmael whale")
    assert result.exit_code == 0
    codes = [w["code"] for w in result.envelope["warnings"]]
    assert "READER_UNHEALTHY" in codes and "READER_FALLBACK" in codes
    assert result.envelope["data"]["paragraphs"]


def test_telemetry_off(home_copy: Path) -> None:
    ask(home_copy, "whale", env={"EPISTEME_TELEMETRY": "off"})
    assert not (home_copy / "telemetry.jsonl").exists()


def test_same_answer_under_different_hash_seeds(built: Path) -> None:
    outputs = []
    for seed in ("1", "2"):
        result = run_cli(["--home", str(built), "ask", "--json", "whale voyage sea"],
                         env={"PYTHONHASHSEED": seed, "EPISTEME_TELEMETRY": "off"})
        assert result.exit_code == 0, result.stderr
        data = json.loads(result.stdout)["data"]
        data.pop("durationMs")
        outputs.append(data)
    assert outputs[0] == outputs[1]


def test_eval_saves_a_report_and_compares(home_copy: Path, tmp_path: Path) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        json.dumps({"question": "Call me Ishmael", "expected": ["book:classics/moby-dick#3"]}) + "\n\n"
        + json.dumps({"question": "truth universally acknowledged", "filter": ["books"],
                      "since": "1800-01-01", "expected": ["book:classics/pride-and-prejudice#1"]}) + "\n",
        "utf-8",
    )
    first = invoke("--home", str(home_copy), "eval", str(questions), "--label", "base", "--json")
    assert first.exit_code == 0, first.stderr
    report = json.loads((home_copy / "evals" / "base.json").read_text("utf-8"))
    validate(report, "eval-report")
    assert report["overall"]["questions"] == 2 and [q["line"] for q in report["questions"]] == [1, 3]
    for q in report["questions"]:  # the answer's size beside its scores
        assert q["hit"] == (1 if set(q["expected"]) & set(q["answered"]) else 0)
        assert 0 < q["chars"] <= report["budget"] and q["paragraphs"] == len(q["answered"]) > 0
    assert report["overall"]["chars"] == sum(q["chars"] for q in report["questions"]) / 2
    second = invoke("--home", str(home_copy), "eval", str(questions), "--label", "tight", "--budget", "50",
                    "--compare", "base")
    assert second.exit_code == 0, second.stderr
    assert "recall" in second.stdout and "base" in second.stdout and "tight" in second.stdout
    assert "chars" in second.stdout and "paragraphs" in second.stdout
    lines = [json.loads(x) for x in (home_copy / "telemetry.jsonl").read_text("utf-8").splitlines()]
    assert [x["command"] for x in lines] == ["eval"] * 4 and {x["label"] for x in lines} == {"base", "tight"}


@pytest.mark.parametrize(("content", "words"), [
    ('{"question": "x"}\n', "expected must be a list"),
    ('{"question": "", "expected": []}\n', "the question is empty"),
    ('{"question": "x", "expected": ["no-number"]}\n', "expected must be a list"),
    ('{"question": "x", "expected": [], "since": "soon"}\n', "is not a date"),
    ('{"question": "x", "expected": [], "extra": 1}\n', "unknown key(s) extra"),
    ('not json\n', "not valid JSON"),
    ('\n', "no questions"),
])
def test_eval_bad_questions_file(home_copy: Path, tmp_path: Path, content: str, words: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content, "utf-8")
    result = invoke("--home", str(home_copy), "eval", str(path), "--label", "x", "--json")
    assert result.exit_code == 3
    assert words in result.envelope["error"]["message"]
    assert not (home_copy / "evals" / "x.json").exists()


def test_eval_bad_label_and_unknown_compare(home_copy: Path, tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"question": "whale", "expected": []}\n', "utf-8")
    bad = invoke("--home", str(home_copy), "eval", str(path), "--label", "../up", "--json")
    assert bad.exit_code == 2 and "--label" in bad.envelope["error"]["message"]
    missing = invoke("--home", str(home_copy), "eval", str(path), "--label", "a", "--compare", "nope",
                     "--json")
    assert missing.exit_code == 3 and "no eval labelled 'nope'" in missing.envelope["error"]["message"]
