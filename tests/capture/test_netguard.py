"""The address guard: categories, flags, and the check on the address actually connected."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from episteme_core.capture.netguard import NetPolicy, refusal
from episteme_core.testing import invoke, validate

from .conftest import TestServer, slow_body, snapshot, tree, write_manifest

NONE, LOCAL, PRIVATE = NetPolicy(), NetPolicy(allow_localhost=True), NetPolicy(allow_private_networks=True)


@pytest.mark.parametrize(
    ("address", "allowed_by"),
    [
        ("93.184.216.34", "always"),
        ("2606:4700::6810:85e5", "always"),
        ("127.0.0.1", "localhost"),
        ("127.8.9.10", "localhost"),
        ("::1", "localhost"),
        ("::ffff:127.0.0.1", "localhost"),
        ("10.0.0.1", "private"),
        ("172.31.255.255", "private"),
        ("192.168.1.1", "private"),
        ("100.64.0.1", "private"),
        ("fd00::1", "private"),
        ("169.254.169.254", "private"),
        ("fe80::1", "private"),
        ("::ffff:10.0.0.1", "private"),
        ("2002:a00:1::", "private"),  # 6to4 around 10.0.0.1
        ("64:ff9b::a9fe:a9fe", "private"),  # NAT64 around 169.254.169.254
        ("0.0.0.0", "never"),
        ("255.255.255.255", "never"),
        ("224.0.0.1", "never"),
        ("ff02::1", "never"),
        ("192.0.2.1", "never"),
        ("198.18.0.1", "never"),
        ("240.0.0.1", "never"),
        ("::", "never"),
    ],
)
def test_categories(address: str, allowed_by: str) -> None:
    both = NetPolicy(allow_localhost=True, allow_private_networks=True)
    assert (refusal(address, NONE) is None) == (allowed_by == "always")
    assert (refusal(address, LOCAL) is None) == (allowed_by in ("always", "localhost"))
    assert (refusal(address, PRIVATE) is None) == (allowed_by in ("always", "private"))
    assert (refusal(address, both) is None) == (allowed_by != "never")


def test_the_resolved_address_is_the_one_connected(
    server: TestServer, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A name resolving to loopback is refused by what it resolves to, resolved once per connection."""
    port = server.server_address[1]
    server.static("/named", b"named host", {"Content-Type": "text/plain"})
    calls: list[str] = []
    real = socket.getaddrinfo

    def resolver(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "rebind.example":
            calls.append(host)
            return real("127.0.0.1", *args, **kwargs)
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    manifest = write_manifest(tmp_path, [{"url": f"http://rebind.example:{port}/named"}])
    refused = snapshot(home, manifest, local=False)
    assert refused.exit_code == 3 and "loopback" in refused.envelope["error"]["message"]
    assert server.count("/named") == 0 and calls == ["rebind.example"]
    allowed = snapshot(home, manifest)
    assert allowed.exit_code == 0, allowed.stderr
    assert server.hits[-1][1]["Host"] == f"rebind.example:{port}"  # the name is still sent
    assert calls == ["rebind.example", "rebind.example"]


def test_sources_and_exporter_are_listed() -> None:
    result = invoke("plugins", "--json")
    capture = [p for p in result.envelope["data"]["plugins"] if p["name"] == "episteme_core.builtins.capture"]
    assert capture[0]["components"]["source"] == ["file", "http", "warc"]
    assert capture[0]["components"]["exporter"] == ["warc"]
    assert "warc" in invoke("ingest", "--help").stdout


def test_progress_events_validate_and_verify_is_clean(
    server: TestServer, home: Path, tmp_path: Path
) -> None:
    urls = [server.static(f"/p{n}", f"page {n}".encode(), {"Content-Type": "text/plain"}) for n in range(3)]
    result = invoke("snapshot", "--json", "--progress", "always", "--home", str(home), "--allow-localhost",
                    "--manifest", str(write_manifest(tmp_path, [{"url": u} for u in urls])))
    assert result.exit_code == 0
    events = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
    for event in events:
        validate(event, "progress-event")
    assert [e["status"] for e in events] == ["started", "completed"] * 3
    assert [e["current"] for e in events] == [0, 1, 1, 2, 2, 3]
    verified = invoke("verify", "--json", "--home", str(home))
    assert verified.exit_code == 0, verified.stderr


def test_sigterm_mid_run_changes_nothing(server: TestServer, home: Path, tmp_path: Path) -> None:
    fast = server.static("/fast", b"fast", {"Content-Type": "text/plain"})
    slow = server.route("/slow", slow_body(200, 0.05))
    manifest = write_manifest(tmp_path, [{"url": fast}, {"url": slow}])
    proc = subprocess.Popen(
        [sys.executable, "-m", "episteme_core", "snapshot", "--json", "--home", str(home),
         "--manifest", str(manifest), "--allow-localhost"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ},
    )
    deadline = time.monotonic() + 20
    while server.count("/slow") == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 143, err
    assert json.loads(err.decode().strip().splitlines()[-1])["error"]["code"] == "CANCELLED"
    assert not (home / "writer.lock").exists()
    leftovers = {k: v for k, v in tree(home).items() if not k.endswith(".tmp")}
    assert not any(k.startswith(("snapshots", "blobs")) for k in leftovers), leftovers
    assert not (home / "log.jsonl").exists()


def test_retry_after_values() -> None:
    from datetime import UTC, datetime

    from episteme_core.capture.http import FetchSettings, parse_retry_after

    now = datetime(2024, 1, 1, tzinfo=UTC)
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after("Mon, 01 Jan 2024 00:00:30 GMT", now) == 30.0
    assert parse_retry_after("Sun, 31 Dec 2023 00:00:00 GMT", now) == 0.0
    assert parse_retry_after("soon") is None and parse_retry_after("-3") is None
    settings = FetchSettings()
    assert [settings.backoff_s(n) for n in range(6)] == [0.25, 0.5, 1.0, 2.0, 4.0, 5.0]
