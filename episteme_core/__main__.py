"""``python -m episteme_core`` and the console script ``episteme``: the CLI, with SIGTERM and SIGINT
caught from episteme's first instruction (until the CLI installs its own handlers a signal is only
noted, then it cancels the command: exit 143 or 130, ``CANCELLED``)."""

# The C module, not ``signal``: that one imports ``enum`` (milliseconds of Python code) before a
# handler could be set, and a SIGINT meanwhile would be a traceback through this file.
import _signal  # type: ignore[import-not-found]  # CPython's C module: no stub

_pending: list[str] = []


def _note(signum: int, frame: object) -> None:
    if _pending:  # a second signal: leave now
        import os

        os._exit(143 if signum == _signal.SIGTERM else 130)
    _pending.append("SIGTERM" if signum == _signal.SIGTERM else "SIGINT")


# The module's first statements: only the interpreter's own start-up comes before them.
_signal.signal(_signal.SIGTERM, _note)
_signal.signal(_signal.SIGINT, _note)


def main() -> None:
    """Run the CLI (which cancels at once for a signal noted meanwhile) and exit with its status."""
    from episteme_core.cli.main import main as cli

    cli(pending=_pending)


if __name__ == "__main__":
    main()
