"""The MCP stack loads only when the server runs: ``episteme --help`` and ``serve --help`` stay fast."""

from __future__ import annotations

import json
import subprocess
import sys

SERVER_STACK = ("mcp", "mcp_types", "starlette", "uvicorn", "pydantic", "anyio", "jsonschema", "httpx2",
                "episteme_core.serve.mcp", "episteme_core.serve.app", "episteme_core.serve.builtin_tools")

_PROBE = """
import contextlib, io, json, sys
from episteme_core.cli.main import run
with contextlib.redirect_stdout(io.StringIO()):
    code = run(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def _modules_after(*args: str) -> set[str]:
    proc = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, check=True)
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["code"] == 0
    return set(result["modules"])


def test_help_and_plugins_do_not_import_the_mcp_stack() -> None:
    for args in (["--help"], ["serve", "--help"], ["plugins"]):
        loaded = _modules_after(*args)
        heavy = sorted(m for m in SERVER_STACK if m in loaded)
        assert not heavy, (args, heavy)
