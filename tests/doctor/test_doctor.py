"""``episteme doctor`` checks a setup as a whole: on a good home every check passes (exit 0); with each
failure planted (a broken plugin, a refused component, a bad config, a reader kind nobody provides, a
reader that is down, no home, a tampered blob, shards behind the log, a token file others can read)
the one check fails with what to do, the others still report, and the command exits 3 with every
check in ``error.details``."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from episteme_core.ask.reference_server import ReferenceServer
from episteme_core.testing import CliResult, invoke, run_cli, validate

BOOKS = Path(__file__).resolve().parents[1] / "fixtures" / "ask" / "books"
EVERY_CHECK = ["python", "episteme", "builtins", "readers", "home", "shards", "token file"]


def doctor(home: Path, *args: str, env: dict[str, str] | None = None) -> CliResult:
    return invoke("--home", str(home), "doctor", *args, env=env)


def checks_of(result: CliResult) -> dict[str, dict[str, Any]]:
    envelope = result.envelope
    data = envelope["data"] if envelope["ok"] else envelope["error"]["details"]
    validate(data, "doctor-report")
    return {check["name"]: check for check in data["checks"]}


@pytest.fixture
def good(home: Path) -> Path:
    """A home with the fixture books ingested and packed into current shards."""
    result = invoke("--home", str(home), "ingest", "books", str(BOOKS))
    assert result.exit_code == 0, result.stderr
    return home


def test_a_good_home_passes_every_check(good: Path) -> None:
    result = doctor(good, "--json")
    assert result.exit_code == 0, result.stderr
    validate(result.envelope, "cli-envelope")
    checks = checks_of(result)
    assert list(checks) == EVERY_CHECK
    assert result.envelope["data"]["ok"] is True
    assert {name: c["status"] for name, c in checks.items()} == {
        **dict.fromkeys(EVERY_CHECK, "ok"), "token file": "skip"}
    assert checks["readers"]["summary"] == "none configured: ask uses the builtin bm25 reader"
    assert checks["shards"]["details"]["sources"] == {"books": "current"}
    assert checks["home"]["details"]["problems"] == []
    import episteme_core

    assert checks["episteme"]["details"]["version"] == episteme_core.__version__
    human = doctor(good)
    assert human.exit_code == 0
    lines = human.stdout.splitlines()
    assert lines[-1] == "all is well: 6 check(s) passed, 1 skipped"
    assert [line.split()[0] for line in lines[:-1]] == ["ok"] * 6 + ["skip"]


def test_doctor_never_writes_to_the_home(good: Path) -> None:
    before = {p: p.read_bytes() for p in sorted(good.rglob("*")) if p.is_file()}
    assert doctor(good).exit_code == 0
    assert {p: p.read_bytes() for p in sorted(good.rglob("*")) if p.is_file()} == before


def _config(home: Path, readers: list[dict[str, Any]] | str) -> None:
    text = readers if isinstance(readers, str) else json.dumps({"readers": readers})
    (home / "config.json").write_text(text, "utf-8")


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _tamper(home: Path) -> None:
    blob = next(p for p in sorted((home / "blobs").rglob("*")) if p.is_file())
    blob.write_bytes(blob.read_bytes() + b"tampered")


def _behind(home: Path) -> None:
    extra = home.parent / "more-books"
    extra.mkdir()
    (extra / "notes.txt").write_text("A new book nobody has packed yet.\n", "utf-8")
    assert invoke("--home", str(home), "ingest", "books", str(extra), "--no-pack").exit_code == 0


def _open_token(home: Path) -> list[str]:
    token = home.parent / "token"
    token.write_text("a-token-of-enough-characters-1234567890\n", "ascii")
    token.chmod(0o644)
    return ["--token-file", str(token)]


# case -> (plant: home -> extra doctor args, the failing check, words of its summary, words of its hint)
PLANTED: dict[str, tuple[Callable[[Path], list[str] | None], str, str, str]] = {
    "config.json is not JSON": (lambda h: _config(h, "{"), "readers", "config.json", "strict JSON"),
    "a reader entry without a url": (lambda h: _config(h, [{"name": "far"}]), "readers",
                                     "an http reader needs a url", "readers section"),
    "a reader kind nobody registered": (
        lambda h: _config(h, [{"name": "mini", "kind": "onnx", "model": str(h / "no-model")}]),
        "reader mini", "reader kind 'onnx' is not registered", "pip install episteme-onnx"),
    "a reader that is down": (
        lambda h: _config(h, [{"name": "far", "url": f"http://127.0.0.1:{_closed_port()}", "timeout": 5}]),
        "reader far", "http: it is not healthy", "start the reader"),
    "a tampered blob": (_tamper, "home", "1 problem(s): BLOB_MISMATCH", "restore the named files"),
    "shards behind the log": (_behind, "shards", "shards of books (behind)", "run episteme ingest"),
    "a token file others can read": (_open_token, "token file", "has mode 0644", "mode 0600 or 0400"),
}


@pytest.mark.parametrize("case", sorted(PLANTED))
def test_each_planted_failure_fails_its_check_and_says_what_to_do(good: Path, case: str) -> None:
    plant, name, summary, hint = PLANTED[case]
    extra = plant(good) or []
    result = doctor(good, "--json", *extra)
    assert result.exit_code == 3, result.stdout
    error = result.envelope["error"]
    assert error["code"] == "INVALID_INPUT" and "doctor again" in error["hint"]
    checks = checks_of(result)
    assert error["details"]["ok"] is False
    failed = {n for n, c in checks.items() if c["status"] == "fail"}
    assert name in failed, checks
    assert summary in checks[name]["summary"], checks[name]
    assert hint in (checks[name]["hint"] or ""), checks[name]
    assert checks["python"]["status"] == checks["builtins"]["status"] == "ok"  # the others still report
    assert error["details"]["counts"]["fail"] == len(failed)
    human = doctor(good, *extra)
    assert human.exit_code == 3 and human.stdout == ""
    assert human.stderr.startswith(f"error: {len(failed)} of {len(checks)} checks failed:\n")
    failing_line = next(line for line in human.stderr.splitlines()
                        if line.startswith("FAIL") and name in line)
    assert summary in failing_line
    assert "hint: fix each failed check as its line says, then run episteme doctor again" in human.stderr


def test_no_home_fails_and_says_how_to_make_one(home: Path) -> None:
    result = doctor(home, "--json")
    assert result.exit_code == 3
    checks = checks_of(result)
    assert checks["home"]["status"] == "fail" and "episteme init" in checks["home"]["hint"]
    assert checks["shards"]["status"] == "skip"
    assert not home.exists()  # doctor creates nothing


def test_a_home_with_nothing_captured_skips_the_shards(home: Path) -> None:
    assert invoke("--home", str(home), "init").exit_code == 0
    checks = checks_of(doctor(home, "--json"))
    assert checks["shards"]["status"] == "skip" and "episteme ingest" in checks["shards"]["hint"]


def test_a_leftover_temp_file_warns_and_still_exits_0(good: Path) -> None:
    (good / "chunks" / ".index.json.1234.tmp").write_bytes(b"half")
    result = doctor(good, "--json")
    assert result.exit_code == 0, result.stderr
    home_check = checks_of(result)["home"]
    assert home_check["status"] == "warn" and "TEMP_FILE" in home_check["summary"]
    assert doctor(good).stdout.splitlines()[-1] == "all is well (1 warning(s)): 5 check(s) passed, 1 skipped"


def test_a_private_token_file_passes(good: Path) -> None:
    token = good.parent / "token"
    token.write_text("a-token-of-enough-characters-1234567890\n", "ascii")
    token.chmod(0o600)
    check = checks_of(doctor(good, "--json", "--token-file", str(token)))["token file"]
    assert check["status"] == "ok" and check["details"]["mode"] == "0600"


def test_a_healthy_http_reader_passes(good: Path) -> None:
    with ReferenceServer() as server:
        _config(good, [{"name": "ref", "url": server.url, "slots": 2}])
        result = doctor(good, "--json")
        assert result.exit_code == 0, result.stderr
        check = checks_of(result)["reader ref"]
        assert server.stats()["health"] == 1  # doctor asked the reader's GET /health
    assert check["status"] == "ok" and check["summary"].startswith("http: healthy in ")
    assert check["details"]["slots"] == 2


@pytest.mark.parametrize(("site", "name", "words"), [
    ("broken", "plugin broken", "failed to load: ImportError"),
    ("mistakes", "plugin mistakes", "component(s) refused"),
])
def test_a_plugin_that_failed_or_was_refused_fails_its_check(good: Path, plugin_site: Any, site: str,
                                                             name: str, words: str) -> None:
    env = plugin_site("sample", site)
    result = run_cli(["--home", str(good), "--json", "doctor"], env={**os.environ, **env})  # real discovery
    assert result.exit_code == 3, result.stdout
    checks = checks_of(result)
    assert checks[name]["status"] == "fail" and words in checks[name]["summary"]
    assert checks["plugin sample"]["status"] == "ok"  # the other plugin loaded, and says so
    assert "reader sample-reader" in checks["plugin sample"]["summary"]
