"""Render ``docs/cli.md`` from the parser itself, so the reference can never drift from the CLI.

``python -m episteme_core.cli.reference > docs/cli.md`` regenerates it; a test fails when it is stale.
Only the builtins are documented here (plugins document their own commands), so the page does not
depend on what happens to be installed.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator

HEADER = """# CLI reference

Generated from the parser by `python -m episteme_core.cli.reference > docs/cli.md`; do not edit by
hand (a test fails when this page and the parser differ). Every command also takes the global
options `--json`, `--debug`, `--progress` and `--home`, before or after the command name.
"""


def _walk(parser: argparse.ArgumentParser, path: list[str]) -> Iterator[tuple[list[str], str]]:
    yield path, parser.format_help()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in sorted(action.choices.items()):
                yield from _walk(child, [*path, name])


def render() -> str:
    """The whole reference page for the builtin commands."""
    saved = {key: os.environ.get(key) for key in ("COLUMNS", "EPISTEME_LOAD_PLUGINS")}
    os.environ["COLUMNS"] = "100"
    os.environ["EPISTEME_LOAD_PLUGINS"] = ""
    try:
        from episteme_core.cli.main import build_parser
        from episteme_core.kernel.loader import get_plugins

        get_plugins.cache_clear()
        plugins = get_plugins()
        commands = {name: c.obj for name, c in plugins.of("command").items()}
        parts = [HEADER]
        for path, text in _walk(build_parser(commands), ["episteme"]):
            parts.append(f"\n## `{' '.join(path)}`\n\n```text\n{text.rstrip()}\n```\n")
        return "".join(parts)
    finally:
        get_plugins.cache_clear()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


if __name__ == "__main__":
    print(render(), end="")
