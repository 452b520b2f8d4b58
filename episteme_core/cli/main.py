"""``episteme``: parse, dispatch to a registered command, render text or the envelope, exit."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence
from types import FrameType
from typing import Any, NoReturn

from episteme_core import __version__
from episteme_core.errors import Cancelled, EpistemeError, cancel_requested, clear_cancel, request_cancel
from episteme_core.store.faults import signal_at

PROG = "episteme"
DESCRIPTION = (
    "Collect sources, extract evidence that can be cited to the exact byte, and retrieve it "
    "verbatim. Never summarises: every answer is the source's own words with a citation."
)


def add_global_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    """The options every command takes; on subcommands they default to 'not given'."""

    def default(value: Any) -> Any:
        return argparse.SUPPRESS if suppress else value

    group = parser.add_argument_group("global options")
    group.add_argument(
        "--json", action="store_true", default=default(False),
        help="print exactly one JSON envelope (stdout on success, stderr on failure)",
    )
    group.add_argument(
        "--debug", action="store_true", default=default(False),
        help="add the cause chain (tracebacks) to errors",
    )
    group.add_argument(
        "--progress", choices=("auto", "always", "never"), default=default("auto"),
        help="progress on stderr: auto = only on a terminal (default auto)",
    )
    group.add_argument(
        "--home", metavar="DIR", default=default(None),
        help="the home holding all state (default $EPISTEME_HOME, else ~/.local/share/episteme)",
    )


GLOBAL_WITH_VALUE = ("--home", "--progress")


def selected_command(argv: Sequence[str], commands: dict[str, Any]) -> str | None:
    """The command name ``argv`` invokes (skipping global options), if it names a known one."""
    skip = False
    for token in argv:
        if skip:
            skip = False
        elif token in GLOBAL_WITH_VALUE:
            skip = True
        elif token == "--":
            return None
        elif not token.startswith("-"):
            return token if token in commands else None
    return None


def build_parser(commands: dict[str, Any], only: str | None = None) -> argparse.ArgumentParser:
    """The whole parser: global options, then one subparser per registered command.

    With ``only`` (a known command the arguments name), just that command's subparser is built:
    creating and configuring every other command's parser costs a new process milliseconds it does
    not need. Without it (``--help``, usage errors, the reference page) every command is built.
    """
    from episteme_core.cli.parser import ArgumentParser

    formatter = argparse.RawDescriptionHelpFormatter
    parser = ArgumentParser(prog=PROG, description=DESCRIPTION, formatter_class=formatter)
    parser.add_argument(
        "--version", action="store_true", help="print the version and exit"
    )
    add_global_options(parser, suppress=False)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=ArgumentParser)
    for name in sorted(commands) if only is None else [only]:
        command = commands[name]
        child = sub.add_parser(
            name,
            help=command.help,
            description=command.description or command.help,
            formatter_class=formatter,
        )
        command.configure(child)
        add_global_options(child, suppress=True)
    return parser


class _Signals:
    """SIGTERM becomes ``Cancelled`` (exit 143), SIGINT ``KeyboardInterrupt`` (130), so locks are
    released and temp files removed. Once the outcome is being written (``quiet``), a signal is only
    recorded: the command is done, and its one envelope is not cut short."""

    def __init__(self) -> None:
        self.received: str | None = None
        self.quiet = False

    def install(self) -> None:
        signal.signal(signal.SIGTERM, self._handle)
        # SIGINT raises KeyboardInterrupt (exit 130) even when the process inherited it ignored,
        # as a job started with '&' from a script does: a writer must never ignore a cancellation.
        signal.signal(signal.SIGINT, self._interrupt)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if self.received:  # a second signal: leave now
            os._exit(143 if name == "SIGTERM" else 130)
        self.received = name
        if self.quiet:
            return
        raise Cancelled(name)

    def _interrupt(self, signum: int, frame: FrameType | None) -> None:
        if self.received:
            os._exit(130)
        self.received = "SIGINT"
        request_cancel("SIGINT")
        if self.quiet:
            return
        raise KeyboardInterrupt


def _prescan(argv: Sequence[str]) -> tuple[bool, bool]:
    head = list(argv[: argv.index("--")]) if "--" in argv else list(argv)
    return "--json" in head, "--debug" in head


def _swallowed() -> None:
    """A signal asked the command to stop, and some code turned its exception into another or into
    nothing (a library that catches ``Exception``): the command is cancelled all the same."""
    name = cancel_requested()
    if name is not None:
        raise Cancelled(name)


def run(argv: Sequence[str] | None = None, *, pending: Sequence[str] = ()) -> int:
    """Run the CLI and return the exit status (``main`` exits with it).

    The signal handlers are installed first, so a SIGTERM or SIGINT at any later moment (loading
    plugins, parsing, running) ends the command with ``CANCELLED`` (143 or 130), never as a plugin's
    failure, a usage error or success; ``pending`` holds a signal the launcher (``__main__``) noted
    before, which cancels at once."""
    clear_cancel()
    signals = _Signals()
    as_json = debug = False
    command_name: str | None = None
    warnings: list[dict[str, Any]] = []
    progress: Any = None
    try:
        try:
            signals.install()
            argv = list(sys.argv[1:] if argv is None else argv)
            as_json, debug = _prescan(argv)
            if pending:
                signals.received = pending[0]
                raise Cancelled(pending[0])
            signal_at("start")
            from episteme_core.cli.progress import Progress

            if argv in (["--version"], ["--version", "--json"], ["--json", "--version"]):
                # The fast path: no plugins to load for the version.
                data = {"name": PROG, "version": __version__}
                return _emit_success(as_json, None, data, f"{PROG} {__version__}\n", [], signals)
            from episteme_core.kernel.loader import BUILTIN_COMPONENTS, get_plugins

            plugins = get_plugins()
            # a builtin command loads only itself (and later what it uses); else every command is
            builtin = selected_command(argv, BUILTIN_COMPONENTS["command"])
            command = plugins.find("command", builtin) if builtin else None
            commands = ({builtin: command} if builtin and command is not None else
                        {name: c.obj for name, c in plugins.of("command").items()})
            signal_at("plugins-loaded")
            _swallowed()
            parser = build_parser(commands, only=selected_command(argv, commands))
            try:
                args = parser.parse_args(argv)
            except (EpistemeError, SystemExit):
                _swallowed()  # a usage error or --help cut short by a signal is the signal's
                raise
            signal_at("parsed")
            as_json, debug = args.json, args.debug
            if args.version:
                text = f"{PROG} {__version__}\n"
                return _emit_success(as_json, None, {"name": PROG, "version": __version__}, text, [], signals)
            if not args.command:
                raise EpistemeError(
                    "INVALID_USAGE", "no command given", hint=f"Run '{PROG} --help'."
                )
            command_name = args.command
            warnings.extend(plugins.warnings())
            from episteme_core.kernel.context import Context
            from episteme_core.store.home import Home, resolve_home

            progress = Progress(args.progress, as_json, command_name)
            ctx = Context(
                command=command_name,
                home=Home(resolve_home(args.home)),
                plugins=plugins,
                progress=progress,
                as_json=as_json,
                debug=debug,
                warnings=warnings,
            )
            signal_at("command")
            outcome = commands[command_name].run(args, ctx)
            _swallowed()
            if progress is not None:
                progress.close()
            _plugin_warnings(warnings)
            return _emit_success(as_json, command_name, outcome.data, outcome.text, warnings, signals)
        except KeyboardInterrupt as exc:
            raise Cancelled("SIGINT") from exc
    except SystemExit as exc:  # --help
        return exc.code if isinstance(exc.code, int) else 0
    except BrokenPipeError:
        return _reader_left()
    except EpistemeError as known:
        if cancel_requested() is not None and known.code != "CANCELLED":
            known = Cancelled(str(cancel_requested()))
        _plugin_warnings(warnings)
        return _emit_failure(as_json, debug, command_name, known, warnings, progress, signals)
    except KeyboardInterrupt:
        return _emit_failure(as_json, debug, command_name, Cancelled("SIGINT"), warnings, progress, signals)
    except Exception as exc:
        name = cancel_requested()
        error = Cancelled(name) if name is not None else EpistemeError(
            "INTERNAL_ERROR", f"{type(exc).__name__}: {exc}")
        error.__cause__ = exc
        return _emit_failure(as_json, debug, command_name, error, warnings, progress, signals)


def _reader_left() -> int:
    """stdout's reader closed the pipe (``episteme query ... | head -1``): end quietly with 0, as
    command-line tools do for a reader that has read all it wanted; nothing goes to stderr, and the
    interpreter's last flush of stdout finds somewhere to go."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
    return 0


def _plugin_warnings(warnings: list[dict[str, Any]]) -> None:
    """Add the warnings of plugins a command loaded while it ran (it loads components on demand)."""
    from episteme_core.kernel.loader import get_plugins

    if get_plugins.cache_info().currsize:
        warnings.extend(w for w in get_plugins().warnings() if w not in warnings)


def _emit_success(
    as_json: bool, command: str | None, data: dict[str, Any], text: str,
    warnings: list[dict[str, Any]], signals: _Signals | None = None,
) -> int:
    from episteme_core.cli import envelope

    _swallowed()  # the last moment a signal cancels the command: after it, the outcome is written
    if signals is not None:
        signals.quiet = True
    if as_json:
        sys.stdout.write(envelope.dumps(envelope.success(command, data, warnings)) + "\n")
    else:
        for warning in warnings:
            sys.stderr.write(f"warning: {envelope.terminal_safe(warning['message'])}\n")
        if text:
            sys.stdout.write(envelope.terminal_safe(text if text.endswith("\n") else text + "\n"))
    sys.stdout.flush()
    return 0


def _emit_failure(
    as_json: bool, debug: bool, command: str | None, error: EpistemeError,
    warnings: list[dict[str, Any]], progress: Any, signals: _Signals | None = None,
) -> int:
    from episteme_core.cli import envelope

    if signals is not None:
        signals.quiet = True  # the one envelope is written whole
    if progress is not None:
        try:
            progress.update(command or "episteme", 0, None, "failed", error.message)
            progress.close()
        except Exception:
            pass
    if as_json:
        body = envelope.failure(command, error, warnings, debug=debug)
        sys.stderr.write(envelope.dumps(body) + "\n")
    else:
        for warning in warnings:
            sys.stderr.write(f"warning: {envelope.terminal_safe(warning['message'])}\n")
        sys.stderr.write(envelope.human_error(error, debug=debug))
    sys.stderr.flush()
    return error.exit_status


def main(pending: Sequence[str] = ()) -> NoReturn:
    """Run the CLI and exit with its status. Once the outcome is written, a late SIGTERM or SIGINT is
    ignored: the interpreter's own shutdown would otherwise die of it (its handlers gone by then) and
    report a finished command as killed."""
    status = run(pending=pending)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _forget_interrupted_string_code()
    sys.exit(status)


def _forget_interrupted_string_code() -> None:
    """Make CPython forget a KeyboardInterrupt that ended code it ran from a string.

    CPython marks the interpreter when code evaluated from a string (``exec``/``eval`` of source:
    the methods ``collections.namedtuple`` and ``dataclasses`` generate) ends with KeyboardInterrupt,
    even when a caller catches it, and under ``python -m`` it then kills the process with SIGINT as
    it exits. A SIGINT landing in such code while a module is imported thus turned a command that
    had written its cancellation (exit 130) into one killed by the signal. Each evaluation of a
    string clears the mark first, so one that ends normally leaves none."""
    eval("None")  # noqa: S307 - a constant: its one effect is the interpreter's mark cleared


if __name__ == "__main__":
    main()
