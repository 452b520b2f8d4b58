"""Errors as values with a stable code; the one table that maps codes to exit statuses."""

from __future__ import annotations

from typing import Any

# code -> (exit status, retryable)
ERROR_CODES: dict[str, tuple[int, bool]] = {
    "INTERNAL_ERROR": (1, False),
    "INVALID_USAGE": (2, False),
    "INVALID_INPUT": (3, False),
    "STALE_INDEX": (3, False),
    "SOURCE_UNAVAILABLE": (4, True),
    "LIMIT_EXCEEDED": (5, False),
    "PROCESSING_FAILED": (6, False),
    "RESOURCE_BUSY": (7, True),
    "CANCELLED": (130, False),
}

SIGNAL_EXIT = {"SIGINT": 130, "SIGTERM": 143}


class EpistemeError(Exception):
    """A failure the user can act on: a stable code, a message for people, details for machines."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        details: dict[str, Any] | None = None,
        hint: str | None = None,
    ) -> None:
        if code not in ERROR_CODES:
            raise ValueError(f"unknown error code {code!r}")
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details
        self.hint = hint

    @property
    def exit_status(self) -> int:
        if self.code == "CANCELLED" and self.details:
            return SIGNAL_EXIT.get(str(self.details.get("signal")), 130)
        return ERROR_CODES[self.code][0]

    @property
    def retryable(self) -> bool:
        return ERROR_CODES[self.code][1]

    def body(self) -> dict[str, Any]:
        """The error as every interface reports it (the envelope's ``error``, an MCP tool error)."""
        body: dict[str, Any] = {
            "code": self.code,
            "message": self.message,
            "retryable": self.retryable,
            "details": self.details,
        }
        if self.hint:
            body["hint"] = self.hint
        return body


_cancel_signal: list[str] = []  # the signal that asked this process's run to stop, once one did


def request_cancel(signal_name: str) -> None:
    """Remember that ``signal_name`` asked the run to stop (the signal handler calls this)."""
    if not _cancel_signal:
        _cancel_signal.append(signal_name)


def cancel_requested() -> str | None:
    """The signal that asked the run to stop, or None.

    A signal handler raises where the program happens to be; code that turns exceptions into
    diagnostics (a damaged PDF page) could swallow it. Long loops check this between items.
    """
    return _cancel_signal[0] if _cancel_signal else None


def raise_if_cancelled() -> None:
    """Raise ``Cancelled`` when a signal asked the run to stop: a commit checks it first, so a
    cancellation that some code swallowed still commits nothing."""
    name = cancel_requested()
    if name is not None:
        raise Cancelled(name)


def clear_cancel() -> None:
    """Forget a past request (a new run in the same process starts afresh)."""
    _cancel_signal.clear()


def accept_stop_signal() -> str | None:
    """A service that runs until SIGTERM or SIGINT calls this once the signal has stopped it: the
    command then ends with its own outcome (exit 0) instead of ``CANCELLED``; the signal's name, or None."""
    name = cancel_requested()
    clear_cancel()
    return name


_CANCELLED_BY = "cancelled by "


class Cancelled(EpistemeError):
    """Raised when SIGINT or SIGTERM arrives; exit 130 or 143.

    Code that rebuilds an exception from its message gets the same cancellation back: unpickling
    calls ``Cancelled("cancelled by SIGTERM")`` (a worker's error in the parent), and so does Python
    3.12's ``enum``, which remakes an error raised while an Enum class is created (a signal landing
    in an import) as ``type(e)(str(e))``; read as a signal's name, that text ended the run 130."""

    def __init__(self, signal_name: str) -> None:
        signal_name = signal_name.removeprefix(_CANCELLED_BY)
        super().__init__(
            "CANCELLED", f"{_CANCELLED_BY}{signal_name}", details={"signal": signal_name}
        )
        self.signal_name = signal_name
        request_cancel(signal_name)
