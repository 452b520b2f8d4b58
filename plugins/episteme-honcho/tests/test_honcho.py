"""episteme-honcho against a real v3 server on 127.0.0.1: paging, errors, and a key that never leaks."""

from __future__ import annotations

from pathlib import Path

import pytest

from episteme_core.testing import CliResult, check_component, invoke, validate

from .conftest import SECRET, FakeHoncho


def ingest(home: Path, *args: str) -> CliResult:
    return invoke("ingest", "honcho", "--no-pack", "--json", "--home", str(home), *args)


def files(root: Path) -> dict[str, bytes]:
    if not root.exists():
        return {}
    return {str(p): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def assert_no_secret(result: CliResult, home: Path) -> None:
    assert SECRET not in result.stdout and SECRET not in result.stderr
    for name, data in files(home).items():
        assert SECRET.encode() not in data, name


def test_sessions_become_records_walking_every_page(honcho: tuple[FakeHoncho, str], home: Path) -> None:
    fake, _ = honcho
    result = ingest(home, "--page-size", "2")
    assert result.exit_code == 0, result.stderr
    data = result.envelope["data"]
    assert sorted(data["records"]) == [
        "chat:honcho/acme/support-1", "chat:honcho/acme/support-2", "chat:honcho/lab/notes"
    ]
    assert data["workspaces"] == 2 and data["sessions"] == 3
    message_pages = [q["page"][0] for path, q, _ in fake.requests if path.endswith("support-1/messages/list")]
    assert message_pages == ["1", "2", "3"]  # 5 messages, 2 a page
    assert all(auth == f"Bearer {SECRET}" for _, _, auth in fake.requests)
    shown = invoke("show", "chat:honcho/acme/support-1", "--stale-ok", "--json", "--home", str(home))
    record = shown.envelope["data"]["record"]
    validate(record, "record")
    assert record["title"] == "Chat support-1"
    assert [(p["n"], p["attributes"]["peer"], p["time"], p["text"]) for p in record["paragraphs"]][:2] == [
        (1, "alice", "2024-01-15T10:00:01Z", "Message 1 about invoices"),
        (2, "bot", "2024-01-15T10:00:02Z", "Message 2 about invoices"),
    ]
    assert_no_secret(result, home)


def test_workspace_option_and_variable_restrict(honcho: tuple[FakeHoncho, str], home: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    fake, _ = honcho
    only = ingest(home, "--workspace", "lab")
    assert only.envelope["data"]["records"] == ["chat:honcho/lab/notes"]
    assert not any(path == "/v3/workspaces/list" for path, _, _ in fake.requests)
    monkeypatch.setenv("HONCHO_WORKSPACE_ID", "acme")
    env = ingest(home)
    assert sorted(env.envelope["data"]["records"]) == [
        "chat:honcho/acme/support-1", "chat:honcho/acme/support-2"
    ]
    unknown = ingest(home, "--workspace", "nope")
    assert unknown.exit_code == 3 and unknown.envelope["error"]["code"] == "INVALID_INPUT"


def test_a_grown_session_appends_only_new_messages(honcho: tuple[FakeHoncho, str], home: Path) -> None:
    from .conftest import message

    fake, _ = honcho
    assert ingest(home).exit_code == 0
    fake.data["lab"]["notes"].append(message(2, "notes", "dave", "Rotor ordered."))
    again = ingest(home)
    assert again.envelope["data"]["records"] == ["chat:honcho/lab/notes"]
    assert again.envelope["data"]["appendedParagraphs"] == 1 and again.envelope["data"]["unchanged"] == 2
    record = invoke("show", "chat:honcho/lab/notes", "--stale-ok", "--json", "--home", str(home))
    texts = [p["text"] for p in record.envelope["data"]["record"]["paragraphs"]]
    assert texts == ["The centrifuge needs a new rotor.", "Rotor ordered."]
    before = files(home)
    assert ingest(home).envelope["data"]["captured"] == 0
    assert files(home) == before


@pytest.mark.parametrize("missing", ["HONCHO_BASE_URL", "HONCHO_API_KEY"])
def test_missing_variables_are_usage_errors(honcho: tuple[FakeHoncho, str], home: Path,
                                            monkeypatch: pytest.MonkeyPatch, missing: str) -> None:
    monkeypatch.delenv(missing)
    result = ingest(home)
    assert result.exit_code == 2 and result.envelope["error"]["code"] == "INVALID_USAGE"
    assert missing in result.envelope["error"]["message"]
    assert_no_secret(result, home)


def test_a_refused_key_is_a_clear_auth_error(honcho: tuple[FakeHoncho, str], home: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HONCHO_API_KEY", "wrong-" + SECRET)
    result = ingest(home, "--debug")
    assert result.exit_code == 2 and result.envelope["error"]["code"] == "INVALID_USAGE"
    assert "refused the API key (HTTP 401)" in result.envelope["error"]["message"]
    assert SECRET not in result.stderr and "wrong-" not in result.stderr


@pytest.mark.parametrize("mode, args, fragment", [
    ("error500", ("--retries", "2"), "HTTP 500, after 3 attempt(s)"),
    ("malformed", (), "malformed JSON"),
    ("endless", ("--max-pages", "5"), "more than 5 pages"),
    ("stuck", (), "asked for page 2, got page 1"),
    ("slow", ("--timeout", "1", "--retries", "0"), "no answer within 1 s"),
])
def test_server_failures_are_source_unavailable_and_store_nothing(
    honcho: tuple[FakeHoncho, str], home: Path, mode: str, args: tuple[str, ...], fragment: str
) -> None:
    fake, _ = honcho
    assert ingest(home, "--workspace", "acme").exit_code == 0
    before = files(home)
    fake.mode = mode
    for flags in ((), ("--debug",)):
        result = ingest(home, *args, *flags)
        assert result.exit_code == 4, (mode, result.stderr)
        error = result.envelope["error"]
        assert error["code"] == "SOURCE_UNAVAILABLE" and error["retryable"] is True
        assert fragment in error["message"]
        assert_no_secret(result, home)
        human = invoke("ingest", "honcho", "--no-pack", "--home", str(home), *args, *flags)
        assert human.exit_code == 4 and SECRET not in human.stderr + human.stdout
    assert files(home) == before
    if mode == "error500":
        attempts = [p for p, _, _ in fake.requests if p == "/v3/workspaces/list"]
        assert len(attempts) == 4 * 3  # four runs, three attempts each


def test_the_key_is_never_stored_or_printed(honcho: tuple[FakeHoncho, str], home: Path) -> None:
    fake, _ = honcho
    fake.data["acme"]["support-2"].append({
        "id": "m-echo", "content": "nothing secret here", "peer_id": "bob", "session_id": "support-2",
        "workspace_id": "acme", "metadata": {}, "created_at": "2024-01-15T11:00:00Z", "token_count": 1,
    })
    for result in (ingest(home, "--debug"), invoke("sources", "--json", "--home", str(home)),
                   invoke("ingest", "honcho", "--home", str(home), "--progress", "always", "--debug")):
        assert result.exit_code == 0, result.stderr
        assert_no_secret(result, home)
    listed = invoke("plugins", "--json")
    assert "honcho" in listed.stdout and SECRET not in listed.stdout + listed.stderr


def test_bad_base_url_is_a_usage_error(honcho: tuple[FakeHoncho, str], home: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HONCHO_BASE_URL", "ftp://example.org")
    result = ingest(home)
    assert result.exit_code == 2 and result.envelope["error"]["code"] == "INVALID_USAGE"


def test_the_source_keeps_the_source_contract() -> None:
    from episteme_honcho.source import HonchoSource

    assert check_component(HonchoSource()) == "source"


def test_max_bytes_bounds_what_a_run_holds_before_it_stores(honcho: tuple[FakeHoncho, str], home: Path,
                                                             tmp_path: Path) -> None:
    """At exactly the bytes the run holds (each message's text plus 512) it stores; one byte short
    it is LIMIT_EXCEEDED and nothing is stored."""
    measured = ingest(tmp_path / "first", "--workspace", "acme")
    assert measured.exit_code == 0, measured.stderr
    held = measured.envelope["data"]["heldBytes"]
    assert held > 512
    past = ingest(home, "--workspace", "acme", "--max-bytes", str(held - 1))
    assert past.exit_code != 0 and past.envelope["error"]["code"] == "LIMIT_EXCEEDED"
    assert "nothing stored" in past.envelope["error"]["message"] and not files(home / "snapshots")
    at = ingest(home, "--workspace", "acme", "--max-bytes", str(held))
    assert at.exit_code == 0 and at.envelope["data"]["captured"] == measured.envelope["data"]["captured"]
