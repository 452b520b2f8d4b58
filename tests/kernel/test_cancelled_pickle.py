"""A cancellation that crosses a process boundary (a worker's ``Cancelled``, pickled back to the
parent) names its signal: the parent then ends with that signal's status and message."""

from __future__ import annotations

import subprocess
import sys

from episteme_core.errors import Cancelled, clear_cancel


def test_an_unpickled_cancellation_records_the_signal_not_the_message() -> None:
    import pickle

    data = pickle.dumps(Cancelled("SIGTERM"))
    clear_cancel()
    # a fresh process, where no signal was recorded before: the unpickled error is all it knows
    script = ("import pickle, sys; from episteme_core.errors import cancel_requested, raise_if_cancelled, "
              "EpistemeError\n"
              "error = pickle.loads(sys.stdin.buffer.read())\n"
              "print(error.message, error.exit_status, cancel_requested())\n"
              "try:\n    raise_if_cancelled()\nexcept EpistemeError as again:\n"
              "    print(again.message, again.exit_status)\n")
    out = subprocess.run([sys.executable, "-c", script], input=data, capture_output=True, check=True).stdout
    assert out.decode().splitlines() == ["cancelled by SIGTERM 143 SIGTERM", "cancelled by SIGTERM 143"]
