"""Every command of the plugin's README runs, as written, in a shell: a README command that fails is a
failing test. Also the help that says what a command reads."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from helpers import fixture_graph, write_graph

from episteme_core.testing import invoke

README = Path(__file__).resolve().parents[1] / "README.md"
NOT_RUN = ("pip install ",)  # installing is what the test environment already did


def readme_commands() -> list[str]:
    """The command lines of the README's sh block, comments dropped."""
    block = re.search(r"```sh\n(.*?)```", README.read_text("utf-8"), re.DOTALL)
    assert block, "the README has no sh block"
    lines = [re.sub(r"\s+#\s.*$", "", line).strip() for line in block.group(1).splitlines()]
    return [line for line in lines if line and not line.startswith(NOT_RUN)]


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding what the README's commands name, and a home whose index knows the term the
    README queries."""
    root = tmp_path_factory.mktemp("readme")
    (root / "uri.txt").write_text(
        "A percent-encoded byte is written as a percent sign and two hexadecimal digits.\n", "utf-8"
    )
    (root / "map.json").write_text(
        json.dumps(
            [
                {
                    "sourceUrl": "https://example.org/uri.txt",
                    "localPath": "uri.txt",
                    "contentType": "text/plain",
                }
            ]
        ),
        "utf-8",
    )
    result = invoke("--home", str(root / "home"), "pipeline", "--map", str(root / "map.json"))
    assert result.exit_code == 0, result.stderr
    contextual = fixture_graph("contextual")
    write_graph(root / "notes.knowledge.json", contextual)
    write_graph(root / "base.knowledge.json", contextual)
    incoming = {**contextual, "open_questions": [*contextual["open_questions"], "What changed?"]}
    write_graph(root / "incoming.knowledge.json", incoming)
    (root / "notes").mkdir()
    (root / "notes" / "field.md").write_text("# Field notes\n\nThe tide turned at dawn.\n", "utf-8")
    return root


def _environment(sandbox: Path) -> dict[str, str]:
    bin_dir = str(Path(sys.executable).parent)
    return {
        **os.environ,
        "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
        "EPISTEME_HOME": str(sandbox / "home"),
        "EPISTEME_LOAD_PLUGINS": "graph",
    }


def test_the_readme_names_every_subcommand() -> None:
    from episteme_graph.commands import SUBCOMMANDS

    named = {name for line in readme_commands() for name in re.findall(r"episteme graph (\w+)", line)}
    assert named == set(SUBCOMMANDS), set(SUBCOMMANDS) ^ named


@pytest.mark.parametrize("line", [line for line in readme_commands() if " graph view " not in line])
def test_a_readme_command_runs_as_written(sandbox: Path, line: str) -> None:
    proc = subprocess.run(
        ["bash", "-o", "pipefail", "-c", line],
        cwd=sandbox,
        env=_environment(sandbox),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, (line, proc.stderr)
    if "graph evidence" in line:
        assert '"id": "ev-' in proc.stdout or "ev-" in proc.stdout, proc.stdout


def test_the_readme_view_command_serves(sandbox: Path) -> None:
    """``graph view`` runs until a signal: started as written (with ``--port 0``, so the test takes no
    fixed port), its page fetched, then stopped."""
    (line,) = [line for line in readme_commands() if " graph view " in line]
    proc = subprocess.Popen(
        ["bash", "-c", f"exec {line} --port 0"],
        cwd=sandbox,
        # faulthandler: a server that outlives its SIGTERM is stopped with SIGABRT, which then
        # prints every thread's stack (what it was stuck in) for the failure below
        env={**_environment(sandbox), "PYTHONFAULTHANDLER": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        match = re.search(r"(http://127\.0\.0\.1:\d+/)", proc.stderr.readline())
        assert match
        with urllib.request.urlopen(match.group(1), timeout=10) as response:  # noqa: S310 - loopback
            assert response.status == 200 and b"<html" in response.read().lower()
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            status = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGABRT)
            _, stderr = proc.communicate(timeout=30)
            pytest.fail(f"graph view still ran 30 s after SIGTERM; its threads:\n{stderr[-6000:]}")
    assert status == 143


def test_evidence_help_says_it_reads_query_output_not_a_graph() -> None:
    result = invoke("graph", "evidence", "--help")
    assert result.exit_code == 0
    assert "not a graph" in result.stdout and "from a graph" not in result.stdout
    assert "query or ask output" in result.stdout
