"""A cancellation rebuilt from its message names its signal: one that crosses a process boundary (a
worker's ``Cancelled``, pickled back to the parent), and one that Python 3.12's ``enum`` remakes as
``type(e)(str(e))`` when it lands while an Enum class is created (a signal during an import). The
command then ends with that signal's status and message, never 130 with the message doubled."""

from __future__ import annotations

import enum
import subprocess
import sys

import pytest

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


def test_a_cancellation_raised_while_an_enum_class_is_made_keeps_its_signal() -> None:
    clear_cancel()
    with pytest.raises(Cancelled) as caught:
        class Made(enum.Enum):  # a member's creation runs inside EnumType.__new__, as in an import
            ONE = 1

            def __new__(cls, value: int) -> Made:
                raise Cancelled("SIGTERM")
    clear_cancel()
    assert (caught.value.signal_name, caught.value.exit_status) == ("SIGTERM", 143)
    assert (caught.value.message, caught.value.details) == ("cancelled by SIGTERM", {"signal": "SIGTERM"})


@pytest.mark.parametrize("name", ["SIGTERM", "SIGINT"])
def test_a_cancellation_rebuilt_from_its_own_message_is_the_same(name: str) -> None:
    first = Cancelled(name)
    again = type(first)(str(first))
    clear_cancel()
    assert (again.signal_name, again.message, again.exit_status) == (name, first.message, first.exit_status)
