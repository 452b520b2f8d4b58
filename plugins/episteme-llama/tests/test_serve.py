"""``reader serve`` on 127.0.0.1, driven by episteme's own http reader and pool: health, the run
announcement, reads (the same labels as the reader in process), slots in parallel, bearer tokens,
bounded bodies, browsers and rebinding refused; and the real CLI process started and stopped."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from episteme_core.api import (
    HttpReader,
    ReaderPool,
    ReaderSpec,
    ReadRequest,
    reader_messages,
    reader_response_format,
)
from episteme_llama.reader import LlamaReader
from episteme_llama.server import ReaderServer, ServeSettings

from .conftest import WORDS, read_request

TOKEN = "reader-token-0123456789abcdef"


def shard(i: int, n: int = 6) -> ReadRequest:
    texts = [" ".join(WORDS[(i + j * k) % len(WORDS)] for k in range(1, 9)) for j in range(n)]
    request = read_request(f"white whale {WORDS[i % len(WORDS)]}?", texts)
    return ReadRequest(request.question, f"books-{i:04d}", "books", request.candidates)


@pytest.fixture
def serve(open_llama: Callable[..., LlamaReader]) -> Iterator[Callable[..., ReaderServer]]:
    started: list[ReaderServer] = []

    def make(*, slots: int = 1, token: str | None = None, max_body: int = 1 << 20, host: str = "127.0.0.1",
             **options: Any) -> ReaderServer:
        reader = open_llama(slots=slots, **options)
        server = ReaderServer(reader, ServeSettings(host=host, port=0, token=token, max_body=max_body,
                                                    max_connections=max(8, 4 * slots))).start()
        started.append(server)
        return server

    yield make
    for server in started:
        server.stop()


def client(server: ReaderServer, *, slots: int = 1, timeout: float = 30.0, **options: Any) -> HttpReader:
    return HttpReader(ReaderSpec("remote", "http", slots=slots, timeout=timeout,
                                 options={"url": server.url, **options}))


def raw(server: ReaderServer, method: str, path: str, body: bytes | None = None,
        headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    host, port = server.httpd.server_address[:2]
    connection = http.client.HTTPConnection(str(host), int(port), timeout=30)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        data = response.read()
        return response.status, json.loads(data) if data else {}
    finally:
        connection.close()


def test_the_pool_reads_through_the_server_as_in_process(serve: Callable[..., ReaderServer],
                                                         open_llama: Callable[..., LlamaReader]) -> None:
    server = serve(mode="generate")
    requests = [shard(i) for i in range(5)]
    warnings: list[tuple[Any, ...]] = []
    remote = client(server)
    pool = ReaderPool([remote], lambda *a, **k: warnings.append(a))
    try:
        pool.prepare(requests[0].question, [r.shard for r in requests])
        reads = pool.read_all(requests)
    finally:
        pool.close()
    assert warnings == [] and all(r.reader == "remote" and not r.fallback for r in reads)
    local = open_llama(mode="generate")
    assert [r.labels for r in reads] == [local.read(q).labels for q in requests]
    assert server.stats == {"reads": 5, "failed": 0, "runs": 1}


def test_fuse_over_http_orders_by_rank_and_returns_scores(serve: Callable[..., ReaderServer]) -> None:
    server = serve(mode="fuse", weight=0.0, top=3)
    request = shard(3)
    body = {"model": "x", "messages": reader_messages(request),
            "response_format": reader_response_format(request.labels)}
    status, reply = raw(server, "POST", "/v1/chat/completions", json.dumps(body).encode(),
                        {"Content-Type": "application/json"})
    assert status == 200
    assert json.loads(reply["choices"][0]["message"]["content"]) == {"ids": ["p1", "p2", "p3"]}
    assert set(reply["episteme"]["scores"]) == {"p1", "p2", "p3"}


def test_health_and_models_describe_without_paths(serve: Callable[..., ReaderServer],
                                                  tiny_model: Path) -> None:
    server = serve(mode="fuse", slots=2)
    status, health = raw(server, "GET", "/health")
    assert status == 200 and health["status"] == "ok"
    assert health["device"] in ("cpu", "gpu") and health["slots"] == 2 and health["mode"] == "fuse"
    assert str(tiny_model) not in json.dumps(health)
    status, models = raw(server, "GET", "/v1/models")
    assert status == 200 and models["data"][0]["id"] == health["model"]
    assert raw(server, "GET", "/nothing")[0] == 404


def test_slots_serve_reads_at_once(serve: Callable[..., ReaderServer]) -> None:
    server = serve(mode="fuse", slots=3)
    requests = [read_request(f"whale {i}", [" ".join(WORDS) * 3] * 10) for i in range(9)]
    requests = [ReadRequest(r.question, f"books-{i:04d}", "books", r.candidates)
                for i, r in enumerate(requests)]
    remote = client(server, slots=3)
    pool = ReaderPool([remote], lambda *a, **k: None)
    try:
        pool.prepare(requests[0].question, [r.shard for r in requests])
        reads = pool.read_all(requests)
    finally:
        pool.close()
    assert all(not r.fallback and r.labels for r in reads)
    assert server.reader.peak_busy >= 2, "reads overlapped on the server's slots"


def test_a_token_is_required_when_given(serve: Callable[..., ReaderServer],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    server = serve(mode="generate", token=TOKEN)
    assert raw(server, "GET", "/health")[0] == 401
    assert raw(server, "GET", "/health", headers={"Authorization": "Bearer wrong-token-0123456789"})[0] == 401
    warnings: list[tuple[Any, ...]] = []
    pool = ReaderPool([client(server)], lambda *a, **k: warnings.append(a))
    try:
        pool.prepare("q", ["books-0000"])
        [read] = pool.read_all([shard(0)])
    finally:
        pool.close()
    assert read.reader == "bm25" and read.fallback and warnings[0][0] == "READER_UNHEALTHY"
    monkeypatch.setenv("EPISTEME_READER_TOKEN", TOKEN)
    authorised = client(server, api_key_env="EPISTEME_READER_TOKEN")
    authorised.health()
    assert authorised.read(shard(0)).labels is not None
    authorised.close()


def test_bodies_are_bounded_and_must_be_json(serve: Callable[..., ReaderServer]) -> None:
    server = serve(mode="generate", max_body=2048)
    at_limit = json.dumps({"question": "q" * 2000, "shards": []}).encode()[:2048]
    at_limit = json.dumps({"question": "q" * (2048 - len(json.dumps({"question": "", "shards": []}))),
                           "shards": []}).encode()
    assert len(at_limit) == 2048
    assert raw(server, "POST", "/v1/episteme/run", at_limit)[0] == 200
    past = json.dumps({"question": "q" * (2049 - len(json.dumps({"question": "", "shards": []}))),
                       "shards": []}).encode()
    status, error = raw(server, "POST", "/v1/episteme/run", past)
    assert status == 413 and "larger than 2048" in error["error"]["message"]
    assert raw(server, "POST", "/v1/episteme/run", b"{not json")[0] == 400
    chat = b'{"messages": [{"role": "user", "content": "hi"}]}'
    assert raw(server, "POST", "/v1/chat/completions", chat)[0] == 400
    host, port = server.httpd.server_address[:2]
    connection = http.client.HTTPConnection(str(host), int(port), timeout=10)
    connection.putrequest("POST", "/v1/episteme/run")
    connection.putheader("Transfer-Encoding", "chunked")
    connection.endheaders()
    connection.send(b"2\r\n{}\r\n0\r\n\r\n")
    assert connection.getresponse().status == 411
    connection.close()


def test_browsers_and_rebinding_are_refused(serve: Callable[..., ReaderServer]) -> None:
    server = serve(mode="generate")
    assert raw(server, "GET", "/health", headers={"Origin": "http://evil.example"})[0] == 403
    assert raw(server, "GET", "/health", headers={"Host": "evil.example:8090"})[0] == 403
    assert raw(server, "GET", "/health", headers={"Host": "localhost:8090"})[0] == 200


def test_a_slow_read_is_a_gateway_timeout(serve: Callable[..., ReaderServer]) -> None:
    server = serve(mode="fuse", timeout=0.05, batch_size=1)
    big = read_request("white whale", [" ".join(["the white whale and the sea"] * 60)] * 40)
    body = {"model": "x", "messages": reader_messages(big),
            "response_format": reader_response_format(big.labels)}
    status, error = raw(server, "POST", "/v1/chat/completions", json.dumps(body).encode())
    assert status == 504 and "timed out" in error["error"]["message"]
    assert server.stats["failed"] == 1


def test_a_public_address_needs_a_token(open_llama: Callable[..., LlamaReader]) -> None:
    with pytest.raises(ValueError):
        ReaderServer(open_llama(), ServeSettings(host="0.0.0.0", port=0))


# -- the real command ------------------------------------------------------------------------------
def start_cli(*args: str) -> tuple[subprocess.Popen[bytes], dict[str, Any]]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen([sys.executable, "-m", "episteme_core", "reader", "serve", "--json", *args],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert process.stderr is not None
    line = process.stderr.readline()
    if not line:
        process.wait(10)
        out = process.stdout.read() if process.stdout else b""
        raise AssertionError(f"reader serve did not start: {out!r}")
    return process, json.loads(line)


def test_reader_serve_cli_serves_and_stops_on_sigterm(tiny_model: Path) -> None:
    process, event = start_cli("--model", str(tiny_model), "--port", "0", "--mode", "generate",
                               "--slots", "2", "--threads", "1")
    try:
        assert event["event"] == "listening" and event["url"].startswith("http://127.0.0.1:")
        assert event["auth"] == "loopback" and event["slots"] == 2
        remote = HttpReader(ReaderSpec("remote", "http", timeout=30, options={"url": event["url"]}))
        remote.health()
        reply = remote.read(shard(1))
        assert all(label in shard(1).labels for label in reply.labels)
        remote.close()
    finally:
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    envelope = json.loads(out)
    assert envelope["ok"] is True
    assert envelope["data"]["stopped"] == "SIGTERM" and envelope["data"]["reads"] == 1


def test_reader_serve_cli_refuses_a_public_address_without_a_token(tiny_model: Path, tmp_path: Path) -> None:
    serve = [sys.executable, "-m", "episteme_core", "reader", "serve", "--json", "--model", str(tiny_model),
             "--host", "0.0.0.0", "--port", "0"]
    run = subprocess.run(serve, capture_output=True, timeout=60)
    assert run.returncode == 2
    assert json.loads(run.stderr.splitlines()[-1])["error"]["code"] == "INVALID_USAGE"
    loose = tmp_path / "token"
    loose.write_text(TOKEN)
    os.chmod(loose, 0o644)
    run = subprocess.run([*serve, "--token-file", str(loose)], capture_output=True, timeout=60)
    assert run.returncode == 3 and b"group and others must have no access" in run.stderr


def test_reader_serve_cli_with_a_token_file_on_a_public_address(tiny_model: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    token = tmp_path / "token"
    token.write_text(TOKEN + "\n")
    os.chmod(token, 0o600)
    process, event = start_cli("--model", str(tiny_model), "--host", "0.0.0.0", "--port", "0",
                               "--token-file", str(token), "--threads", "1")
    try:
        assert event["auth"] == "bearer"
        port = event["url"].rsplit(":", 1)[1]
        url = f"http://127.0.0.1:{port}"
        monkeypatch.setenv("EPISTEME_READER_TOKEN", TOKEN)
        options = {"url": url, "api_key_env": "EPISTEME_READER_TOKEN"}
        remote = HttpReader(ReaderSpec("remote", "http", options=options))
        remote.health()
        remote.close()
        anonymous = HttpReader(ReaderSpec("anon", "http", options={"url": url}))
        with pytest.raises(Exception, match="401"):
            anonymous.health()
        anonymous.close()
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=30)
    assert process.returncode == 0


def test_a_port_in_use_is_resource_busy(tiny_model: Path) -> None:
    import socket

    from episteme_core.api import EpistemeError
    from episteme_llama.options import parse_options
    from episteme_llama.service import serve as serve_forever

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        settings = ServeSettings(host="127.0.0.1", port=taken.getsockname()[1])
        options = parse_options({"model": str(tiny_model), "threads": 1})
        with pytest.raises(EpistemeError) as caught:
            serve_forever(options, settings, slots=1, timeout=5, announce=lambda event: None)
        assert caught.value.code == "RESOURCE_BUSY" and "--port" in (caught.value.hint or "")
    finally:
        taken.close()


def test_a_stop_that_lands_as_the_service_announces_itself_is_a_stop(tiny_model: Path) -> None:
    """A client may send SIGTERM the moment it reads the listening line, before the serving thread
    runs again: that is the service's stop (its outcome, exit 0), never a cancelled serve. The CLI
    turns SIGTERM into ``Cancelled``; here the signal lands inside the announcement itself."""
    from episteme_core.api import Cancelled, accept_stop_signal
    from episteme_llama import service
    from episteme_llama.options import LlamaOptions

    def cancel(signum: int, frame: object) -> None:
        raise Cancelled("SIGTERM")

    announced: list[dict[str, Any]] = []

    def announce(event: dict[str, Any]) -> None:
        announced.append(event)
        os.kill(os.getpid(), signal.SIGTERM)  # handled at this thread's next instruction

    before = signal.signal(signal.SIGTERM, cancel)
    try:
        data = service.serve(LlamaOptions(model=str(tiny_model), mode="generate", threads=1),
                             service.settings_for("127.0.0.1", 0, None, 1 << 20, 1), slots=1, timeout=30,
                             announce=announce)
    finally:
        signal.signal(signal.SIGTERM, before)
        accept_stop_signal()  # this process runs other tests next: no request left behind
    assert announced and announced[0]["event"] == "listening"
    assert data["stopped"] == "SIGTERM" and data["reads"] == 0
