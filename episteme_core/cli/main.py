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
from episteme_core.errors import Cancelled, EpistemeError

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
    """SIGTERM becomes ``Cancelled`` (exit 143) so locks are released and temp files removed."""

    def __init__(self) -> None:
        self.received: str | None = None

    def install(self) -> None:
        signal.signal(signal.SIGTERM, self._handle)
        # SIGINT raises KeyboardInterrupt (exit 130) even when the process inherited it ignored,
        # as a job started with '&' from a script does: a writer must never ignore a cancellation.
        signal.signal(signal.SIGINT, signal.default_int_handler)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if self.received:  # a second signal: leave now
            os._exit(143 if name == "SIGTERM" else 130)
        self.received = name
        raise Cancelled(name)


def _prescan(argv: Sequence[str]) -> tuple[bool, bool]:
    head = list(argv[: argv.index("--")]) if "--" in argv else list(argv)
    return "--json" in head, "--debug" in head


def run(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return the exit status (``main`` exits with it)."""
    from episteme_core.cli.progress import Progress

    argv = list(sys.argv[1:] if argv is None else argv)
    as_json, debug = _prescan(argv)
    if argv in (["--version"], ["--version", "--json"], ["--json", "--version"]):
        # The fast path: no plugins to load for the version.
        data = {"name": PROG, "version": __version__}
        return _emit_success(as_json, None, data, f"{PROG} {__version__}\n", [])
    signals = _Signals()
    signals.install()
    command_name: str | None = None
    warnings: list[dict[str, Any]] = []
    progress: Progress | None = None
    try:
        try:
            from episteme_core.kernel.loader import BUILTIN_COMPONENTS, get_plugins

            plugins = get_plugins()
            # a builtin command loads only itself (and later what it uses); else every command is
            builtin = selected_command(argv, BUILTIN_COMPONENTS["command"])
            command = plugins.find("command", builtin) if builtin else None
            commands = ({builtin: command} if builtin and command is not None else
                        {name: c.obj for name, c in plugins.of("command").items()})
            parser = build_parser(commands, only=selected_command(argv, commands))
            args = parser.parse_args(argv)
            as_json, debug = args.json, args.debug
            if args.version:
                text = f"{PROG} {__version__}\n"
                return _emit_success(as_json, None, {"name": PROG, "version": __version__}, text, [])
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
            outcome = commands[command_name].run(args, ctx)
            if progress is not None:
                progress.close()
            _plugin_warnings(warnings)
            return _emit_success(as_json, command_name, outcome.data, outcome.text, warnings)
        except KeyboardInterrupt as exc:
            raise Cancelled("SIGINT") from exc
    except SystemExit as exc:  # --help
        return exc.code if isinstance(exc.code, int) else 0
    except EpistemeError as known:
        _plugin_warnings(warnings)
        return _emit_failure(as_json, debug, command_name, known, warnings, progress)
    except KeyboardInterrupt:
        return _emit_failure(as_json, debug, command_name, Cancelled("SIGINT"), warnings, progress)
    except Exception as exc:
        error = EpistemeError("INTERNAL_ERROR", f"{type(exc).__name__}: {exc}")
        error.__cause__ = exc
        return _emit_failure(as_json, debug, command_name, error, warnings, progress)


def _plugin_warnings(warnings: list[dict[str, Any]]) -> None:
    """Add the warnings of plugins a command loaded while it ran (it loads components on demand)."""
    from episteme_core.kernel.loader import get_plugins

    if get_plugins.cache_info().currsize:
        warnings.extend(w for w in get_plugins().warnings() if w not in warnings)


def _emit_success(
    as_json: bool, command: str | None, data: dict[str, Any], text: str,
    warnings: list[dict[str, Any]],
) -> int:
    from episteme_core.cli import envelope

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
    warnings: list[dict[str, Any]], progress: Any,
) -> int:
    from episteme_core.cli import envelope

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


def main() -> NoReturn:
    sys.exit(run())


if __name__ == "__main__":
    main()
