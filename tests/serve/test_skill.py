"""Every command that ``skill/SKILL.md`` and ``docs/agents.md`` show runs, in order, against a home built
from ``examples/``: ``episteme`` commands as new processes (with ``--json``, the envelope says ok),
``episteme serve`` until it answers (on 127.0.0.1 and any free port: tests never listen beyond
loopback), the token recipe and the skill's install link in a scratch ``$HOME``; ``claude mcp add``
lines (Claude Code is not installed here) are checked for the address the server listens on."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from .conftest import ROOT, child_env, start_server

DOCS = [ROOT / "skill" / "SKILL.md", ROOT / "docs" / "agents.md"]
DEFAULT_URL = "http://127.0.0.1:18113/mcp"


def shown_commands(path: Path) -> list[str]:
    """The lines of the page's ```sh blocks."""
    blocks = re.findall(r"```sh\n(.*?)```", path.read_text("utf-8"), re.S)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


def test_the_skill_has_claude_code_front_matter() -> None:
    text = DOCS[0].read_text("utf-8")
    front = re.match(r"^---\nname: (\S+)\ndescription: (.+?)\n---\n", text, re.S)
    assert front and front.group(1) == "episteme" and len(front.group(2)) < 1024


@pytest.mark.parametrize("page", DOCS, ids=lambda p: p.name)
def test_every_command_the_page_shows_runs_against_the_examples(page: Path, tmp_path: Path) -> None:
    home, user = tmp_path / "home", tmp_path / "user"
    user.mkdir()
    env = child_env({"EPISTEME_HOME": str(home), "HOME": str(user)})
    commands = shown_commands(page)
    assert any(c.startswith("episteme ask") for c in commands) and any("serve" in c for c in commands)
    for line in commands:
        expanded = line.replace("<repo>", str(ROOT)).replace("~/", f"{user}/")
        if line.startswith("episteme serve"):
            _serve(expanded, home, env)
        elif line.startswith("episteme "):
            args = shlex.split(expanded)[1:]
            proc = subprocess.run([sys.executable, "-m", "episteme_core", *args], cwd=ROOT, env=env,
                                  capture_output=True, text=True, timeout=300)
            assert proc.returncode == 0, (line, proc.stderr[-2000:])
            if "--json" in args:
                assert json.loads(proc.stdout)["ok"] is True
        elif line.startswith("claude mcp add"):
            args = shlex.split(line)
            assert args[3:5] == ["--transport", "http"] and args[5] == "episteme"
            assert args[6] == DEFAULT_URL or re.fullmatch(r"http://[A-Z]+:18113/mcp", args[6]), line
        elif line.startswith(("umask", "ln -s")):
            (user / ".claude" / "skills").mkdir(parents=True, exist_ok=True)
            subprocess.run(["bash", "-c", expanded], cwd=ROOT, env=env, check=True, timeout=60)
        else:
            raise AssertionError(f"{page.name} shows a command this test does not know: {line}")
    if any(line.startswith("ln -s") for line in commands):
        installed = user / ".claude" / "skills" / "episteme" / "SKILL.md"
        assert installed.read_text("utf-8") == DOCS[0].read_text("utf-8")


def _serve(line: str, home: Path, env: dict[str, str]) -> None:
    """Run a shown ``episteme serve`` on loopback and a free port; it must answer (with its token)."""
    args = shlex.split(line)[2:]
    token_file = args[args.index("--token-file") + 1] if "--token-file" in args else None
    options: list[str] = []
    skip = False
    for i, arg in enumerate(args):
        if skip:
            skip = False
        elif arg in ("--host", "--port"):
            skip = True
            assert args[i + 1] in ("0.0.0.0", "127.0.0.1", "18113"), line
        else:
            options.append(arg)
    served = start_server(home, *options, env=env)
    try:
        headers = {"Authorization": f"Bearer {Path(token_file).read_text().strip()}"} if token_file else {}
        listed = httpx.post(served.url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                            headers={"Accept": "application/json, text/event-stream", **headers})
        assert listed.status_code == 200, listed.text
        assert {t["name"] for t in listed.json()["result"]["tools"]} >= {"query", "ask", "show"}
    finally:
        assert served.stop() == 143


def test_the_quotation_the_skill_gives_is_what_show_prints(tmp_path: Path) -> None:
    from .conftest import build_example_home, cli_data

    text = DOCS[0].read_text("utf-8")
    quote = re.search(r'> "(.+?)" \((\S+), snapshot (\w+)\)', text, re.S)
    assert quote
    home = build_example_home(tmp_path / "home")
    shown = cli_data(home, "show", quote.group(2))
    assert " ".join(shown["paragraph"]["text"].split()) == " ".join(quote.group(1).replace("\n>", "").split())
    # The snapshot id is not compared: a book's record time is its file's mtime (no front matter), so
    # the id of the same example differs between checkouts; the page shows its form.
    assert re.fullmatch(r"[0-9a-f]{12}", quote.group(3))
    assert re.fullmatch(r"[0-9a-f]{64}", shown["citation"]["snapshotId"])


def test_the_default_address_is_the_one_the_snippets_use() -> None:
    from episteme_core.serve.app import DEFAULT_HOST, DEFAULT_PORT

    assert f"http://{DEFAULT_HOST}:{DEFAULT_PORT}/mcp" == DEFAULT_URL
    assert os.path.isdir(ROOT / "skill")
