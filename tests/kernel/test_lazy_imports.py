"""Heavy libraries load only when a command needs them, so `episteme --help` starts fast (under 150 ms).

The speed itself is measured in bench/startup.py, never asserted; this test guards the cause.
"""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("httpx", "html5lib", "pdfplumber", "numpy", "scipy", "bm25s", "warcio", "rich",
         "jsonschema", "defusedxml", "importlib.metadata", "cattrs", "dask", "distributed",
         "concurrent.futures.process")

_PROBE = """
import contextlib, io, json, sys
from episteme_core.cli.main import run
with contextlib.redirect_stdout(io.StringIO()):
    code = run(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def _modules_after(*args: str) -> set[str]:
    proc = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True, text=True,
                          check=True)
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["code"] == 0
    return set(result["modules"])


def test_help_and_version_import_no_heavy_library() -> None:
    for args in (["--help"], ["--version"], ["query", "--help"], ["index", "--help"], ["ask", "--help"]):
        loaded = _modules_after(*args)
        assert not {m for m in HEAVY if m in loaded}, (args, {m for m in HEAVY if m in loaded})


def test_a_writing_command_finds_libc_without_starting_a_process(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Durability (``syncfs``) and a build's heap trim reach libc through the process's own symbols:
    ``ctypes.util.find_library`` would run ``ldconfig -p`` in a child process on every write."""
    loaded = _modules_after("--home", str(tmp_path / "home"), "init")
    assert "ctypes" in loaded and "ctypes.util" not in loaded and "subprocess" not in loaded
