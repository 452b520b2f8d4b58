"""A reader that closes stdout early (``episteme query ... | head -1``) ends the command quietly: exit
0 and nothing on stderr, as command-line tools do for a reader that read all it wanted."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from episteme_core.testing import invoke


def test_a_closed_stdout_pipe_ends_quietly(home: Path, tmp_path: Path) -> None:
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    (shelf / "book.txt").write_text("A book of evidence.\n\nMore evidence.\n")
    assert invoke("--home", str(home), "ingest", "books", str(shelf)).exit_code == 0
    for args in (["query", "--term", "evidence"], ["query", "--term", "evidence", "--json"],
                 ["show", "book:shelf/book"], ["sources", "--json"]):
        proc = subprocess.Popen([sys.executable, "-m", "episteme_core", "--home", str(home), *args],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=os.environ.copy())
        assert proc.stdout is not None and proc.stderr is not None
        # The reader is gone before the command writes (head -1 after its line, on a long answer): the
        # write meets a closed pipe whatever the pipe holds.
        proc.stdout.close()
        err = proc.stderr.read()
        code = proc.wait(timeout=120)
        assert code == 0 and err == b"", f"{args}: exit {code}: {err.decode()[-600:]}"
