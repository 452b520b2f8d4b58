"""A home built from ``examples/``, and ``episteme serve`` started as a real subprocess on a free loopback
port (``--port 0``; the port is read from the line it prints when it listens)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest

from episteme_core.testing import invoke

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SAMPLE_SITE = ROOT / "tests" / "fixtures" / "plugins" / "site-sample"
LISTENING = re.compile(r"listening on (http://\S+/mcp)")
START_SECONDS = 60


def build_example_home(home: Path) -> Path:
    """The README's main job: three specs (map), a book and a Claude Code transcript, all indexed."""
    steps = (
        ["pipeline", "--map", str(EXAMPLES / "map.json")],
        ["ingest", "books", str(EXAMPLES / "books")],
        ["ingest", "claude", "--projects", str(EXAMPLES / "claude-projects")],
    )
    for step in steps:
        # The builtins only, as every process of these tests runs (a session fixture is set up before
        # the per-test environment, so say it here): installed families would chunk the specs otherwise.
        result = invoke("--home", str(home), "--json", *step, env={"EPISTEME_LOAD_PLUGINS": ""})
        assert result.exit_code == 0, (step, result.stderr)
    return home


@pytest.fixture(scope="session")
def example_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_example_home(tmp_path_factory.mktemp("examples") / "home")


@pytest.fixture(scope="module")
def example_home(example_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the example home for one test module (its telemetry and caches are its own)."""
    home = tmp_path_factory.mktemp("served") / "home"
    shutil.copytree(example_template, home)
    return home


@attrs.define
class Served:
    """A running ``episteme serve`` subprocess."""

    proc: subprocess.Popen[str]
    url: str = ""
    stderr: list[str] = attrs.field(factory=list)

    @property
    def base(self) -> str:
        return self.url.rsplit("/mcp", 1)[0]

    @property
    def port(self) -> int:
        return int(self.base.rsplit(":", 1)[1])

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 60) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(10)

    def log(self) -> str:
        return "".join(self.stderr)

    def log_when(self, *needles: str, timeout: float = 60) -> str:
        """The log once it holds every needle (stderr is read by a thread, after the reply); the
        timeout bounds a hang only (the lines come within milliseconds)."""
        deadline = time.monotonic() + timeout
        while not all(needle in self.log() for needle in needles) and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.log()


def child_env(extra: dict[str, str] | None = None, *, sample_plugin: bool = False) -> dict[str, str]:
    # The builtins only (and the sample plugin when asked), whatever else is installed.
    env = {**os.environ, "EPISTEME_LOAD_PLUGINS": "sample" if sample_plugin else ""}
    if sample_plugin:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SAMPLE_SITE), env.get("PYTHONPATH", "")) if p)
    env.update(extra or {})
    return env


def start_server(home: Path, *options: str, env: dict[str, str] | None = None,
                 global_options: Sequence[str] = ()) -> Served:
    """Start ``episteme serve --port 0`` on ``home`` and wait until it listens."""
    cmd = [sys.executable, "-m", "episteme_core", "--home", str(home), *global_options, "serve",
           "--port", "0", *options]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env if env is not None else child_env())
    served = Served(proc)
    ready = threading.Event()

    def drain() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            served.stderr.append(line)
            found = LISTENING.search(line) or re.search(r'"message":"(http://[^"]+/mcp)"', line)
            if found and not served.url:
                served.url = found.group(1)
                ready.set()
        ready.set()

    threading.Thread(target=drain, daemon=True).start()
    deadline = time.monotonic() + START_SECONDS
    while not ready.wait(0.1):
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"episteme serve did not start: {served.log()}")
    if not served.url:
        proc.wait(10)
        raise AssertionError(f"episteme serve exited ({proc.returncode}): {served.log()}")
    return served


@pytest.fixture(scope="module")
def server(example_home: Path) -> Iterator[Served]:
    """One server on the module's example home, stopped (SIGTERM) after the module."""
    served = start_server(example_home)
    yield served
    served.stop()


def mcp_call(url: str, name: str, arguments: dict[str, Any], *, headers: dict[str, str] | None = None,
             mode: str = "auto") -> Any:
    """One tool call with the SDK's streamable-HTTP client (a fresh connection); a JSON-RPC error is
    raised as the SDK's ``MCPError``."""
    import anyio
    from mcp.shared.exceptions import MCPError

    async def go() -> Any:
        async with connect(url, headers=headers, mode=mode) as client:
            try:
                return await client.call_tool(name, arguments)
            except MCPError as exc:  # raised here, not wrapped in the client's task group
                return exc

    result = anyio.run(go)
    if isinstance(result, MCPError):
        raise result
    return result


def connect(url: str, *, headers: dict[str, str] | None = None, mode: str = "auto") -> Any:
    """An SDK ``Client`` for ``url`` (enter it with ``async with``)."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    if headers is None:
        return Client(url, mode=mode)
    http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60.0))
    return Client(streamable_http_client(url, http_client=http), mode=mode)


def cli_data(home: Path, *args: str) -> dict[str, Any]:
    """The ``data`` of ``episteme --json ARGS`` on ``home`` (in process)."""
    result = invoke("--home", str(home), "--json", *args)
    assert result.exit_code == 0, result.stderr
    data: dict[str, Any] = result.envelope["data"]
    return data


def cli_error(home: Path, *args: str) -> dict[str, Any]:
    """The ``error`` of a failing ``episteme --json ARGS`` on ``home``."""
    result = invoke("--home", str(home), "--json", *args)
    assert result.exit_code != 0, result.stdout
    error: dict[str, Any] = result.envelope["error"]
    return error
