"""The reference reader server speaks the protocol, as a module and as a process."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import httpx
import pytest

from episteme_core.ask import protocol
from episteme_core.ask.reference_server import ReferenceServer, choose, parse_prompt
from episteme_core.records.reading import Candidate, ReadRequest


def body(question: str = "white whale") -> dict[str, object]:
    request = ReadRequest(question, "books-0001", "books", (
        Candidate("p1", "The sea.", 1.0, "r#1"),
        Candidate("p2", "A white\n\nwhale, white.", 1.0, "r#2"),
        Candidate("p3", "One whale.", 1.0, "r#3"),
    ))
    return {"model": "m", "messages": protocol.messages(request)}


def test_parse_prompt_round_trips_the_protocol_messages() -> None:
    question, paragraphs = parse_prompt(body()["messages"])  # type: ignore[arg-type]
    assert question == "white whale"
    assert paragraphs == [("p1", "The sea."), ("p2", "A white\n\nwhale, white."), ("p3", "One whale.")]
    assert choose(question, paragraphs, 5) == ["p2", "p3"]
    assert choose(question, paragraphs, 1) == ["p2"]


def test_endpoints(reference: ReferenceServer) -> None:
    with httpx.Client(base_url=reference.url) as client:
        assert client.get("/health").json() == {"status": "ok"}
        reply = client.post("/v1/chat/completions", json=body()).json()
        assert json.loads(reply["choices"][0]["message"]["content"]) == {"ids": ["p2", "p3"]}
        assert client.post("/v1/episteme/run", json={"shards": ["a"]}).status_code == 200
        assert client.get("/nowhere").status_code == 404
        assert client.post("/control", json={"mode": "dance"}).status_code == 400
        assert client.post("/control", json={"mode": "fail", "count": 1}).status_code == 200
        assert client.post("/v1/chat/completions", json=body()).status_code == 500
        assert client.post("/v1/chat/completions", json=body()).status_code == 200
        stats = client.get("/stats").json()
    assert stats["chat"] == 3 and stats["modes_used"] == ["ok", "fail", "ok"]


def test_runs_as_a_process_and_stops_on_sigterm() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "episteme_core.ask.reference_server", "--port", "0", "--mode", "plain"],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert line.startswith("episteme reference reader on http://127.0.0.1:")
        url = line.split(" on ", 1)[1].strip()
        reply = httpx.post(url + "/v1/chat/completions", json=body(), timeout=10).json()
        assert protocol.extract_ids(reply["choices"][0]["message"]["content"]) == ["p2", "p3"]
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0  # against a hang: it exits at once


@pytest.mark.parametrize("mode", ["junk", "invent", "empty", "plain"])
def test_modes_answer_with_a_chat_completion(reference: ReferenceServer, mode: str) -> None:
    reference.configure(mode=mode)
    reply = httpx.post(reference.url + "/v1/chat/completions", json=body(), timeout=10).json()
    assert reply["object"] == "chat.completion"
