"""Each hostile input of issue 12 runs under a 1 GiB address-space limit (``RLIMIT_AS``) in a real
process, and ends cleanly: exit 0, an envelope, a partial document naming the bound it met, and a
home that verifies. Before the bounds these took 2.3 to 4.7 GB."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from episteme_core.testing import validate

from . import hostile

GIB = 1 << 30


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (GIB, GIB))


def _episteme(*args: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-m", "episteme_core", "--json", *args], capture_output=True, timeout=600,
        preexec_fn=_limited, env={**os.environ, "OPENBLAS_NUM_THREADS": "1"},
    )
    text = proc.stdout if proc.returncode == 0 else proc.stderr
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    envelope = json.loads(text.decode().strip().splitlines()[-1])
    validate(envelope, "cli-envelope")
    return envelope["data"]  # type: ignore[no-any-return]


CASES: dict[str, tuple[Callable[[Path], Path], str, str]] = {
    "8 MB HTML of a million tiny paragraphs": (hostile.html_tiny_paragraphs, "text/html", "BLOCK_LIMIT"),
    "6 MB of one-letter paragraphs": (hostile.text_one_letter_paragraphs, "text/plain", "BLOCK_LIMIT"),
    "0.6 MB PDF with a 600 MB stream": (hostile.pdf_flate_bomb, "application/pdf", "STREAM_TOO_LARGE"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_hostile_input_is_extracted_and_chunked_within_1_gib(tmp_path: Path, home: Path, case: str) -> None:
    make, content_type, diagnostic = CASES[case]
    path = make(tmp_path)
    map_path = tmp_path / "map.json"
    map_path.write_text(json.dumps([{"sourceUrl": "https://example.org/hostile", "localPath": path.name,
                                     "contentType": content_type}]))
    _episteme("--home", str(home), "manual-ingest", "--map", str(map_path))
    [document] = _episteme("--home", str(home), "extract")["documents"]
    assert document["status"] == "partial" and diagnostic in document["diagnostics"]
    chunked = _episteme("--home", str(home), "chunk")
    assert chunked["documents"] == 1
    _episteme("--home", str(home), "index")
    _episteme("--home", str(home), "verify")
