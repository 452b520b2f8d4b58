"""``pipeline`` captures with the very functions and settings ``snapshot`` and ``manual-ingest`` use."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from episteme_core.testing import invoke

from .conftest import TestServer


def _options(command: str) -> set[str]:
    from episteme_core.cli.main import build_parser
    from episteme_core.kernel.loader import load_plugins

    commands = {n: c.obj for n, c in load_plugins().components["command"].items()}
    parser = build_parser(commands, only=command)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {flag for action in sub.choices[command]._actions for flag in action.option_strings}


def test_pipeline_takes_every_capture_option_of_snapshot_and_manual_ingest() -> None:
    pipeline = _options("pipeline")
    assert _options("snapshot") - {"--manifest", "--snapshots"} <= pipeline
    assert _options("manual-ingest") - {"--map", "--snapshots"} <= pipeline
    assert {"--retry-backoff-ms", "--retry-after-cap-ms", "--chunker"} <= pipeline


def test_pipeline_honours_the_retry_options(server: TestServer, home: Path, tmp_path: Path) -> None:
    """A 503 with Retry-After 5 s is retried after at most --retry-after-cap-ms, as snapshot does."""
    answers = iter([(503, b"busy", {"Retry-After": "5"}),
                    (200, b"<p>served</p>", {"Content-Type": "text/html"})])

    asked_at: list[float] = []

    def handler(request):  # type: ignore[no-untyped-def]
        asked_at.append(time.monotonic())
        status, body, headers = next(answers)
        request.reply(status, body, headers)

    url = server.route("/page", handler)
    (tmp_path / "manifest.json").write_text(json.dumps([{"url": url}]))
    result = invoke("--home", str(home), "--json", "pipeline", "--manifest", str(tmp_path / "manifest.json"),
                    "--allow-localhost", "--retries", "1", "--retry-backoff-ms", "0",
                    "--retry-after-cap-ms", "100")
    assert result.exit_code == 0, result.stderr
    # The retry came well before the 5 s Retry-After (capped at 100 ms), timed between the two requests
    # so that a slow pipeline around them does not count.
    assert len(asked_at) == 2 and asked_at[1] - asked_at[0] < 4
    assert result.envelope["data"]["capture"]["counts"]["captured"] == 1
    assert result.envelope["data"]["chunk"]["chunks"] == 1
