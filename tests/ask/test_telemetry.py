"""Telemetry: whole lines under concurrent appends, never a secret, off when asked, no home made."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from episteme_core.ask import telemetry
from episteme_core.testing import validate


def line(question: str = "q", command: str = "ask") -> telemetry.TelemetryLine:
    return telemetry.TelemetryLine(
        time=telemetry.now(), command=command, question=question, filter=None, since=None, duration_ms=3,
        sources=[telemetry.SourceHit("books", 1, 4, 2, 120)],
        shards=[telemetry.ShardLine("books-0001", "books", 4, 2, "bm25", False)],
        readers=["bm25"], fallbacks=0, answered=2, omitted=0, ok=True,
    )


def test_line_validates_and_is_one_line(tmp_path: Path) -> None:
    assert telemetry.record(tmp_path, line("two\nlines"))
    [text] = (tmp_path / "telemetry.jsonl").read_text("utf-8").splitlines()
    validate(json.loads(text), "telemetry-line")


@pytest.mark.parametrize("value", ["off", "OFF", "0", "false", "no"])
def test_off_disables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("EPISTEME_TELEMETRY", value)
    assert not telemetry.record(tmp_path, line())
    assert not (tmp_path / "telemetry.jsonl").exists()


def test_no_home_is_created(tmp_path: Path) -> None:
    assert not telemetry.record(tmp_path / "absent", line())
    assert not (tmp_path / "absent").exists()


def test_secrets_are_redacted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HONCHO_API_KEY", "sk-very-secret-value")
    monkeypatch.setenv("READER_TOKEN", "tok-123456789")
    telemetry.record(tmp_path, line("why does sk-very-secret-value fail with tok-123456789?"))
    text = (tmp_path / "telemetry.jsonl").read_text("utf-8")
    assert "sk-very-secret-value" not in text and "tok-123456789" not in text
    assert "[redacted]" in text


WRITER = """
import sys
from pathlib import Path
from episteme_core.ask import telemetry
home, n, tag = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
for i in range(n):
    telemetry.append_line(home / "telemetry.jsonl", {"tag": tag, "i": i, "pad": tag * 20000})
"""


def test_concurrent_appends_never_interleave(tmp_path: Path) -> None:
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), "40", tag])
             for tag in "abcd"]
    for proc in procs:
        assert proc.wait(timeout=60) == 0
    lines = (tmp_path / "telemetry.jsonl").read_bytes().split(b"\n")
    assert lines[-1] == b""
    records = [json.loads(raw) for raw in lines[:-1]]
    assert len(records) == 160
    for tag in "abcd":
        assert sorted(r["i"] for r in records if r["tag"] == tag) == list(range(40))
        assert all(r["pad"] == tag * 20000 for r in records if r["tag"] == tag)
