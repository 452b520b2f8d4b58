"""Each builtin tool's schema mirrors its CLI command: the same options (camelCase), the same defaults
and ranges, the same choices; and a plugin tool that is not valid is recognised as such."""

from __future__ import annotations

import argparse
import re
from typing import Any

import pytest

from episteme_core.serve.builtin_tools import builtin_tools
from episteme_core.serve.calls import tool_problem
from episteme_core.serve.tools import Tool

# options the server does not offer: it reads its own home (stage overrides) with the home's indexer
# (config.json's "indexer", opened once for every call), and takes no file
SERVER_ONLY_CLI = {"index", "chunks", "maxInputBytes", "indexer", "executor"}
RANGE = re.compile(r"\(default (-?\d+); (-?\d+)–(-?\d+)\)")


def _camel(flag: str) -> str:
    head, *rest = flag.lstrip("-").split("-")
    return head + "".join(part.capitalize() for part in rest)


def _parser(command: str) -> argparse.ArgumentParser:
    from episteme_core.cli.main import build_parser
    from episteme_core.kernel.loader import load_plugins

    commands = {name: c.obj for name, c in load_plugins().components["command"].items()}
    parser = build_parser(commands, only=command)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[command]  # type: ignore[no-any-return]


GLOBAL = {"help", "json", "debug", "progress", "home"}


@pytest.mark.parametrize("tool", builtin_tools(), ids=lambda t: t.name)
def test_the_schema_has_the_cli_options_with_their_bounds_and_choices(tool: Tool) -> None:
    parser = _parser(tool.name)
    properties: dict[str, Any] = tool.input_schema["properties"]
    offered = set()
    for action in parser._actions:
        name = action.dest if not action.option_strings else _camel(action.option_strings[-1])
        if action.dest in GLOBAL or name in SERVER_ONLY_CLI:
            continue
        name = {"ID[#N]": "reference"}.get(action.metavar or "", name)  # type: ignore[arg-type]
        offered.add(name)
        assert name in properties, f"{tool.name}: CLI option {name} is not in the schema"
        spec = properties[name]
        found = RANGE.search(action.help or "")
        if found:
            default, low, high = map(int, found.groups())
            assert (spec["type"], spec["default"], spec["minimum"], spec["maximum"]) == (
                "integer", default, low, high), name
        if action.choices:
            assert spec["enum"] == list(action.choices), name
        if action.nargs == 0:
            assert spec["type"] == "boolean", name
        if action.required or (not action.option_strings and action.nargs is None):
            assert name in tool.input_schema.get("required", []), name
    assert offered == set(properties), f"{tool.name}: schema arguments the CLI lacks"


def test_tool_problems_are_named() -> None:
    def run(arguments: dict[str, Any], call: Any) -> dict[str, Any]:
        return {}

    good = Tool(name="ok", description="d", input_schema={"type": "object"}, run=run)
    assert tool_problem(good) is None
    assert "name" in (tool_problem(Tool(name="no spaces", description="d", input_schema={"type": "object"},
                                        run=run)) or "")
    assert "type object" in (tool_problem(Tool(name="x", description="d", input_schema={"type": "array"},
                                               run=run)) or "")
    assert "not valid JSON Schema" in (tool_problem(Tool(name="x", description="d",
                                                         input_schema={"type": "object", "minProperties": -1},
                                                         run=run)) or "")
    assert "no run" in (tool_problem(type("T", (), {"name": "x", "description": "d",
                                                    "input_schema": {"type": "object"}})()) or "")
