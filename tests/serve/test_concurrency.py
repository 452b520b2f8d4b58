"""Many clients at once, the in-flight bound (503), a call during ``ingest --reshard`` (the old answer or
the new, never a mix), and SIGTERM in the middle of a call (it finishes; the server exits 143)."""

from __future__ import annotations

import json
import shutil
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from episteme_core.testing import invoke, run_cli

from .conftest import Served, child_env, cli_data, connect, mcp_call, start_server

JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
QUESTION = "What must a single man in possession of a good fortune be in want of?"
TRANSCRIPT = "chat:claude/spotter-demo/55604662-cf2a-4331-851a-ec234028f8ca#1"


def _tool_call(name: str, arguments: dict[str, Any], id_: int = 1) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": id_, "method": "tools/call",
                       "params": {"name": name, "arguments": arguments}}).encode()


def _without_duration(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k != "durationMs"}


def test_twenty_concurrent_clients_each_get_the_cli_answers(server: Served, example_home: Path) -> None:
    expected_query = cli_data(example_home, "query", "--term", "percent-encoded byte", "--limit", "5")
    expected_ask = _without_duration(cli_data(example_home, "ask", QUESTION, "--budget", "800"))
    expected_show = cli_data(example_home, "show", TRANSCRIPT)
    seen: list[tuple[Any, Any, Any]] = []

    async def client(n: int) -> None:
        async with connect(server.url) as session:
            for _ in range(2):
                query = await session.call_tool("query", {"term": "percent-encoded byte", "limit": 5})
                ask = await session.call_tool("ask", {"question": QUESTION, "budget": 800})
                show = await session.call_tool("show", {"reference": TRANSCRIPT})
                seen.append((query.structured_content, _without_duration(ask.structured_content),
                             show.structured_content))

    async def main() -> None:
        async with anyio.create_task_group() as group:
            for n in range(20):
                group.start_soon(client, n)

    anyio.run(main)
    assert len(seen) == 40
    assert all(item == (expected_query, expected_ask, expected_show) for item in seen)
    assert httpx.get(server.base + "/health").status_code == 200


@pytest.fixture(scope="module")
def sample_server(example_home: Path) -> Any:
    """A server with the sample plugin's slow tool, and room for two requests in flight."""
    served = start_server(example_home, "--max-inflight", "2", env=child_env(sample_plugin=True))
    yield served
    served.stop()


def test_requests_beyond_max_inflight_get_503_and_those_within_are_served(sample_server: Served) -> None:
    def slow(n: int) -> httpx.Response:
        body = _tool_call("sample-echo", {"word": f"w{n}", "sleep": 3}, n)
        return httpx.post(sample_server.url, content=body, headers=JSON_HEADERS, timeout=60)

    with ThreadPoolExecutor(2) as pool:
        calls = [pool.submit(slow, n) for n in (1, 2)]
        time.sleep(1.5)  # both are in flight now (each sleeps 3 s in the tool)
        busy = httpx.post(sample_server.url, content=_tool_call("sources", {}), headers=JSON_HEADERS)
        health = httpx.get(sample_server.base + "/health")
        answers = [call.result() for call in calls]
    assert busy.status_code == 503 and busy.headers["retry-after"] == "1"
    assert busy.json()["error"]["data"]["code"] == "RESOURCE_BUSY"
    assert health.status_code == 200  # health is never counted
    for n, answer in zip((1, 2), answers, strict=True):
        assert answer.status_code == 200
        assert answer.json()["result"]["structuredContent"]["word"] == f"w{n}"
    after = httpx.post(sample_server.url, content=_tool_call("sources", {}), headers=JSON_HEADERS)
    assert after.status_code == 200  # the slots are free again


def test_sigterm_mid_call_lets_the_call_finish_then_exits_143(example_home: Path) -> None:
    served = start_server(example_home, env=child_env(sample_plugin=True))
    result: dict[str, Any] = {}

    def call() -> None:
        response = httpx.post(served.url, content=_tool_call("sample-echo", {"word": "drain", "sleep": 2}),
                              headers=JSON_HEADERS, timeout=60)
        result["response"] = response

    caller = threading.Thread(target=call)
    caller.start()
    time.sleep(0.8)
    served.proc.send_signal(signal.SIGTERM)
    caller.join(60)
    status = served.proc.wait(60)
    response = result["response"]
    assert response.status_code == 200
    assert response.json()["result"]["structuredContent"]["word"] == "drain"
    assert status == 143
    assert "cancelled by SIGTERM" in served.log_when("cancelled by SIGTERM")
    with pytest.raises(httpx.ConnectError):
        httpx.get(served.base + "/health", timeout=5)


def test_a_call_during_a_reshard_gets_the_old_answer_or_the_new_never_a_mix(
    example_template: Path, tmp_path: Path,
) -> None:
    """Shard names and BM25 statistics change with each reshard (alternating shard sizes), so every
    commit answers differently; each answer served must be exactly one commit's answer."""
    sizes = (400, None, 400, None)

    def reshard(home: Path, shard_size: int | None, *, subprocess: bool) -> None:
        config = {} if shard_size is None else {"shard_size": shard_size}
        staged = home / ".config.json.new"  # replaced whole: the server's ask reads it meanwhile
        staged.write_text(json.dumps(config), "utf-8")
        staged.replace(home / "config.json")
        args = ["--home", str(home), "--json", "ingest", "--reshard"]
        result = run_cli(args) if subprocess else invoke(*args)
        assert result.exit_code == 0, result.stderr

    def answers(home: Path) -> tuple[Any, Any]:
        return (cli_data(home, "query", "--term", "Elizabeth Darcy", "--limit", "5"),
                _without_duration(cli_data(home, "ask", "Elizabeth and Mr. Darcy", "--budget", "2000")))

    rehearsal = tmp_path / "rehearsal"  # the same commits in the same order: their answers
    shutil.copytree(example_template, rehearsal)
    expected = [answers(rehearsal)]
    for size in sizes:
        reshard(rehearsal, size, subprocess=False)
        expected.append(answers(rehearsal))
    assert len({json.dumps(answer, sort_keys=True) for answer in expected}) == len(expected)

    home = tmp_path / "home"
    shutil.copytree(example_template, home)
    served = start_server(home)
    seen: list[tuple[Any, Any]] = []
    errors: list[str] = []
    stop = threading.Event()

    async def client() -> None:
        async with connect(served.url) as session:
            while not stop.is_set():
                query = await session.call_tool("query", {"term": "Elizabeth Darcy", "limit": 5})
                ask = await session.call_tool("ask", {"question": "Elizabeth and Mr. Darcy", "budget": 2000})
                if query.is_error or ask.is_error:
                    errors.append(query.content[0].text + ask.content[0].text)
                else:
                    seen.append((query.structured_content, _without_duration(ask.structured_content)))

    def clients() -> None:
        async def main() -> None:
            async with anyio.create_task_group() as group:
                for _ in range(3):
                    group.start_soon(client)

        anyio.run(main)

    runner = threading.Thread(target=clients)
    runner.start()
    try:
        for size in sizes:
            time.sleep(0.3)
            reshard(home, size, subprocess=True)
        time.sleep(0.3)
        stop.set()
        runner.join(120)
        final = mcp_call(served.url, "query", {"term": "Elizabeth Darcy", "limit": 5})
    finally:
        stop.set()
        served.stop()
    assert not errors, errors[:3]
    queries = [json.dumps(q, sort_keys=True) for q, _ in seen]
    asks = [json.dumps(a, sort_keys=True) for _, a in seen]
    commits_q = [json.dumps(q, sort_keys=True) for q, _ in expected]
    commits_a = [json.dumps(a, sort_keys=True) for _, a in expected]
    assert all(q in commits_q for q in queries), "a query answered from no single commit"
    assert all(a in commits_a for a in asks), "an ask answered from no single commit"
    assert len(set(queries)) >= 3, "the server did not follow the commits"
    assert final.structured_content == expected[-1][0]  # after the last commit, its answer
