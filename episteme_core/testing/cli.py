"""Run the real CLI in this process (``invoke``) or in a new one (``run_cli``), as a test would."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import attrs


@attrs.frozen
class CliResult:
    """What one CLI run did: exit status, stdout, stderr, and the parsed envelope (``--json``)."""

    exit_code: int
    stdout: str
    stderr: str

    @property
    def envelope(self) -> dict[str, Any]:
        """The one envelope of a ``--json`` run (stdout on success, stderr's last line on failure)."""
        text = self.stdout if self.exit_code == 0 else self.stderr.strip().splitlines()[-1]
        return json.loads(text)  # type: ignore[no-any-return]


@contextlib.contextmanager
def _environment(env: Mapping[str, str] | None) -> Iterator[None]:
    saved = dict(os.environ)
    try:
        if env:
            os.environ.update(env)
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def invoke(
    *args: str,
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
) -> CliResult:
    """Run the CLI in this process (fast); stdout/stderr captured, plugins loaded afresh."""
    from episteme_core.cli.main import run
    from episteme_core.kernel.loader import get_plugins

    get_plugins.cache_clear()
    out, err = io.StringIO(), io.StringIO()
    fake_stdin = io.TextIOWrapper(io.BytesIO(stdin or b""), encoding="utf-8")
    with _environment(env), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        saved_stdin = sys.stdin
        sys.stdin = fake_stdin
        try:
            code = run(list(args))
        finally:
            sys.stdin = saved_stdin
            get_plugins.cache_clear()
    return CliResult(code, out.getvalue(), err.getvalue())


def run_cli(
    args: Sequence[str],
    *,
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 120,
    cwd: str | os.PathLike[str] | None = None,
) -> CliResult:
    """Run ``python -m episteme_core ARGS`` as a new process, as a user would."""
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.run(
        [sys.executable, "-m", "episteme_core", *args],
        input=stdin or b"",
        capture_output=True,
        env=full_env,
        timeout=timeout,
        cwd=cwd,
    )
    return CliResult(
        proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")
    )
