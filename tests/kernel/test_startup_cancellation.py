"""A SIGTERM or SIGINT at any moment of start-up (before, during or after plugin loading, while
parsing, just before the command runs, and while the command loads a plugin it uses) ends the
command with CANCELLED and 143 or 130: never as a plugin's failure, a usage error or success. The
signal is sent at each named start-up point (``EPISTEME_SIGNAL_AT``: the process signals itself
there), then from outside at many moments."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

COMMAND = ["extract", "--json"]  # a builtin command with a plugin of its own (the extraction builtins)


def _run(home: Path, env: dict[str, str], *extra: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "episteme_core", "--home", str(home), *COMMAND, *extra],
                          capture_output=True, env={**os.environ, **env}, timeout=120)


def _points(home: Path, tmp_path: Path, env: dict[str, str]) -> list[str]:
    trace = tmp_path / "points.txt"
    proc = _run(home, {**env, "EPISTEME_SIGNAL_TRACE": str(trace)})
    assert proc.returncode == 0, proc.stderr
    return trace.read_text().split()


def _cancelled(proc: subprocess.CompletedProcess[bytes], status: int, where: str) -> None:
    assert proc.returncode == status, f"{where}: exit {proc.returncode}: {proc.stderr.decode()[-800:]}"
    assert proc.stdout == b"", where
    envelope = json.loads(proc.stderr.decode().strip().splitlines()[-1])
    assert envelope["error"]["code"] == "CANCELLED", where
    text = proc.stderr.decode()
    for wrong in ("PLUGIN_FAILED", "failed to load", "invalid choice", "INVALID_USAGE"):
        assert wrong not in text, f"{where}: {wrong}"


def test_a_signal_at_every_point_of_start_up_is_the_commands_cancellation(
        home: Path, tmp_path: Path, plugin_site) -> None:
    env = plugin_site("sample")  # an entry-point plugin too
    points = _points(home, tmp_path, env)
    # plugins load on demand: the command's own before it runs, the others it uses while it runs
    assert points[0] == "start" and "command" in points
    assert "plugin:episteme_core.builtins.extraction" in points and "plugin:sample" in points
    assert "hook:episteme_extractors" in points and "plugins-loaded" in points and "parsed" in points
    for number, point in enumerate(points):
        _cancelled(_run(home, {**env, "EPISTEME_SIGNAL_AT": point}), 143, f"SIGTERM at {point}")
        if number % 4 == 0:
            proc = _run(home, {**env, "EPISTEME_SIGNAL_AT": f"{point}@SIGINT"})
            _cancelled(proc, 130, f"SIGINT at {point}")


def test_a_sigint_inside_code_built_from_a_string_still_ends_with_130(home: Path, plugin_site) -> None:
    """CPython remembers a KeyboardInterrupt that ended code it ran from a string (the methods
    ``collections.namedtuple`` and ``dataclasses`` generate are such code) even once it is caught, and
    under ``python -m`` then kills the process with SIGINT as it exits: a command that already wrote
    its cancellation (130) died of the signal instead (exit -2). The fixture plugin's import is
    interrupted inside such code."""
    proc = _run(home, plugin_site("generated"))
    _cancelled(proc, 130, "SIGINT inside code run from a string")


def test_a_signal_at_help_or_a_usage_error_is_still_a_cancellation(home: Path) -> None:
    proc = _run(home, {"EPISTEME_SIGNAL_AT": "plugins-loaded"}, "--no-such-option")
    _cancelled(proc, 143, "a usage error after the signal")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_from_outside_at_any_moment_of_start_up(home: Path, sig: signal.Signals) -> None:
    """Sent from another process at moments spread over start-up: a process still running is always
    cancelled; one that already finished is left alone. A signal that lands before episteme's first
    instruction (while the interpreter starts: its site module, the console script's own imports) is
    the interpreter's: it kills the process (SIGTERM: exit by the signal, no output; SIGINT: Python's
    KeyboardInterrupt traceback, with no frame of episteme's files)."""
    status = 143 if sig == signal.SIGTERM else 130
    seen: set[str] = set()
    for step in range(16):
        proc = subprocess.Popen([sys.executable, "-m", "episteme_core", "--home", str(home), *COMMAND],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(0.02 * step)
        if proc.poll() is not None:
            proc.communicate()
            seen.add("finished")
            continue
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=120)
        if proc.returncode == -sig or (sig == signal.SIGINT and proc.returncode == 1):
            assert out == b"" and b"/episteme_core/" not in err and b'"code"' not in err, (
                f"killed by the signal inside episteme: {err.decode()[-800:]}")
            assert sig == signal.SIGINT or err == b""
            seen.add("before")
            continue
        if proc.returncode == 0:  # it finished between the poll and the signal
            assert json.loads(out)["ok"] is True
            seen.add("finished")
            continue
        _cancelled(subprocess.CompletedProcess(proc.args, proc.returncode, out, err), status, f"at {step}")
        seen.add("cancelled")
    assert "cancelled" in seen
