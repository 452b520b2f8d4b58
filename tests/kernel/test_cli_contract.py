"""The CLI contract: envelope, codes and exit statuses, help, version, no tracebacks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from episteme_core import __version__
from episteme_core.testing import invoke, run_cli, validate


def test_version_prints_name_and_version() -> None:
    result = run_cli(["--version"])
    assert result.exit_code == 0
    assert result.stdout == f"episteme {__version__}\n"


def test_version_under_json_is_an_envelope() -> None:
    result = run_cli(["--version", "--json"])
    validate(result.envelope, "cli-envelope")
    validate(result.envelope["data"], "version")
    assert result.envelope["meta"]["epistemeVersion"] == __version__


@pytest.mark.parametrize("args", [["--help"], ["verify", "--help"], ["--json", "plugins", "--help"]])
def test_help_is_human_and_exits_zero(args: list[str]) -> None:
    result = invoke(*args)
    assert result.exit_code == 0
    assert result.stdout.startswith("usage: episteme")
    assert "--json" in result.stdout


@pytest.mark.parametrize(
    ("args", "hint"),
    [
        (["verfy"], "Did you mean 'verify'?"),
        (["verify", "--jsn"], "Did you mean '--json'?"),
        (["--progress", "sometimes", "verify"], "Run 'episteme --help'."),
        ([], "Run 'episteme --help'."),
    ],
)
def test_usage_errors_are_invalid_usage_exit_2_with_a_hint(args: list[str], hint: str) -> None:
    human = invoke(*args)
    assert human.exit_code == 2
    assert human.stderr.startswith("error: ")
    assert hint in human.stderr
    as_json = invoke("--json", *args)
    assert as_json.exit_code == 2
    envelope = as_json.envelope
    validate(envelope, "cli-envelope")
    assert envelope["ok"] is False and envelope["error"]["code"] == "INVALID_USAGE"
    assert as_json.stdout == ""


def test_global_options_work_before_and_after_the_command(home: Path) -> None:
    home.mkdir()
    before = invoke("--json", "--home", str(home), "verify")
    after = invoke("verify", "--home", str(home), "--json")
    assert before.exit_code == after.exit_code == 0
    assert before.stdout == after.stdout
    validate(before.envelope, "cli-envelope")
    validate(before.envelope["data"], "verify-report")


def test_the_envelope_is_one_canonical_line(home: Path) -> None:
    result = invoke("--json", "--home", str(home), "init")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert len(lines) == 1
    envelope = json.loads(lines[0])
    assert lines[0] == json.dumps(envelope, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    validate(envelope["data"], "init-result")


def test_an_unexpected_error_is_internal_error_without_a_traceback(plugin_site) -> None:
    env = plugin_site("sample")
    result = run_cli(["sample-crash"], env=env)
    assert result.exit_code == 1
    assert "Traceback" not in result.stderr and "File \"" not in result.stderr
    assert result.stderr.startswith("error: RuntimeError: boom")
    assert "--debug" in result.stderr


def test_debug_adds_the_cause_chain(plugin_site) -> None:
    env = plugin_site("sample")
    human = run_cli(["--debug", "sample-crash"], env=env)
    assert "cause: KeyError" in human.stderr and "episteme_sample.py" in human.stderr
    as_json = run_cli(["--debug", "--json", "sample-crash"], env=env)
    validate(as_json.envelope, "cli-envelope")
    names = [c["name"] for c in as_json.envelope["error"]["debug"]["causes"]]
    assert names[-2:] == ["RuntimeError", "KeyError"]
    plain = run_cli(["--json", "sample-crash"], env=env)
    assert "debug" not in plain.envelope["error"]


def test_a_home_that_cannot_be_written_is_a_clear_error_naming_it(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    home = blocker / "home"
    result = invoke("--json", "--home", str(home), "init")
    assert result.exit_code == 3
    error = result.envelope["error"]
    assert error["code"] == "INVALID_INPUT"
    assert str(home) in error["message"] and error["details"]["path"] == str(home)


def test_home_comes_from_the_environment_when_not_given(tmp_path: Path, monkeypatch) -> None:
    home = tmp_path / "from-env"
    monkeypatch.setenv("EPISTEME_HOME", str(home))
    result = invoke("--json", "init")
    assert result.envelope["data"]["home"] == str(home)
    assert (home / "config.json").exists()


def test_control_characters_never_reach_the_terminal() -> None:
    from episteme_core.cli.envelope import terminal_safe

    assert terminal_safe("a\x1b[31mb\x07c\td\ne\x9b") == "a[31mbc\td\ne"
